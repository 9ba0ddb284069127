"""An edge partition through OpenVINO's PyTorch frontend: the graph it is given and the call.

The graph is a copy of the partition with its weights as attributes, ExecuTorch's
dim-order ops turned back into aten ops, asserts dropped and our graph passes run
(passes/); the frontend converts it with our own translations of some ops added
(translators/), whose nodes it is shown as translated_nodes.py says. The partitioner's
trial conversion (partition/trial_conversion.py) calls the same functions, so that
what it accepts is what preprocess converts.
"""

from __future__ import annotations

import copy
from typing import List, Optional, Tuple

import sympy
import torch
from executorch.exir.passes.memory_format_ops_pass import DimOrderOpsRevertPass
from executorch.exir.passes.remove_graph_asserts_pass import RemoveGraphAssertsPass
from torch.export import ExportedProgram
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges

import openvino as ov
from openvino.frontend import FrontEndManager

from ..edge_graph.copies import copy_source
from ..edge_graph.dtypes import OPENVINO_TYPES
from ..edge_graph.nodes import DIM_ORDER_OPS, op_name
from ..edge_graph.program_inputs import constant_inputs
from ..passes import run_passes
from .translated_nodes import MultiResultDecoder, positional_arguments
from .translators import conversion_extensions


def to_graph_module(edge_program: ExportedProgram, paged_attention: bool = False) -> torch.fx.GraphModule:
    """The partition as a GraphModule whose weights are attributes, ready to convert
    (in PagedAttention form with `paged_attention`: passes/__init__.py).

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
    return prepare_graph_module(graph_module, paged_attention)


def prepare_graph_module(graph_module: torch.fx.GraphModule, paged_attention: bool = False) -> torch.fx.GraphModule:
    """Turns ExecuTorch's dim-order ops back into aten ops, drops asserts, runs our passes and
    writes the arguments of the ops we translate by position (translated_nodes.py)."""
    # The revert pass retraces the whole graph: most of a small partition's conversion time.
    if any(op_name(node) in DIM_ORDER_OPS for node in graph_module.graph.nodes if node.op == "call_function"):
        graph_module = DimOrderOpsRevertPass()(graph_module).graph_module
    # ExecuTorch drops asserts before it runs a program; OpenVINO converts none of them.
    graph_module = RemoveGraphAssertsPass()(graph_module).graph_module
    return positional_arguments(run_passes(graph_module, paged_attention))


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
    decoder = MultiResultDecoder(graph_module, input_types=input_types, input_shapes=input_shapes)
    return frontend.convert(frontend.load(decoder))


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


def _lower_bound(size: torch.SymInt, bounds: Optional[ValueRanges]) -> int:
    """0 for a size computed from values that torch.export says may be 0, else 1."""
    data_dependent = bool(free_unbacked_symbols(size))
    return 0 if data_dependent and bounds is not None and bounds.lower == 0 else 1


def input_type_and_shape(node: torch.fx.Node, edge_program: ExportedProgram):
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
        # while ExecuTorch still runs size 1, so the delegate accepts any size from 1;
        # a size computed from values (x[x > 0]) keeps its lower bound of 0.
        dims.append(ov.Dimension(_lower_bound(size, bounds), _upper_bound(bounds)))
    return (*decoder_input(value), ov.PartialShape(dims))
