"""Edge partition -> openvino.Model, through OpenVINO's PyTorch frontend."""

from __future__ import annotations

import copy
import logging
import re
from typing import Dict, List, Optional, Tuple

import sympy
import torch
from executorch.exir.passes.memory_format_ops_pass import DimOrderOpsRevertPass
from executorch.exir.passes.remove_graph_asserts_pass import RemoveGraphAssertsPass
from torch.export import ExportedProgram
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.frontend import FrontEndManager
from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

from .buffer_state import buffer_initial_values, buffer_writes, constant_inputs, keep_buffers_as_state
from .copy_rules import copy_source
from .dtypes import OPENVINO_TYPES
from .index_bounds import mark_index_inputs
from .kv_cache_growth import grow_kv_caches
from .op_support import DIM_ORDER_OPS, op_name
from .passes import run_passes
from .profiling import node_debug_handles
from .translators import conversion_extensions

logger = logging.getLogger(__name__)


def to_graph_module(edge_program: ExportedProgram) -> torch.fx.GraphModule:
    """The partition as a GraphModule whose weights are attributes, ready to convert.

    Its placeholders are the buffers the partition writes, then the user inputs;
    its outputs are the buffers' new values, then the user outputs. The user's
    program is not changed: the graph is copied.
    """
    graph_module = copy.deepcopy(edge_program.graph_module)
    graph = graph_module.graph
    constants = constant_inputs(edge_program)
    for node in list(graph.nodes):
        if node.op != "placeholder" or node.name not in constants:
            continue
        attribute = f"_weight_{node.name}"
        graph_module.register_buffer(attribute, constants[node.name])
        with graph.inserting_before(node):
            weight = graph.get_attr(attribute)
        weight.meta = dict(node.meta)
        node.replace_all_uses_with(weight)
        graph.erase_node(node)
    graph_module.recompile()
    return prepare_graph_module(graph_module)


