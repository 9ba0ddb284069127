"""Average pooling with a divisor_override, as a plain average times a constant.

OpenVINO's PyTorch frontend refuses ``divisor_override`` (seen on 2026.4.1), and
ExecuTorch's portable kernels have no ``avg_pool3d``, so ``AvgPool3d(...,
divisor_override=3)`` could run nowhere. Where every window covers a whole kernel
of input and padding, PyTorch's average with count_include_pad divides each sum
by the kernel's size, so ``sum / d`` is that average times ``kernel size / d``.
A pool with a ceil-mode window past the padding is rewritten before, by
exact_ceil_mode_avg_pool.py.
"""

from __future__ import annotations

import math

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.pool_geometry import avg_pools
from ..workarounds import works_around


@works_around("avg_pool_divisor_override_refused")
def rewrite_avg_pool_divisor_override(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node, pool, _ in avg_pools(graph):
        if pool.divisor_override is None or pool.has_window_past_padding():
            continue
        with graph.inserting_before(node):
            average = graph.call_function(
                node.target,
                (node.args[0], pool.kernel, pool.stride, pool.padding, pool.ceil_mode, True, None),
            )
            scaled = graph.call_function(
                exir_ops.edge.aten.mul.Scalar, (average, math.prod(pool.kernel) / pool.divisor_override)
            )
        average.meta = dict(node.meta)
        scaled.meta = dict(node.meta)
        node.replace_all_uses_with(scaled)
        graph.erase_node(node)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
