"""Building blocks of the sort family's translators: PyTorch's stable order, and small graph helpers.

Eager PyTorch 2.13's CPU sort with ``stable=True`` (checked on thousands of random
rows with ties and NaN, ascending and descending): values by size, equal values in
the order of their index (in a descending sort too), NaN larger than every number
and NaNs in index order, -0.0 equal to 0.0.

OpenVINO 2026.4.1's TopK orders NaN anywhere, and its ``stable=True`` mode, which
keeps equal values in index order, takes time quadratic in k (a sort of 16000
values: 553 ms, against 1.6 ms unstable; seen on an Intel Xeon with AMX, one thread). So the
order is built from one unstable TopK, which groups equal values (NaN taken as
+inf): each element gets its group's rank (rank 2g, or 2g + 1 for NaN, which sorts
NaN after the infinities it tied with; the other way for a descending sort). The
stable order is then the order of (rank, index), every pair distinct: up to 32767
elements along the axis a second unstable TopK over rank * n + index (below 2**31,
as the CPU plugin computes int64 in 32 bits) gives it; beyond, or for a dynamic
size, a radix sort of the ranks, bit by bit with stable partitions made of cumsums,
starting from index order (slower: about 0.3 s for 128000 elements).

Where eager's own order among equal values is std::sort's (``std_sort_indices``),
which nothing reproduces past 16 elements, the unstable TopK alone serves, with one
stable partition that moves the NaNs past the infinities.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

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


# Up to this many elements along the axis, rank * n + index stays below 2**31 (rank < 2n).
_PAIRED_KEY_LIMIT = 32767
_DYNAMIC_SIZE_BITS = 31


def _grouped(tensor: ov.Output, axis: int, descending: bool) -> Tuple[ov.Output, Optional[ov.Output], ov.Output]:
    """(the sort key, NaN taken as +inf; where the tensor is NaN, or None for integers; the
    indices of one unstable TopK, which puts equal keys next to each other)."""
    key = _key(tensor)
    nan = ops.is_nan(key).output(0) if is_float(tensor) else None
    if nan is not None:
        key = ops.select(nan, ops.constant(np.array(np.inf, dtype=np.float32)), key).output(0)
    every = size_along(key, axis)
    return key, nan, ops.topk(key, every, axis, "max" if descending else "min", "value", "i64", False).output(1)


def _nan_after(nan: ov.Output, order: ov.Output, axis: int, descending: bool) -> ov.Output:
    """1 at the positions of `order` holding NaN (holding a number when descending), else 0: the
    bit that puts NaN after +inf (before it descending)."""
    late = ops.convert(ops.gather_elements(nan, order, axis), "i32")
    return ops.subtract(ops.constant(np.int32(1)), late).output(0) if descending else late.output(0)


def _ranks(tensor: ov.Output, axis: int, descending: bool) -> Tuple[ov.Output, int]:
    """Each element's rank in PyTorch's order up to ties of equal values (NaN a group after
    +inf, or before it descending), in place, as int32; and the number of distinct ranks
    there can be, a bound."""
    key, nan, grouping = _grouped(tensor, axis, descending)
    grouped = ops.gather_elements(key, grouping, axis)
    later = _along(grouped, axis, 1, None)
    starts = ops.concat(
        [
            _along(ops.broadcast(ops.constant(True), ops.shape_of(grouped)), axis, 0, 1),
            ops.not_equal(later, _along(grouped, axis, 0, -1)),
        ],
        axis,
    )
    group = ops.subtract(ops.cumsum(ops.convert(starts, "i32"), i64(axis)), ops.constant(np.int32(1)))
    size = key.get_partial_shape()[axis]
    bound = size.get_length() if size.is_static else 2**_DYNAMIC_SIZE_BITS
    if nan is not None:
        group = ops.add(ops.multiply(group, ops.constant(np.int32(2))), _nan_after(nan, grouping, axis, descending))
        bound *= 2
    zeros = ops.broadcast(ops.constant(np.int32(0)), ops.shape_of(key, "i64"))
    return ops.scatter_elements_update(zeros, grouping, group, i64(axis)).output(0), bound


def _along(data, axis: int, start: int, stop) -> ov.Output:
    """data[start:stop] along `axis` (`stop` None: to the end; negative: from the end)."""
    stop = np.iinfo(np.int64).max if stop is None else stop
    return ops.slice(data, i64([start]), i64([stop]), i64([1]), i64([axis])).output(0)


def _by_paired_key(ranks: ov.Output, axis: int, size: int) -> ov.Output:
    """The order of (rank, index), through one TopK over the distinct keys rank * size + index."""
    along_axis = [1] * rank(ranks)
    along_axis[axis] = size
    index = ops.constant(np.arange(size, dtype=np.int32).reshape(along_axis))
    paired = ops.add(ops.multiply(ranks, ops.constant(np.int32(size))), index)
    return ops.topk(paired, i64(size), axis, "min", "value", "i64", False).output(1)


def _by_radix(ranks: ov.Output, axis: int, bound: int) -> ov.Output:
    """The order of (rank, index): stable partitions by each bit of the rank, lowest first,
    starting from index order."""
    shape = ops.shape_of(ranks, "i64")
    along_axis = ops.scatter_update(
        ops.broadcast(i64(1), ops.shape_of(shape, "i64")),
        i64([axis]),
        ops.unsqueeze(size_along(ranks, axis), i64(0)),
        i64(0),
    )
    order = ops.broadcast(
        ops.reshape(ops.range(i64(0), size_along(ranks, axis), i64(1), "i64"), along_axis, False), shape
    ).output(0)
    for bit in range(max(bound - 1, 1).bit_length()):
        ones = ops.bitwise_and(ops.bitwise_right_shift(ranks, ops.constant(np.int32(bit))), ops.constant(np.int32(1)))
        order, ranks = _partitioned(ones.output(0), axis, order, ranks)
    return order


def _partitioned(ones: ov.Output, axis: int, *tensors: ov.Output) -> List[ov.Output]:
    """`tensors` reordered along `axis`: the positions where `ones` (int32) is 0 first, then those
    where it is 1, each in the order they had."""
    zeros = ops.subtract(ops.constant(np.int32(1)), ones)
    zeros_before = ops.cumsum(zeros, i64(axis), exclusive=True)
    ones_before = ops.cumsum(ones, i64(axis), exclusive=True)
    all_zeros = ops.reduce_sum(zeros, i64([axis]), True)
    to = ops.convert(ops.select(ops.convert(ones, "boolean"), ops.add(all_zeros, ones_before), zeros_before), "i64")
    return [ops.scatter_elements_update(tensor, to, tensor, i64(axis)).output(0) for tensor in tensors]


def stable_sort_indices(tensor: ov.Output, axis: int, descending: bool = False) -> ov.Output:
    """The int64 indices that sort `tensor` along `axis` as PyTorch's stable sort does."""
    ranks, bound = _ranks(tensor, axis, descending)
    size = tensor.get_partial_shape()[axis]
    if size.is_static and size.get_length() <= _PAIRED_KEY_LIMIT:
        return _by_paired_key(ranks, axis, size.get_length())
    return _by_radix(ranks, axis, bound)