def prepare_graph_module(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Turns ExecuTorch's dim-order ops back into aten ops, drops asserts and runs our passes."""
    # The revert pass retraces the whole graph: most of a small partition's conversion time.
    if any(op_name(node) in DIM_ORDER_OPS for node in graph_module.graph.nodes if node.op == "call_function"):
        graph_module = DimOrderOpsRevertPass()(graph_module).graph_module
    # ExecuTorch drops asserts before it runs a program; OpenVINO converts none of them.
    graph_module = RemoveGraphAssertsPass()(graph_module).graph_module
    return run_passes(graph_module)


def convert_with_frontend(
    graph_module: torch.fx.GraphModule, input_types: List[torch.dtype], input_shapes: List[List[int]]
) -> ov.Model:
    """Runs OpenVINO's PyTorch frontend on a prepared graph module (-1 marks a dynamic size).

    Raises OpenVINO's ``OpConversionFailure`` naming every node it could not convert.
    """
    frontend = FrontEndManager().load_by_framework("pytorch")
    for extension in conversion_extensions():
        frontend.add_extension(extension)
    # The decoder must outlive the conversion: the frontend calls back into it.
    decoder = TorchFXPythonDecoder(graph_module, input_types=input_types, input_shapes=input_shapes)
    return frontend.convert(frontend.load(decoder))


def to_openvino_model(
    edge_program: ExportedProgram, debug_handles: Optional[Dict[str, Tuple[int, ...]]] = None
) -> ov.Model:
    """Converts an edge partition (or a whole edge program) into an openvino.Model.

    Weights become constants of the model; its parameters are the partition's
    inputs, in order, with the dtypes and shape ranges the program was exported with.
    A `debug_handles` dict receives the edge debug handles of the converted graph's
    nodes, by the node names that start the model's op names (profiling.py).
    """
    graph_module = to_graph_module(edge_program)
    if debug_handles is not None:
        debug_handles.update(node_debug_handles(edge_program.graph, graph_module))
    output_node = graph_module.graph.output_node()
    expected_outputs = [arg.meta.get("val") for arg in output_node.args[0]]
    output_positions = return_each_value_once(graph_module)
    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    inputs = [_input_type_and_shape(node, edge_program) for node in placeholders]
    model = convert_with_frontend(
        graph_module,
        [torch_type for torch_type, _, _ in inputs],
        [torch_shape for _, torch_shape, _ in inputs],
    )
    parameters = model.get_parameters()
    if len(parameters) != len(placeholders):
        raise RuntimeError(f"OpenVINO made {len(parameters)} inputs for a partition with {len(placeholders)}")
    for parameter, (torch_type, _, partial_shape) in zip(parameters, inputs):
        parameter.set_element_type(OPENVINO_TYPES[torch_type])
        parameter.set_partial_shape(partial_shape)
    model.validate_nodes_and_infer_types()
    mark_index_inputs(parameters, placeholders)
    model = _restore_output_positions(model, output_positions)
    _convert_outputs_to_torch_dtypes(model, expected_outputs)
    model = keep_buffers_as_state(
        model, buffer_initial_values(edge_program), [node.name for node in placeholders], buffer_writes(edge_program)
    )
    return grow_kv_caches(model)


def return_each_value_once(graph_module: torch.fx.GraphModule) -> List[int]:
    """Makes the graph return each value once, with copies replaced by their source.

    The frontend drops copies and fails on a graph that returns one value twice
    (``return y, y.clone()``). Returns, for each original output, the index of
    the value it now is among the graph's outputs.
    """
    output_node = graph_module.graph.output_node()
    sources = [copy_source(arg) for arg in output_node.args[0]]
    unique = list(dict.fromkeys(sources))
    if unique != list(output_node.args[0]):
        output_node.args = (tuple(unique),)
        graph_module.graph.eliminate_dead_code()
        graph_module.recompile()
    return [unique.index(source) for source in sources]


def _restore_output_positions(model: ov.Model, positions: List[int]) -> ov.Model:
    """Gives the model one Result per original output, in the original order."""
    results = model.get_results()
    if positions == list(range(len(results))):
        return model
    ordered, used = [], set()
    for index in positions:
        # A repeated value gets a Result of its own, bound to its own buffer.
        ordered.append(ov_ops.result(results[index].input_value(0)) if index in used else results[index])
        used.add(index)
    return ov.Model(ordered, model.get_parameters(), model.get_friendly_name())


IDENTITY_MIN_VERSION = (2025, 4)


def separate_returned_inputs(model: ov.Model, may_run_on_cpu: bool) -> None:
    """Puts an Identity between each input the model returns unchanged and its Result.

    A compiled model whose Parameter feeds a Result directly hands back the input
    buffer itself, and the CPU plugin gives wrong values for it. This matters for
    whole programs lowered with ``to_backend`` (``return x.clone()``), which have no
    CPU part to move the copy to. Only the CPU plugin was checked, so devices that
    never run on it get the model unchanged.
    """
    if not may_run_on_cpu:
        return
    returned_inputs = [
        result for result in model.get_results() if result.input_value(0).get_node().get_type_name() == "Parameter"
    ]
    if not returned_inputs:
        return
    version = openvino_version()
    if version is not None and version < IDENTITY_MIN_VERSION:
        raise RuntimeError(
            "This program returns an input unchanged (such as x.clone()); on the CPU device that "
            f"needs OpenVINO {'.'.join(map(str, IDENTITY_MIN_VERSION))} or newer, whose CPU plugin "
            f"runs Identity, and this is OpenVINO {ov.get_version()}. Lower it with "
            "OpenvinoPartitioner instead, which runs such copies on the CPU, or update OpenVINO."
        )
    import openvino.opset16 as ov_opset16  # Identity is opset16, from OpenVINO 2025.0

    for result in returned_inputs:
        identity = ov_opset16.identity(result.input_value(0))
        result.input(0).replace_source_output(identity.output(0))
    model.validate_nodes_and_infer_types()


def openvino_version() -> Optional[Tuple[int, int]]:
    """(major, minor) of the running OpenVINO, such as (2026, 4); None if unreadable."""
    match = re.match(r"(\d+)\.(\d+)", ov.get_version())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _convert_outputs_to_torch_dtypes(model: ov.Model, expected: List[object]) -> None:
    """Makes each output come out in the dtype PyTorch gives it.

    The frontend keeps a narrower type for some ops, such as sum over int32, which
    PyTorch computes in int64; the runtime binds outputs only in the exact dtype
    the program expects.
    """
    results = model.get_results()
    if len(results) != len(expected):
        raise RuntimeError(f"OpenVINO made {len(results)} outputs for a partition with {len(expected)}")
    changed = False
    for result, value in zip(results, expected):
        if not isinstance(value, torch.Tensor) or value.dtype not in OPENVINO_TYPES:
            continue
        wanted = OPENVINO_TYPES[value.dtype]
        source = result.input_value(0)
        if source.get_element_type() != wanted:
            logger.debug(
                "OpenVINO output %s: converting %s to %s", result.get_friendly_name(), source.get_element_type(), wanted
            )
            result.input(0).replace_source_output(ov_ops.convert(source, wanted).output(0))
            changed = True
    if changed:
        model.validate_nodes_and_infer_types()


def decoder_input(value: object) -> Tuple[torch.dtype, List[int]]:
    """The dtype and shape (-1 for a dynamic size) the frontend's decoder takes for a placeholder's value.

    A symbolic int, a size made outside the partition, is a 0-d int64 tensor.
    """
    if isinstance(value, torch.SymInt):
        return torch.int64, []
    return value.dtype, [size if isinstance(size, int) else -1 for size in value.shape]


def _upper_bound(bounds: Optional[ValueRanges]) -> int:
    """A dimension's largest size, or -1 for none: ``Dim("n")`` without ``max``
    has torch's ``int_oo``, which calls itself finite but has no integer value."""
    if bounds is None or bounds.upper in (int_oo, sympy.oo):
        return -1
    return int(bounds.upper)


def _input_type_and_shape(node: torch.fx.Node, edge_program: ExportedProgram):
    """(torch dtype, shape for the decoder, OpenVINO shape with bounds)."""
    value = node.meta.get("val")
    if isinstance(value, torch.SymInt):
        return (*decoder_input(value), ov.PartialShape([]))
    if not isinstance(value, torch.Tensor):
        raise ValueError(
            f"OpenVINO delegate input {node.name!r} is a {type(value).__name__}; only tensors and ints are supported"
        )
    if value.dtype not in OPENVINO_TYPES:
        raise ValueError(
            f"OpenVINO delegate input {node.name!r} has dtype {value.dtype}, "
            f"accepted: {', '.join(str(t) for t in OPENVINO_TYPES)}"
        )
    dims: List[ov.Dimension] = []
    for size in value.shape:
        if isinstance(size, int):
            dims.append(ov.Dimension(size))
            continue
        bounds = edge_program.range_constraints.get(size.node.expr)
        # to_edge raises a user's lower bound of 1 to 2 (torch's 0/1 specialization)
        # while ExecuTorch still runs size 1, so the delegate accepts any size from 1.
        dims.append(ov.Dimension(1, _upper_bound(bounds)))
    return (*decoder_input(value), ov.PartialShape(dims))
