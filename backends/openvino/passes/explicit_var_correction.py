"""Variance with PyTorch's default correction written out.

``torch.var(x)`` exports as ``aten.var.correction(x)`` with no correction, which
PyTorch reads as 1 (Bessel's correction). OpenVINO's frontend (seen on 2026.4.1,
``translate_var_fx``) reads a missing correction as 0 and divides by N instead of
N - 1, without an error. Writing the 1 out leaves it nothing to guess.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

_VARIANCE_OPS = ("aten.var.correction", "aten.var_mean.correction")


@works_around("var_default_correction")
def explicit_var_correction(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    changed = False
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or op_name(node) not in _VARIANCE_OPS:
            continue
        if node.kwargs.get("correction") is None:
            node.kwargs = {**node.kwargs, "correction": 1}
            changed = True
    if changed:
        graph_module.recompile()
    return graph_module
