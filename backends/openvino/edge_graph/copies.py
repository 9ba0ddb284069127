"""What counts as a copy in an edge graph: an op that returns its input's values unchanged.

OpenVINO's PyTorch frontend turns such a copy into nothing (seen on 2026.4.1), so the
partitioner places copies where their result stays exact (partition/copy_placement.py)
and the conversion returns each copied value once (conversion/frontend.py).
"""

from __future__ import annotations

from typing import Iterable

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from .nodes import DTYPE_CASTS, op_name, tensor_value

# Full slices reach the edge graph as alias_copy.
_ALWAYS_COPY = frozenset({"aten.clone.default", "dim_order_ops._clone_dim_order.default", "aten.alias_copy.default"})
_SLICE = "aten.slice_copy.Tensor"
# Returns integers unchanged (conversion/translators/trunc.py gives the input itself).
_TRUNC = "aten.trunc.default"


def is_copy(node: torch.fx.Node) -> bool:
    """True for an op that returns its input's values unchanged in a new tensor."""
    if node.op != "call_function" or not node.args or not isinstance(node.args[0], torch.fx.Node):
        return False
    name = op_name(node)
    if name in _ALWAYS_COPY:
        return True
    source, result = tensor_value(node.args[0]), tensor_value(node)
    if source is None or result is None:
        return False
    if name in DTYPE_CASTS:
        return result.dtype == source.dtype
    if name == _SLICE:
        return _same_shape(result.shape, source.shape) and _slice_step(node) == 1
    if name == _TRUNC:
        return not source.dtype.is_floating_point
    return False


def _same_shape(first, second) -> bool:
    # Sizes may be symbolic: only a size known equal counts, never a guess.
    return len(first) == len(second) and all(statically_known_true(a == b) for a, b in zip(first, second))


def _slice_step(node: torch.fx.Node) -> int:
    step = node.args[4] if len(node.args) > 4 else node.kwargs.get("step", 1)
    return step if isinstance(step, int) else 0


def copy_source(node: torch.fx.Node) -> torch.fx.Node:
    """The node a chain of copies starts from (the node itself when it is no copy)."""
    while is_copy(node):
        node = node.args[0]
    return node


def copy_chain(node: torch.fx.Node) -> Iterable[torch.fx.Node]:
    """`node` and the copies it reads, down to the chain's source (excluded)."""
    while is_copy(node):
        yield node
        node = node.args[0]


def keeps_default_dim_order(node: torch.fx.Node) -> bool:
    value = tensor_value(node)
    return value is not None and tuple(value.dim_order()) == tuple(range(value.dim()))
