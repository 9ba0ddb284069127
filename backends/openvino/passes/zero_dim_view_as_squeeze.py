"""A view to a 0-d tensor written as a squeeze.

OpenVINO 2026.4.1's CPU plugin crashes the process (SIGSEGV in compile_model, OpenVINO
alone too) on a matrix product reshaped to shape ``[]``, which is how
``torch.einsum("i,i->", a, b)`` exports. A squeeze of every dimension makes the same
0-d tensor and compiles.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around
from .graph_edits import emit, replace


@works_around("zero_dim_matmul_result_crash")
def zero_dim_view_as_squeeze(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) != "aten.view_copy.default" or list(node.args[1]) != []:
            continue
        source = node.args[0]
        rank = source.meta["val"].dim() if isinstance(source, torch.fx.Node) and "val" in source.meta else 0
        if rank == 0:
            continue
        with graph.inserting_before(node):
            squeezed = emit(graph, exir_ops.edge.aten.squeeze_copy.dims, source, list(range(rank)))
        replace(graph, node, squeezed)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
