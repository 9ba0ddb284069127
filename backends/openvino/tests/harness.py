"""The shared test harness: export, lower, write a .pte to a file, load it with
executorch.runtime, run several inputs through one loaded method, compare with eager."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from executorch.exir import EdgeCompileConfig, ExecutorchProgramManager, to_edge, to_edge_transform_and_lower
from executorch.exir.backend.backend_api import to_backend
from executorch.exir.lowered_backend_module import LoweredBackendModule
from executorch.runtime import Method, Runtime
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs
from executorch_openvino.edge_graph.nodes import op_name

Inputs = Tuple[Any, ...]


def cpu_runs_bf16() -> bool:
    """Whether this CPU has bfloat16 units; without them OpenVINO runs a bf16 request in f32."""
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


NO_BF16_REASON = "this CPU has no bfloat16 units: OpenVINO runs bf16 requests in f32"


def cpu_has_8_bit_dot_products() -> bool:
    """Whether this x86 CPU has VNNI or AMX, where OpenVINO's 8-bit kernels and dynamic quantization run."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(flag in flags.split() for flag in ("avx512_vnni", "avx_vnni", "amx_int8"))


NO_8_BIT_DOT_PRODUCTS_REASON = "this CPU has no VNNI or AMX: OpenVINO does not quantize activations on it"


def default_tolerance(dtype: torch.dtype) -> Tuple[float, float]:
    """(rtol, atol) for results computed in float32, or exact for integers and bool."""
    if dtype in (torch.float32, torch.float64):
        return 1e-5, 1e-5
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 1e-2
    return 0.0, 0.0


@dataclass
class LoweredProgram:
    manager: ExecutorchProgramManager
    path: Path
    # ExecuTorch's Method keeps neither its Program nor the bytes a Program was read
    # from alive: the programs that load_method reads live as long as this object.
    _programs: List[Any] = field(default_factory=list, repr=False)

    def delegated_ops(self) -> List[str]:
        """Names of the ops inside our delegates, such as "aten.add.Tensor"."""
        names = []
        graph_module = self.manager.exported_program().graph_module
        for module in graph_module.modules():
            if isinstance(module, LoweredBackendModule) and module.backend_id == BACKEND_ID:
                for node in module.original_module.graph.nodes:
                    if node.op == "call_function":
                        names.append(op_name(node))
        return names

    def cpu_ops(self) -> List[str]:
        """Names of the ops ExecuTorch runs itself, such as "aten::sin"."""
        plan = self.manager.executorch_program.execution_plan[0]
        return [operator.name + (f".{operator.overload}" if operator.overload else "") for operator in plan.operators]

    def delegate_input_counts(self) -> List[int]:
        """How many values each delegate call takes, in graph order."""
        graph = self.manager.exported_program().graph
        return [
            len(node.args) - 1
            for node in graph.nodes
            if node.op == "call_function" and "executorch_call_delegate" in str(node.target)
        ]

    def blobs(self) -> List[Any]:
        """Our delegates' processed blobs (blob.read_blob views), in graph order."""
        from executorch_openvino.serialization.blob import read_blob

        return [
            read_blob(bytes(module.processed_bytes))
            for module in self.manager.exported_program().graph_module.modules()
            if isinstance(module, LoweredBackendModule) and module.backend_id == BACKEND_ID
        ]

    def openvino_models(self) -> List[Any]:
        """The OpenVINO models inside our delegates, read back from their blobs, in graph order."""
        import numpy as np
        import openvino as ov

        core = ov.Core()
        models = []
        for blob in self.blobs():
            weights = ov.Tensor(np.frombuffer(blob.ir_weights, dtype=np.uint8).copy())
            models.append(core.read_model(blob.ir_xml.decode(), weights))
        return models

    def delegate_ids(self) -> List[str]:
        plan = self.manager.executorch_program.execution_plan[0]
        return [delegate.id for delegate in plan.delegates]

    def load_method(self, from_bytes: bool = False) -> Method:
        runtime = Runtime.get()
        program = runtime.load_program(self.path.read_bytes() if from_bytes else self.path)
        self._programs.append(program)
        return program.load_method("forward")


