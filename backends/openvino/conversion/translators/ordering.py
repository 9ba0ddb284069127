"""Building blocks of the sort family's translators: PyTorch's stable order, and small graph helpers.

Eager PyTorch 2.13's CPU sort with ``stable=True`` (checked on thousands of random
rows with ties and NaN, ascending and descending): values by size, equal values in
the order of their index (in a descending sort too), NaN larger than every number
and NaNs in index order, -0.0 equal to 0.0.

OpenVINO 2026.4.1's TopK with ``stable=True`` keeps equal values in index order for
float32 and int32 keys (int64 within the int32 range: the CPU plugin computes int64
in 32 bits), but puts NaN anywhere. So a float key is sorted twice: first by value
with NaN taken as +inf, then, stably, by whether it is NaN, which moves the NaNs
after (ascending) or before (descending) the infinities they tied with, keeping
each group's order.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

import openvino as ov
import openvino.opset15 as ops

_FLOATS = frozenset({ov.Type.f32, ov.Type.f16, ov.Type.bf16, ov.Type.f64})


def i64(value) -> ov.Node:
    """An int64 constant (a scalar or a list)."""
    return ops.constant(np.array(value, dtype=np.int64))


def rank(tensor: ov.Output) -> int:
    """The tensor's rank, which edge graphs keep static."""
    return tensor.get_partial_shape().rank.get_length()


def axis_of(dim: int, tensor: ov.Output) -> int:
    """PyTorch's `dim` (negative from the end) as an axis of `tensor`."""
    return dim % max(rank(tensor), 1)


def size_along(tensor: ov.Output, axis: int) -> ov.Node:
    """The size of `axis` as a 0-d int64 tensor."""
    return ops.gather(ops.shape_of(tensor, "i64"), i64(axis), i64(0))


def is_float(tensor: ov.Output) -> bool:
    return tensor.get_element_type() in _FLOATS


def _key(tensor: ov.Output) -> ov.Output:
    """A TopK key that orders as `tensor` does: float32 for floats, int32 for narrow
    integers and bool, int64 kept (computed in 32 bits all the same)."""
    element_type = tensor.get_element_type()
    if element_type in _FLOATS:
        return ops.convert(tensor, "f32").output(0) if element_type != ov.Type.f32 else tensor
    if element_type in (ov.Type.i64, ov.Type.u64, ov.Type.u32):
        return ops.convert(tensor, "i64").output(0) if element_type != ov.Type.i64 else tensor
    return ops.convert(tensor, "i32").output(0)


def _stable_order(key: ov.Output, axis: int, descending: bool) -> ov.Output:
    """The indices that sort `key` along `axis`, equal keys in index order."""
    every = size_along(key, axis)
    mode = "max" if descending else "min"
    return ops.topk(key, every, axis, mode, "value", "i64", True).output(1)


def stable_sort_indices(tensor: ov.Output, axis: int, descending: bool = False) -> ov.Output:
    """The int64 indices that sort `tensor` along `axis` as PyTorch's stable sort does."""
    key = _key(tensor)
    if not is_float(tensor):
        return _stable_order(key, axis, descending)
    nan = ops.is_nan(key)
    infinity = ops.constant(np.array(np.inf, dtype=np.float32))
    by_value = _stable_order(ops.select(nan, infinity, key), axis, descending)
    nan_in_that_order = ops.convert(ops.gather_elements(nan, by_value, axis), "i32")
    return ops.gather_elements(by_value, _stable_order(nan_in_that_order, axis, descending), axis).output(0)


def stable_sort(tensor: ov.Output, axis: int, descending: bool = False) -> Tuple[ov.Output, ov.Output]:
    """(values, int64 indices) of `tensor` sorted along `axis` as PyTorch's stable sort does."""
    indices = stable_sort_indices(tensor, axis, descending)
    return ops.gather_elements(tensor, indices, axis).output(0), indices
