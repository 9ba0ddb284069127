"""Profiling with ExecuTorch's devtools: a method loaded with an ETDump logs one event per
OpenVINO layer per call, which executorch.devtools.Inspector relates to the edge
operators the layer computes; a method loaded without one compiles without OpenVINO's
performance counters (docs/profiling.md)."""

from __future__ import annotations

import copy
import statistics
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
import torch
from executorch.devtools import Inspector
from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule
from executorch.runtime import Runtime
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs
from executorch_openvino.edge_graph.debug_handles import node_debug_handles
from executorch_openvino.edge_graph.nodes import op_name
from executorch_openvino.profiling import layer_metadata
from harness import eager, lower, run
from models import small_llama

RUNNER = Path(sys.executable).parent / "executorch-openvino-run"
CALLS = 3


class ConvThenLinear(torch.nn.Module):
    """Big enough that each OpenVINO layer takes a microsecond or more, which its counters need."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 32, 3, padding=1)
        self.linear = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.linear(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def _inputs(seed: int):
    return (torch.randn(1, 8, 64, 64, generator=torch.Generator().manual_seed(seed)),)


class Profiled:
    """A program lowered with an ETRecord and run CALLS times with an ETDump, read by the Inspector."""

    def __init__(self, folder: Path):
        self.model = ConvThenLinear().eval()
        exported = torch.export.export(self.model, _inputs(0))
        edge = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()], generate_etrecord=True)
        self.manager = manager = edge.to_executorch()
        edge_graph = manager.get_etrecord().edge_dialect_program.graph
        self.edge_ops = {op_name(node) for node in edge_graph.nodes if node.op == "call_function"}
        self.pte, self.etrecord, self.etdump = folder / "model.pte", folder / "model.etrecord", folder / "model.etdp"
        self.pte.write_bytes(manager.buffer)
        manager.get_etrecord().save(str(self.etrecord))
        program = Runtime.get().load_program(self.pte, enable_etdump=True)
        method = program.load_method("forward")
        self.outputs = [run(method, _inputs(seed)) for seed in range(CALLS)]
        program.write_etdump_result_to_file(str(self.etdump), str(folder / "debug.bin"))
        self.inspector = Inspector(
            etdump_path=str(self.etdump), etrecord=str(self.etrecord), delegate_metadata_parser=layer_metadata
        )

    def events(self):
        return [event for block in self.inspector.event_blocks for event in block.events]

    def layer_events(self):
        return [event for event in self.events() if event.is_delegated_op]

    def delegate_call(self):
        [call] = [event for event in self.events() if event.name == "DELEGATE_CALL"]
        return call


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> Profiled:
    return Profiled(tmp_path_factory.mktemp("profiled"))


def test_each_executed_openvino_layer_is_an_event_of_our_backend_in_every_call(profiled):
    layers = profiled.layer_events()
    assert layers, "the ETDump holds no event of the OpenVINO delegate"
    for layer in layers:
        assert layer.delegate_backend_name == BACKEND_ID
        assert len(layer.perf_data.raw) == CALLS, f"{layer.name}: {len(layer.perf_data.raw)} events in {CALLS} calls"
        assert all(time > 0 for time in layer.perf_data.raw), f"{layer.name}: {layer.perf_data.raw}"
    # Named as OpenVINO's compiled model names its layers: after the FX node they start from.
    assert any(layer.name.startswith("aten_convolution_default/") for layer in layers), [e.name for e in layers]


def test_the_layers_mean_times_add_up_to_at_most_the_delegate_calls_mean(profiled):
    # OpenVINO's CPU plugin keeps each layer's mean time over the calls so far, so
    # the last call's events hold the means over all calls.
    layers_mean = sum(layer.perf_data.raw[-1] for layer in profiled.layer_events())
    assert 0 < layers_mean <= statistics.mean(profiled.delegate_call().perf_data.raw)


def test_each_layer_event_maps_to_the_edge_operators_it_computes(profiled):
    mapped = set()
    for layer in profiled.layer_events():
        assert layer.debug_handles, f"{layer.name} maps to no edge operator"
        assert set(layer.op_types) <= profiled.edge_ops, f"{layer.name}: {layer.op_types}"
        mapped.update(layer.op_types)
    assert {"aten.convolution.default", "aten.relu.default", "aten.mean.dim", "aten.addmm.default"} <= mapped, mapped


def test_layer_metadata_names_the_layer_type_its_kernel_and_precision(profiled):
    kinds = set()
    for layer in profiled.layer_events():
        metadata = layer.delegate_debug_metadatas
        assert set(metadata) == {"node_type", "exec_type", "runtime_precision"}, metadata
        assert metadata["exec_type"] and metadata["runtime_precision"] == "f32", metadata
        kinds.add(metadata["node_type"])
    assert "Convolution" in kinds, kinds


def test_a_method_loaded_with_an_etdump_computes_what_eager_does(profiled):
    for seed, outputs in enumerate(profiled.outputs):
        torch.testing.assert_close(outputs[0], eager(profiled.model, _inputs(seed))[0], rtol=1e-4, atol=1e-5)


def _delegate_events_per_call(etdump: Path) -> List[int]:
    """How many events each call (a run in the ETDump) has that a delegate logged."""
    dump = deserialize_from_etdump_flatcc(etdump.read_bytes())
    counts = []
    for run_data in dump.run_data[1:]:  # the first run block is the method's load
        events = run_data.events or []
        counts.append(sum(1 for event in events if event.profile_event and event.profile_event.delegate_debug_id_str))
    return counts


@pytest.fixture(scope="module")
def llama_program(tmp_path_factory):
    """A one-layer Llama exported for any number of tokens, with the model of one token."""
    llama = small_llama(layers=1, dim=96, max_seq_len=32, enable_dynamic_shape=True)
    with torch.no_grad():
        return lower(
            llama,
            (torch.tensor([[1, 2, 3]]), {"input_pos": torch.tensor([0])}),
            tmp_path_factory.mktemp("llama"),
            compile_specs=openvino_compile_specs(one_token_model=True),
            dynamic_shapes=({1: torch.export.Dim("sequence", min=1, max=31)}, {"input_pos": None}),
        )


def test_decode_steps_on_the_model_of_one_token_log_their_layers(llama_program, tmp_path):
    loaded = Runtime.get().load_program(llama_program.path, enable_etdump=True)
    method = loaded.load_method("forward")
    run(method, (torch.tensor([[1, 2, 3]]), torch.tensor([0])))  # the prompt, on the dynamic model
    for position in (3, 4):  # decode steps, on the model of one token
        run(method, (torch.tensor([[5]]), torch.tensor([position])))
    loaded.write_etdump_result_to_file(str(tmp_path / "llama.etdp"), str(tmp_path / "debug.bin"))
    counts = _delegate_events_per_call(tmp_path / "llama.etdp")
    assert len(counts) == 3 and all(count > 0 for count in counts), counts


def test_a_method_loaded_through_the_model_cache_logs_its_layers(tmp_path):
    model = ConvThenLinear().eval()
    specs = openvino_compile_specs(cache_dir=str(tmp_path / "cache"))
    program = lower(model, _inputs(0), tmp_path, compile_specs=specs)
    run(program.load_method(), _inputs(0))  # fills the cache, without a tracer
    loaded = Runtime.get().load_program(program.path, enable_etdump=True)
    run(loaded.load_method("forward"), _inputs(1))  # imported from the cache
    loaded.write_etdump_result_to_file(str(tmp_path / "cached.etdp"), str(tmp_path / "debug.bin"))
    assert _delegate_events_per_call(tmp_path / "cached.etdp")[0] > 0


def test_the_runners_etdump_is_read_by_the_inspector(profiled, tmp_path):
    etdump = tmp_path / "runner.etdp"
    result = subprocess.run(
        [str(RUNNER), str(profiled.pte), "--iterations", "2", "--etdump", str(etdump)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert f"etdump: {etdump}" in result.stdout
    inspector = Inspector(etdump_path=str(etdump), etrecord=str(profiled.etrecord))
    layers = [event for block in inspector.event_blocks for event in block.events if event.is_delegated_op]
    assert layers and all(layer.delegate_backend_name == BACKEND_ID for layer in layers)
    assert all(len(layer.perf_data.raw) == 2 and layer.debug_handles for layer in layers)


def _blob_file(manager, folder: Path) -> Path:
    [module] = [
        module
        for module in manager.exported_program().graph_module.modules()
        if isinstance(module, LoweredBackendModule) and module.backend_id == BACKEND_ID
    ]
    path = folder / "blob.bin"
    path.write_bytes(bytes(module.processed_bytes))
    return path


@pytest.mark.parametrize("one_token", [False, True], ids=["one_model", "with_the_model_of_one_token"])
def test_a_delegate_loaded_without_a_tracer_compiles_without_performance_counters(
    profiled, llama_program, tmp_path, one_token
):
    from cpp_build import cpp_programs

    programs = cpp_programs()
    manager = llama_program.manager if one_token else profiled.manager
    command = [str(programs.layer_counters_test), str(_blob_file(manager, tmp_path))]
    result = subprocess.run(command + (["--one-token"] if one_token else []), capture_output=True, text=True)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "all checks passed" in result.stdout


def _graph_with_handles(module: torch.nn.Module) -> torch.fx.GraphModule:
    """`module` traced, each op node given the debug handle of its place (1, 2, ...)."""
    graph_module = torch.fx.symbolic_trace(module)
    for handle, node in enumerate((n for n in graph_module.graph.nodes if n.op == "call_function"), start=1):
        node.meta["debug_handle"] = handle
    return graph_module


class MulAddPermute(torch.nn.Module):
    def forward(self, x):
        return torch.permute(x * 2 + 1, (1, 0))


def test_a_node_a_pass_added_takes_the_handles_of_the_nodes_it_replaced():
    edge = _graph_with_handles(MulAddPermute())  # mul 1, add 2, permute 3
    prepared = copy.deepcopy(edge)
    graph = prepared.graph
    mul, add, permute = [node for node in graph.nodes if node.op == "call_function"]
    with graph.inserting_before(permute):
        fused = graph.call_function(torch.addcmul, (mul.args[0], mul.args[0], mul.args[0]))
    add.replace_all_uses_with(fused)
    graph.erase_node(add)
    graph.erase_node(mul)
    assert node_debug_handles(edge.graph, prepared)[fused.name] == (1, 2)


def test_a_node_a_pass_put_before_an_op_takes_the_handles_of_that_op():
    edge = _graph_with_handles(MulAddPermute())
    prepared = copy.deepcopy(edge)
    graph = prepared.graph
    add = [node for node in graph.nodes if node.op == "call_function"][1]
    with graph.inserting_before(add):
        cast = graph.call_function(torch.Tensor.float, (add.args[0],))
    add.replace_input_with(add.args[0], cast)
    assert node_debug_handles(edge.graph, prepared)[cast.name] == (2,)


class ThreeProductsOfOneInput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.queries, self.keys, self.values = (torch.nn.Linear(64, n, bias=False) for n in (64, 32, 32))

    def forward(self, x):
        return self.queries(x), self.keys(x), self.values(x)


def test_a_layer_that_joins_products_maps_to_the_operators_of_each():
    # Lowering joins products of one input into one layer (conversion/rewrites/sibling_products.py).
    exported = torch.export.export(ThreeProductsOfOneInput().eval(), (torch.randn(3, 64),))
    edge = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()])
    [lowered] = [m for m in edge.exported_program().graph_module.modules() if isinstance(m, LoweredBackendModule)]
    products = [node for node in lowered.original_module.graph.nodes if op_name(node) == "aten.mm.default"]
    [joined] = [name for name in lowered.meta["debug_handle_map"] if name.endswith("/MatMul")]

    assert len(products) == 3
    assert {node.meta["debug_handle"] for node in products} <= set(lowered.meta["debug_handle_map"][joined])
