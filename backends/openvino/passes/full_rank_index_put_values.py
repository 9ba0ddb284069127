"""The values of an ``index_put`` given the rank of the slots they fill.

``cache[:, :, positions] = new`` with ``new`` of shape [1, 1, S, D] reaches us with
the values reshaped to [S, D], or [D] when S is 1: export drops the leading
dimensions of size 1, which broadcasting restores. OpenVINO's frontend (seen on
2026.4.1, its ``index_put`` replacer) moves the values with the same transpose as
the indexed tensor and refuses values of a lower rank than the slots: a Llama with
one KV head, exported for one token per call, failed to convert. Leading
dimensions of size 1 are put back (``unsqueeze``), which is exactly what
broadcasting does, so the values written are the same.
"""

from __future__ import annotations

from typing import Optional

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

INDEX_PUT = ("aten.index_put.default", "aten.index_put_.default")


def slots_rank(node: torch.fx.Node) -> Optional[int]:
    """The rank of ``self[indices]`` for integer index tensors; None for boolean masks."""
    self_rank = node.args[0].meta["val"].dim()
    tensors = [index.meta["val"] for index in node.args[1] if isinstance(index, torch.fx.Node)]
    if any(index.dtype == torch.bool for index in tensors):
        return None
    broadcast_rank = max((index.dim() for index in tensors), default=0)
    return self_rank - len(tensors) + broadcast_rank


@works_around("index_put_values_of_lower_rank")
def full_rank_index_put_values(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) not in INDEX_PUT:
            continue
        values = node.args[2]
        rank = slots_rank(node)
        if not isinstance(values, torch.fx.Node) or rank is None:
            continue
        with graph.inserting_before(node):
            for _ in range(rank - values.meta["val"].dim()):
                values = graph.call_function(exir_ops.edge.aten.unsqueeze_copy.default, (values, 0))
                values.meta["val"] = values.args[0].meta["val"].unsqueeze(0)
        if values is not node.args[2]:
            node.args = (node.args[0], node.args[1], values, *node.args[3:])
            changed = True
    if changed:
        graph_module.recompile()
    return graph_module
