"""``log1p`` computed to full precision near zero.

OpenVINO's frontend (seen on 2026.4.1) converts ``log1p(x)`` as ``log(1 + x)``, which
loses ``x`` where it is small: ``log1p(1e-9)`` came back 0 and ``log1p(1e-7)`` 19% off,
and ``softplus`` (``log1p(exp(x))``) of x in about [-25, -16] came back negative, without
an error. The CPU plugin's ``Log`` is not accurate near 1 either, so where
``|x| < 0.1`` the series ``x - x**2/2 + x**3/3 - ... - x**8/8`` is used (its first
omitted term is below 1e-9 of the result), and ``log(1 + x)`` elsewhere.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around
from .graph_edits import emit, replace

_SERIES_TERMS = 8
_SERIES_BELOW = 0.1


@works_around("log1p_as_log_of_sum")
def accurate_log1p(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    aten = exir_ops.edge.aten
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) != "aten.log1p.default":
            continue
        value = node.meta.get("val")
        if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
            continue
        x = node.args[0]
        with graph.inserting_before(node):
            # Horner's form of x * (1 - x * (1/2 - x * (1/3 - ... - x * (1/7 - x / 8)))).
            series = emit(graph, aten.mul.Scalar, x, -1 / _SERIES_TERMS)
            for power in range(_SERIES_TERMS - 1, 0, -1):
                series = emit(
                    graph, aten.mul.Tensor, x, emit(graph, aten.add.Scalar, series, (-1) ** (power + 1) / power)
                )
            near_zero = emit(graph, aten.lt.Scalar, emit(graph, aten.abs.default, x), _SERIES_BELOW)
            log_u = emit(graph, aten.log.default, emit(graph, aten.add.Scalar, x, 1))
            result = emit(graph, aten.where.self, near_zero, series, log_u)
        replace(graph, node, result)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
