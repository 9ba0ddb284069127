"""Integer sums written as a cumsum and its last element, which OpenVINO computes exactly.

OpenVINO 2026.4.1's CPU plugin computes ReduceSum of integers in float32, which holds
every integer only below 2**24: the int32 sum of [100000001, 3] came back 100000000,
and so would the sum of a uint8 image of 2 megapixels. Its CumSum of integers is
exact. So ``x.sum(dims)`` of a bool or integer ``x`` becomes: move the summed
dimensions last, flatten them into one, cumsum along it in the result's dtype, and take
the last element. Dimensions of dynamic size cannot be flattened: they are summed one
at a time, each by a cumsum and its last element.
"""

from __future__ import annotations

import logging
from typing import List, Optional

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

logger = logging.getLogger(__name__)

_SUMS = ("aten.sum.dim_IntList", "aten.sum.default")


def _summed_dims(node: torch.fx.Node, rank: int) -> List[int]:
    dims = node.args[1] if op_name(node) == "aten.sum.dim_IntList" and len(node.args) > 1 else None
    if not dims:
        return list(range(rank))
    return sorted({dim % rank for dim in dims})


def _keepdim(node: torch.fx.Node) -> bool:
    if op_name(node) != "aten.sum.dim_IntList":
        return False
    return bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False))


def _call(graph: torch.fx.Graph, op, args: tuple, value: torch.Tensor, kwargs: Optional[dict] = None) -> torch.fx.Node:
    node = graph.call_function(op, args, kwargs or {})
    node.meta = {"val": value}
    return node


def _last_of_cumsum(graph: torch.fx.Graph, current, current_value, axis: int, dtype: torch.dtype):
    """The sum along `axis`: the last element of the cumsum along it, in `dtype`."""
    current_value = torch.cumsum(current_value, axis, dtype=dtype)
    current = _call(graph, exir_ops.edge.aten.cumsum.default, (current, axis), current_value, {"dtype": dtype})
    current_value = current_value.select(axis, -1)
    current = _call(graph, exir_ops.edge.aten.select_copy.int, (current, axis, -1), current_value)
    return current, current_value


def _flattened_sum(graph: torch.fx.Graph, source, value: torch.Tensor, dims: List[int], dtype: torch.dtype):
    """The summed dims moved last and flattened into one (static sizes, or one dim), summed."""
    kept = [dim for dim in range(value.dim()) if dim not in dims]
    current, current_value = source, value
    order = kept + dims
    if order != list(range(value.dim())):
        current_value = current_value.permute(order)
        current = _call(graph, exir_ops.edge.aten.permute_copy.default, (current, order), current_value)
    if len(dims) > 1:
        shape = [value.shape[dim] for dim in kept] + [-1]
        current_value = current_value.reshape(shape)
        current = _call(graph, exir_ops.edge.aten.view_copy.default, (current, shape), current_value)
    return _last_of_cumsum(graph, current, current_value, len(kept), dtype)


def _sum_per_dim(graph: torch.fx.Graph, source, value: torch.Tensor, dims: List[int], dtype: torch.dtype):
    """Each summed dim in turn, the last first, so that the others keep their index."""
    current, current_value = source, value
    for dim in reversed(dims):
        current, current_value = _last_of_cumsum(graph, current, current_value, dim, dtype)
    return current, current_value


@works_around("integer_sum_in_float32")
def exact_integer_sum(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Rewrites each sum of a bool or integer tensor into cumsum-then-last (see the module)."""
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) not in _SUMS:
            continue
        source, result = node.args[0], node.meta.get("val")
        value = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
        if not isinstance(value, torch.Tensor) or not isinstance(result, torch.Tensor) or value.dim() == 0:
            continue
        if value.dtype.is_floating_point or value.dtype.is_complex:
            continue
        dims = _summed_dims(node, value.dim())
        if any(isinstance(value.shape[dim], int) and value.shape[dim] == 0 for dim in dims):
            continue  # a sum of nothing: zeros, exact as it is; a cumsum has no last element
        static = all(isinstance(size, int) for size in value.shape)
        with graph.inserting_before(node):
            if static or len(dims) == 1:
                current, current_value = _flattened_sum(graph, source, value, dims, result.dtype)
            else:
                current, current_value = _sum_per_dim(graph, source, value, dims, result.dtype)
            for dim in dims if _keepdim(node) else ():  # in increasing order: each lands where it was
                current_value = current_value.unsqueeze(dim)
                current = _call(graph, exir_ops.edge.aten.unsqueeze_copy.default, (current, dim), current_value)
        node.replace_all_uses_with(current)
        graph.erase_node(node)
        logger.debug("%s: integer sum over %s computed as a cumsum", node.name, dims)
        changed = True
    if changed:
        graph.eliminate_dead_code()
        graph_module.recompile()
    return graph_module