def any_tie_order_indices(tensor: ov.Output, axis: int, descending: bool = False) -> ov.Output:
    """The int64 indices that sort `tensor` along `axis` with NaN where PyTorch puts it and equal
    values in any order: one unstable TopK, then the NaNs moved past the infinities they tied with."""
    _, nan, order = _grouped(tensor, axis, descending)
    if nan is None:
        return order
    return _partitioned(_nan_after(nan, order, axis, descending), axis, order)[0]


# Eager's std::sort (sort and argsort without stable=True, topk, unique, mode) is an
# insertion sort up to this many elements (libstdc++'s _S_threshold), which keeps equal
# values in index order; past it, equal values come in an order of its own.
STD_SORT_INSERTION_LIMIT = 16


def std_sort_indices(tensor: ov.Output, axis: int, descending: bool = False) -> ov.Output:
    """Indices in eager's std::sort order where it is known: stable up to STD_SORT_INSERTION_LIMIT
    elements along the axis; past it (or for a dynamic size), equal values in any order."""
    size = tensor.get_partial_shape()[axis] if rank(tensor) else None
    if size is not None and size.is_static and size.get_length() <= STD_SORT_INSERTION_LIMIT:
        return stable_sort_indices(tensor, axis, descending)
    return any_tie_order_indices(tensor, axis, descending)


def stable_sort(tensor: ov.Output, axis: int, descending: bool = False) -> Tuple[ov.Output, ov.Output]:
    """(values, int64 indices) of `tensor` sorted along `axis` as PyTorch's stable sort does."""
    return _with_values(tensor, stable_sort_indices(tensor, axis, descending), axis)


def std_sort(tensor: ov.Output, axis: int, descending: bool = False) -> Tuple[ov.Output, ov.Output]:
    """(values, int64 indices) of `tensor` sorted along `axis` as std_sort_indices says."""
    return _with_values(tensor, std_sort_indices(tensor, axis, descending), axis)


def _with_values(tensor: ov.Output, indices: ov.Output, axis: int) -> Tuple[ov.Output, ov.Output]:
    return ops.gather_elements(tensor, indices, axis).output(0), indices
