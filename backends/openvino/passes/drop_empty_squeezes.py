"""Squeezes of no dimension dropped.

PyTorch reads ``x.squeeze(dim=())`` (``aten.squeeze_copy.dims`` with an empty list) as
a squeeze of no dimension: ``x`` unchanged. OpenVINO's frontend (seen on 2026.4.1)
makes it a Squeeze without axes, which removes every dimension of size 1: a
``[2, 1, 3]`` tensor became ``[2, 3]``, and a softmax over the size-1 dimension after
it gave other values without an error. The squeeze's readers read its input instead.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around


@works_around("squeeze_of_no_dims")
def drop_empty_squeezes(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) != "aten.squeeze_copy.dims" or list(node.args[1]) != []:
            continue
        node.replace_all_uses_with(node.args[0])
        graph.erase_node(node)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
