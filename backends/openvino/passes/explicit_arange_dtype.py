"""``arange`` with the dtype PyTorch gives it written out.

``torch.arange(0, 1, 0.1)`` is float32 in PyTorch (a float among its arguments), but
exports with no ``dtype``. OpenVINO's frontend (seen on 2026.4.1) then casts the
range to the type of ``start``, an int64 here, and returns ``[0, 0, ..., 0]``
without an error. Writing the dtype out leaves it nothing to guess.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around


@works_around("arange_in_start_type")
def explicit_arange_dtype(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    changed = False
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or not op_name(node).startswith("aten.arange."):
            continue
        value = node.meta.get("val")
        if node.kwargs.get("dtype") is None and isinstance(value, torch.Tensor):
            node.kwargs = {**node.kwargs, "dtype": value.dtype}
            changed = True
    if changed:
        graph_module.recompile()
    return graph_module