def runtime_weight_types(model: Any, layer_type: str) -> set:
    """The weight types ("i4", "u8", "f32") of `layer_type` layers ("FullyConnected",
    "Convolution") as OpenVINO's CPU plugin compiles `model` at f32."""
    import openvino as ov

    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return {
        op.input(1).get_element_type().get_type_name()
        for op in compiled.get_runtime_model().get_ops()
        if op.get_rt_info()["layerType"].astype(str) == layer_type
    }


def lower(
    module: torch.nn.Module,
    example_inputs: Inputs,
    tmp_path: Path,
    *,
    compile_specs: Optional[list] = None,
    dynamic_shapes: Any = None,
    partitioner: Optional[OpenvinoPartitioner] = None,
    edge_compile_config: Optional[EdgeCompileConfig] = None,
    name: str = "model",
) -> LoweredProgram:
    """Exports `module`, lowers it with OpenvinoPartitioner and writes `name`.pte."""
    exported = torch.export.export(module, example_inputs, dynamic_shapes=dynamic_shapes)
    partitioner = partitioner or OpenvinoPartitioner(compile_specs)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner], compile_config=edge_compile_config)
    return _saved(edge.to_executorch(), tmp_path, name)


def _saved(manager: ExecutorchProgramManager, tmp_path: Path, name: str) -> LoweredProgram:
    """Writes the program to `name`.pte, which the tests load from the file."""
    path = tmp_path / f"{name}.pte"
    path.write_bytes(manager.buffer)
    return LoweredProgram(manager, path)


class _CallsLowered(torch.nn.Module):
    def __init__(self, lowered: LoweredBackendModule) -> None:
        super().__init__()
        self.lowered = lowered

    def forward(self, *args):
        return self.lowered(*args)


def lower_whole_program(
    module: torch.nn.Module,
    example_inputs: Inputs,
    tmp_path: Path,
    *,
    compile_specs: Optional[list] = None,
    dynamic_shapes: Any = None,
    name: str = "whole",
) -> LoweredProgram:
    """Lowers all of `module` with ``to_backend(BACKEND_ID, ...)``, no partitioner, and writes `name`.pte."""
    edge = to_edge(torch.export.export(module, example_inputs, dynamic_shapes=dynamic_shapes))
    lowered = to_backend(
        BACKEND_ID, edge.exported_program(), compile_specs if compile_specs is not None else openvino_compile_specs()
    )
    # The wrapper takes *args, so its dynamic shapes nest one level deeper.
    wrapper_shapes = None if dynamic_shapes is None else (tuple(dynamic_shapes),)
    manager = to_edge(
        torch.export.export(_CallsLowered(lowered), example_inputs, dynamic_shapes=wrapper_shapes)
    ).to_executorch()
    return _saved(manager, tmp_path, name)


def run(method: Method, inputs: Inputs) -> List[Any]:
    """Runs one call; the outputs are copied because the next call may reuse their memory."""
    outputs = method.execute(list(inputs))
    return [output.clone() if isinstance(output, torch.Tensor) else output for output in outputs]


def eager(module: torch.nn.Module, inputs: Inputs) -> List[Any]:
    with torch.no_grad():
        result = module(*copy.deepcopy(inputs))
    return list(result) if isinstance(result, (tuple, list)) else [result]


def assert_close(
    actual: Sequence[Any], expected: Sequence[Any], rtol: Optional[float] = None, atol: Optional[float] = None
) -> None:
    assert len(actual) == len(expected), f"{len(actual)} outputs, eager gives {len(expected)}"
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert got.dtype == want.dtype, f"output {index}: dtype {got.dtype}, eager {want.dtype}"
        assert got.shape == want.shape, f"output {index}: shape {tuple(got.shape)}, eager {tuple(want.shape)}"
        default_rtol, default_atol = default_tolerance(want.dtype)
        torch.testing.assert_close(
            got,
            want,
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
            equal_nan=True,  # a NaN where eager has one is eager's value
            msg=lambda text, index=index: f"output {index}: {text}",
        )


