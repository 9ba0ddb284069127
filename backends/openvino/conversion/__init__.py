"""An edge partition to an openvino.Model: the frontend, then every rewrite of the model, in order.

1. frontend.py: the partition's graph, prepared (weights as attributes, graph passes
   of passes/), converted by OpenVINO's PyTorch frontend with our translations of
   some ops (translators/).
2. The model's parameters get the partition's dtypes and shape ranges.
3. rewrites/: every rewrite of the OpenVINO model, in the order ``REWRITES`` lists.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from torch.export import ExportedProgram

import openvino as ov

from ..edge_graph.debug_handles import node_debug_handles
from ..edge_graph.dtypes import OPENVINO_TYPES
from ..edge_graph.program_inputs import buffer_initial_values, buffer_writes
from .frontend import convert_with_frontend, input_type_and_shape, return_each_value_once, to_graph_module
from .rewrites import Partition, rewrite_model


def to_openvino_model(
    edge_program: ExportedProgram,
    may_run_on_cpu: bool = True,
    debug_handles: Optional[Dict[str, Tuple[int, ...]]] = None,
    per_sequence_inputs: Tuple[str, ...] = (),
    paged_attention: bool = False,
) -> ov.Model:
    """Converts an edge partition (or a whole edge program) into the openvino.Model the blob stores.

    Weights become constants of the model; its parameters are the partition's
    inputs, in order, with the dtypes and shape ranges the program was exported
    with. `may_run_on_cpu` says whether the target device may run it on the CPU
    plugin, whose own behaviour some rewrites handle. A `debug_handles` dict
    receives the edge debug handles of the converted graph's nodes, by the node
    names that start the model's op names (edge_graph/debug_handles.py). `per_sequence_inputs` names
    inputs whose values are computed once per sequence (rewrites/per_sequence_values.py).
    `paged_attention` says the runtime compiles the model in PagedAttention form
    (passes/__init__.py).
    """
    graph_module = to_graph_module(edge_program, paged_attention)
    if debug_handles is not None:
        debug_handles.update(node_debug_handles(edge_program.graph, graph_module))
    output_node = graph_module.graph.output_node()
    expected_outputs = [arg.meta.get("val") for arg in output_node.args[0]]
    output_positions = return_each_value_once(graph_module)
    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    inputs = [input_type_and_shape(node, edge_program) for node in placeholders]
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
    partition = Partition(
        placeholders=placeholders,
        output_positions=output_positions,
        expected_outputs=expected_outputs,
        buffer_initial_values=buffer_initial_values(edge_program),
        buffer_writes=buffer_writes(edge_program),
        may_run_on_cpu=may_run_on_cpu,
        per_sequence_inputs=tuple(per_sequence_inputs),
    )
    return rewrite_model(model, partition)
