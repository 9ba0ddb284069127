"""Means and variances over every dimension written out as a list of every dimension.

PyTorch reads ``aten.mean.dim`` and ``aten.var.correction`` with ``dim`` empty or
``None`` as a reduction over every dimension (``x.mean(dim=[])`` is ``x.mean()``).
OpenVINO's frontend (seen on 2026.4.1) reads an empty list as a reduction over no
dimension, which returns its input unchanged: ``x - x.mean(dim=[], keepdim=True)``
comes out all zeros, without an error, and a variance over no dimension is NaN. It
cannot convert ``None`` at all. Listing every dimension leaves it nothing to guess.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

#: The reductions the frontend misreads, with the position of ``dim`` among their arguments.
_DIM_POSITION = {"aten.mean.dim": 1, "aten.var.correction": 1}


@works_around("reduction_over_no_dims")
def explicit_reduction_dims(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    changed = False
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or op_name(node) not in _DIM_POSITION:
            continue
        position = _DIM_POSITION[op_name(node)]
        in_args = len(node.args) > position
        dims = node.args[position] if in_args else node.kwargs.get("dim")
        rank = node.args[0].meta["val"].dim()
        if (dims is not None and len(dims) > 0) or rank == 0:
            continue
        every_dim = list(range(rank))
        if in_args:
            node.args = (*node.args[:position], every_dim, *node.args[position + 1 :])
        else:
            node.kwargs = {**node.kwargs, "dim": every_dim}
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