def bitwise_equal(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Same dtype, shape and values, NaN where NaN and the sign of every zero: for results
    PyTorch computes exactly (extremes, indices, selections, integers)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if not want.is_floating_point():
        return torch.equal(got, want)
    nan = torch.isnan(want)
    if not torch.equal(torch.isnan(got), nan):
        return False
    return torch.equal(got[~nan], want[~nan]) and torch.equal(torch.signbit(got[~nan]), torch.signbit(want[~nan]))


def check_against_eager(
    module: torch.nn.Module,
    input_sets: Sequence[Inputs],
    tmp_path: Path,
    *,
    compile_specs: Optional[list] = None,
    dynamic_shapes: Any = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    expect_delegated: Sequence[str] = (),
    from_bytes: bool = False,
) -> LoweredProgram:
    """Lowers `module` with the first input set, then runs every set on one loaded method.

    `expect_delegated` lists op names that must have run inside our delegate.
    """
    module = module.eval()
    lowered = lower(module, input_sets[0], tmp_path, compile_specs=compile_specs, dynamic_shapes=dynamic_shapes)
    assert BACKEND_ID in lowered.delegate_ids(), "nothing was delegated to OpenVINO"
    delegated = lowered.delegated_ops()
    for name in expect_delegated:
        assert name in delegated, f"{name} did not run in the OpenVINO delegate; it ran {delegated}"
    assert_runs_like_eager(module, lowered, input_sets, rtol=rtol, atol=atol, from_bytes=from_bytes)
    return lowered


def assert_runs_like_eager(
    module: torch.nn.Module,
    lowered: LoweredProgram,
    input_sets: Sequence[Inputs],
    *,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    from_bytes: bool = False,
) -> List[List[Any]]:
    """Runs every input set through one loaded method and compares each call with eager.

    Returns each call's outputs, for tests that check more (an exact copy, say).
    """
    assert len(input_sets) >= 2, "run at least two inputs: some OpenVINO bugs show from the second call"
    method = lowered.load_method(from_bytes=from_bytes)
    outputs = []
    for inputs in input_sets:
        got = run(method, inputs)
        assert_close(got, eager(module, inputs), rtol=rtol, atol=atol)
        outputs.append(got)
    return outputs


def program_with_blob(path: Path, tamper: Callable[[bytes], bytes]) -> bytes:
    """The .pte at `path` with its one delegate's blob replaced by tamper(blob), serialized
    again by ExecuTorch: a damaged or foreign program, made without monkeypatching."""
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    pte = deserialize_pte_binary(path.read_bytes())
    [delegate_data] = pte.program.backend_delegate_data
    delegate_data.data = tamper(bytes(delegate_data.data))
    return bytes(serialize_pte_binary(pte))


def planned_inputs(pte: Path, methods: Sequence[str]) -> Dict[str, List[int]]:
    """For each of `methods` in the .pte at `pte`, the value indices of its inputs that the
    program plans memory for (ExecuTorch copies a call's input into such memory)."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte.read_bytes()).program
    return {
        plan.name: [index for index in plan.inputs if plan.values[index].val.allocation_info is not None]
        for plan in program.execution_plan
        if plan.name in methods
    }


def model_in_blob(blob: bytes) -> Any:
    """The openvino.Model a blob carries, for a tamper function to change and write_blob again."""
    import numpy as np
    import openvino as ov
    from executorch_openvino.serialization.blob import read_blob

    parsed = read_blob(blob)
    weights = ov.Tensor(np.frombuffer(parsed.ir_weights, dtype=np.uint8).copy())
    return ov.Core().read_model(parsed.ir_xml.decode(), weights)


def with_compile_spec(buffer: bytes, key: str, value: bytes) -> bytes:
    """The program with `key` set to `value` in every delegate's compile specs, as a
    program written by another tool, or damaged, could carry it."""
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    pte = deserialize_pte_binary(buffer)
    for delegate in pte.program.execution_plan[0].delegates:
        for spec in delegate.compile_specs:
            if spec.key == key:
                spec.value = value
    return bytes(serialize_pte_binary(pte))
