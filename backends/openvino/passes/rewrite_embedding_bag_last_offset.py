"""EmbeddingBag with include_last_offset, as one without it.

OpenVINO's PyTorch frontend refuses ``include_last_offset=True`` (seen on
2026.4.1), and ExecuTorch's portable kernels have no ``_embedding_bag``. PyTorch
documents the last offset as the number of indices (the CSR layout), and with it
the bags are those of the offsets without their last entry and the flag off: the
last bag runs to the end of the indices. PyTorch does not check that contract:
given a smaller last offset, eager ends the last bag there while the rewritten op
still runs it to the end (README, Known limits). The offsets are an input, so
lowering cannot tell.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..node_names import op_name

_EMBEDDING_BAG = "aten._embedding_bag.default"
# _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
#                per_sample_weights=None, include_last_offset=False, padding_idx=-1)
_OFFSETS, _INCLUDE_LAST_OFFSET = 2, 7


def rewrite_embedding_bag_last_offset(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) != _EMBEDDING_BAG:
            continue
        args = list(node.args)
        include_last_offset = node.kwargs.get(
            "include_last_offset", args[_INCLUDE_LAST_OFFSET] if len(args) > _INCLUDE_LAST_OFFSET else False
        )
        if not include_last_offset:
            continue
        with graph.inserting_before(node):
            offsets = graph.call_function(exir_ops.edge.aten.slice_copy.Tensor, (args[_OFFSETS], 0, 0, -1))
        offsets_value = args[_OFFSETS].meta.get("val")
        if offsets_value is not None:
            offsets.meta["val"] = offsets_value[:-1]
        args[_OFFSETS] = offsets
        kwargs = dict(node.kwargs)
        if "include_last_offset" in kwargs:
            kwargs["include_last_offset"] = False
        else:
            args[_INCLUDE_LAST_OFFSET] = False
        node.args, node.kwargs = tuple(args), kwargs
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
