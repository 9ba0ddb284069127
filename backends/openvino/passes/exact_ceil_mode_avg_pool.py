"""Average pooling whose ceil mode adds a last window past the padding, as PyTorch averages it.

With ``ceil_mode=True`` the last window along a dimension may reach past the right
padding. PyTorch divides its sum by the part of the window inside the padded input
(with ``count_include_pad``), or by ``divisor_override``; OpenVINO 2026.4.1's
AvgPool-14 (``exclude_pad=false``, CEIL_TORCH) divides it by the whole kernel, and
its frontend refuses ``divisor_override``. Such pools ran on ExecuTorch's CPU kernels
(which have no ``avg_pool3d``: those ran nowhere).

With the padding written into the tensor (zeros, which add nothing to a sum), an
average that excludes padding divides each window by its part inside that tensor:
PyTorch's divisor. OpenVINO computes that exactly (``count_include_pad=False``, the
sweep's ``*_cip0`` cases). With padding 0 the ceil rule keeps windows that start in
what was the right padding, which PyTorch drops, so the result is cut to PyTorch's
size. With a ``divisor_override`` the average is turned back into the sum (times
the window's part inside, a constant computed from the sizes) and divided by it. Only static
sizes: a dynamic one stays on the CPU (partition/argument_rules.py).
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.pool_geometry import AvgPool, avg_pools, is_static, needs_explicit_padding
from ..workarounds import works_around
from .graph_edits import emit, replace

aten = exir_ops.edge.aten


@works_around("avg_pool_ceil_window_past_padding", "avg_pool_divisor_override_refused")
def exact_ceil_mode_avg_pool(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node, pool, spatial in avg_pools(graph):
        if not needs_explicit_padding(pool) or not is_static(pool):
            continue
        with graph.inserting_before(node):
            replace(graph, node, _padded_average(graph, node, pool, spatial))
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module


def _padded_average(graph: torch.fx.Graph, node: torch.fx.Node, pool: AvgPool, spatial: int) -> torch.fx.Node:
    pads = [amount for padding in reversed(pool.padding) for amount in (padding, padding)]
    padded = emit(graph, aten.constant_pad_nd.default, node.args[0], pads, 0.0)
    zeros = [0] * spatial
    result = emit(graph, node.target, padded, pool.kernel, pool.stride, zeros, True, False, None)
    if pool.divisor_override is not None:
        inside = _window_parts_inside(graph, pool, padded, result)
        result = emit(graph, aten.mul.Tensor, result, inside)
        result = emit(graph, aten.div.Scalar, result, float(pool.divisor_override))
    rank = node.meta["val"].dim()
    for axis, size in enumerate(pool.output_sizes()):
        dim = rank - spatial + axis
        if result.meta["val"].shape[dim] != size:
            result = emit(graph, aten.slice_copy.Tensor, result, dim, 0, size, 1)
    return result


def _window_parts_inside(
    graph: torch.fx.Graph, pool: AvgPool, padded: torch.fx.Node, pooled: torch.fx.Node
) -> torch.fx.Node:
    """A constant: how many elements of each window lie inside the padded tensor."""
    spatial = len(pool.kernel)
    lengths = padded.meta["val"].shape[-spatial:]
    windows = pooled.meta["val"].shape[-spatial:]
    inside = torch.ones((), dtype=pooled.meta["val"].dtype)
    for length, count, kernel, stride in zip(lengths, windows, pool.kernel, pool.stride):
        along = torch.tensor([min(start + kernel, length) - start for start in range(0, count * stride, stride)])
        inside = inside.unsqueeze(-1) * along.to(inside.dtype)
    graph_module = graph.owning_module
    name = f"_avg_pool_window_parts_{len(list(graph_module.buffers()))}"
    graph_module.register_buffer(name, inside)
    attribute = graph.get_attr(name)
    attribute.meta["val"] = inside
    return attribute
