"""``median``, ``nanmedian``, ``kthvalue`` and ``mode``: values and indices as eager PyTorch picks them.

Each is a pick from a sort of ordering.py (NaN largest): the stable sort where the pick's
index is read, else std_sort_indices' order, which gives the same values and costs less
past 16 elements. Eager PyTorch 2.13's CPU kernels, checked on thousands of random rows
with ties and NaN:

- ``median`` along a dim: the element at position (n - 1) // 2 of the stable order
  (std::nth_element ordering by value, then index), or, in a row holding NaN, the
  first NaN (value and index). Without a dim, the same value.
- ``nanmedian`` along a dim: position (n - k - 1) // 2 of that order among the n - k
  numbers of a row with k NaN. A row of NaN only gives NaN, and an index that
  std::nth_element's steps over n equivalent elements leave in front: a function of
  n alone (2 for n = 4, 666 for n = 1000), which is read from eager at conversion
  for the row's size. Without a dim, the same value.
- ``kthvalue``: the value at position k - 1 (NaN largest). Its index comes from a
  quickselect among equal values, which no OpenVINO op reproduces: the partitioner
  leaves a node whose index is read on the CPU (partition/sort_family.py).
- ``mode``: eager sorts (value, index) pairs by value with std::sort, then scans the
  runs of equal neighbours (NaN differs from NaN) and keeps the first longest run's
  value and the index of its last element. Up to 16 elements std::sort is an
  insertion sort, which keeps equal values in index order: the index is the value's
  last occurrence, and the value the smallest of the most frequent ones. A NaN
  breaks the insertion sort's comparisons, and its result then depends on where the
  NaN sits ([1, nan, 1, 2] gives 1 at index 0, counted once): so float rows are
  sorted here by that same insertion sort, unrolled, which the partitioner allows up
  to 16 elements. Integer rows, which hold no NaN, take std_sort_indices' order,
  whose values are eager's at any size, and whose index is up to 16 elements; past 16
  eager's index is std::sort's own, and the partitioner leaves a node whose index is
  read on the CPU.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
import torch

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround
from .context import constant_argument
from .ordering import axis_of, i64, is_float, rank, size_along, stable_sort, std_sort

# median.dim / nanmedian.dim(self, dim, keepdim=False); kthvalue(self, k, dim=-1, keepdim=False);
# mode(self, dim=-1, keepdim=False)
_DIM, _KEEPDIM = 1, 2
_K, _KTH_DIM, _KTH_KEEPDIM = 1, 2, 3


def _as_rows(tensor: ov.Output, dim: Optional[int]) -> Tuple[ov.Output, int]:
    """The tensor and the axis to reduce: the whole tensor flattened without a dim, a 0-d
    tensor as one element."""
    if dim is None:
        return ops.reshape(tensor, i64([-1]), False).output(0), 0
    if rank(tensor) == 0:
        return ops.unsqueeze(tensor, i64(0)).output(0), 0
    return tensor, axis_of(dim, tensor)


def _nan_count(tensor: ov.Output, axis: int) -> ov.Output:
    return ops.reduce_sum(ops.convert(ops.is_nan(tensor), "i64"), i64([axis]), True).output(0)


def _at(tensor: ov.Output, position: ov.Output, axis: int) -> ov.Output:
    """`tensor`'s elements at `position` along `axis` (one per row), the axis kept with size 1."""
    row_shape = ops.scatter_update(ops.shape_of(tensor, "i64"), i64([axis]), i64([1]), i64(0))
    return ops.gather_elements(tensor, ops.broadcast(position, row_shape), axis).output(0)


def _reduced(outputs: List[ov.Output], axis: int, keepdim: bool, original: ov.Output, dim) -> List[ov.Output]:
    """The picked values and indices with the reduced axis dropped unless `keepdim`; a pick over a
    whole tensor (`dim` None) or of a 0-d tensor (which keeps no axis) is 0-d."""
    if dim is None or rank(original) == 0 or not keepdim:
        return [ops.squeeze(output, i64([axis])).output(0) for output in outputs]
    return outputs


def _median_position(tensor: ov.Output, axis: int, ignore_nan: bool) -> ov.Output:
    """The position in the stable order of the element eager's median picks, per row."""
    size = size_along(tensor, axis)
    if not is_float(tensor):
        return ops.divide(ops.subtract(size, i64(1)), i64(2)).output(0)
    nans = _nan_count(tensor, axis)
    numbers = ops.subtract(size, nans)
    if ignore_nan:  # (numbers - 1) / 2 in C++: 0 for a row of NaN only
        return ops.divide(ops.maximum(ops.subtract(numbers, i64(1)), i64(0)), i64(2)).output(0)
    middle = ops.divide(ops.subtract(size, i64(1)), i64(2))
    return ops.select(ops.greater(nans, i64(0)), numbers, middle).output(0)


def _all_nan_index(size: int) -> int:
    """The index eager's nanmedian gives for a row of `size` NaN."""
    return int(torch.nanmedian(torch.full((size,), float("nan")), 0).indices)


def _median(context, dim, keepdim: bool, ignore_nan: bool) -> List[ov.Output]:
    original = context.get_input(0)
    tensor, axis = _as_rows(original, dim)
    # Without a dim only the value counts, which any order of equal values gives.
    values, indices = stable_sort(tensor, axis) if dim is not None else std_sort(tensor, axis)
    position = _median_position(tensor, axis, ignore_nan)
    picked = [_at(values, position, axis), _at(indices, position, axis)]
    size = tensor.get_partial_shape()[axis]
    if ignore_nan and dim is not None and is_float(tensor) and size.is_static:
        # A dynamic size has no such index: the partitioner leaves a node whose index is read on the CPU.
        all_nan = ops.equal(_nan_count(tensor, axis), size_along(tensor, axis))
        picked[1] = ops.select(all_nan, i64(_all_nan_index(size.get_length())), picked[1]).output(0)
    picked = _reduced(picked, axis, keepdim, original, dim)
    return picked if dim is not None else picked[:1]


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.median (2026.4.1): eager's pick, computed")
def translate_median(context) -> List[ov.Output]:
    return _median(context, None, False, ignore_nan=False)


def _dim_and_keepdim(context) -> Tuple[int, bool]:
    return constant_argument(context, _DIM, -1), bool(constant_argument(context, _KEEPDIM, False))


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.median.dim (2026.4.1): eager's pick, computed")
def translate_median_dim(context) -> List[ov.Output]:
    return _median(context, *_dim_and_keepdim(context), ignore_nan=False)


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.nanmedian (2026.4.1): eager's pick, computed")
def translate_nanmedian(context) -> List[ov.Output]:
    return _median(context, None, False, ignore_nan=True)


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.nanmedian.dim (2026.4.1): eager's pick, computed")
def translate_nanmedian_dim(context) -> List[ov.Output]:
    return _median(context, *_dim_and_keepdim(context), ignore_nan=True)


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.kthvalue (2026.4.1): eager's pick, computed")
def translate_kthvalue(context) -> List[ov.Output]:
    original = context.get_input(0)
    dim = constant_argument(context, _KTH_DIM, -1)
    keepdim = bool(constant_argument(context, _KTH_KEEPDIM, False))
    tensor, axis = _as_rows(original, dim)
    values, indices = std_sort(tensor, axis)  # its index, a quickselect's, is not eager's anyway
    position = i64(constant_argument(context, _K, 1) - 1)
    return _reduced([_at(values, position, axis), _at(indices, position, axis)], axis, keepdim, original, dim)


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.mode (2026.4.1): eager's pick, computed")
def translate_mode(context) -> List[ov.Output]:
    original = context.get_input(0)
    dim, keepdim = _dim_and_keepdim(context)
    tensor, axis = _as_rows(original, dim)
    values, indices = _insertion_sort(tensor, axis) if is_float(tensor) else std_sort(tensor, axis)
    run_lengths, run_ends = _runs(values, axis)
    # The first longest run: TopK(stable) keeps the lowest index among equal counts.
    longest = ops.topk(run_lengths, i64(1), axis, "max", "value", "i64", True).output(1)
    end = _at(run_ends, longest, axis)
    return _reduced([_at(values, end, axis), _at(indices, end, axis)], axis, keepdim, original, dim)


def _runs(values: ov.Output, axis: int) -> Tuple[ov.Output, ov.Output]:
    """For sorted `values`: each run of equal values' length and last position, at the run's
    number along `axis` (0 past the last run). NaN differs from NaN, so each is a run alone."""
    size = size_along(values, axis)
    previous = ops.slice(values, i64([0]), ops.unsqueeze(ops.subtract(size, i64(1)), i64(0)), i64([1]), i64([axis]))
    current = ops.slice(values, i64([1]), i64([np.iinfo(np.int64).max]), i64([1]), i64([axis]))
    first = ops.slice(values, i64([0]), i64([1]), i64([1]), i64([axis]))
    starts = ops.concat(
        [ops.broadcast(ops.constant(True), ops.shape_of(first)), ops.not_equal(current, previous)], axis
    )
    run_number = ops.subtract(ops.cumsum(ops.convert(starts, "i64"), i64(axis)), i64(1))
    ones = ops.broadcast(i64(1), ops.shape_of(run_number))
    zeros = ops.broadcast(i64(0), ops.shape_of(run_number))
    lengths = ops.scatter_elements_update(zeros, run_number, ones, i64(axis), "sum", True)
    ends = ops.subtract(ops.cumsum(lengths, i64(axis)), i64(1))
    return lengths.output(0), ends.output(0)


def _insertion_sort(tensor: ov.Output, axis: int) -> Tuple[ov.Output, ov.Output]:
    """(values, int64 indices) of `tensor` sorted along `axis` by libstdc++'s insertion sort
    comparing values with ``<``, step by step: each element goes to the front when it is below
    the first, or else back past the elements it is below. A NaN is below nothing and nothing
    is below it. The axis has a static size (the partitioner allows 16 at most)."""
    size = tensor.get_partial_shape()[axis].get_length()
    along_axis = [1] * rank(tensor)
    along_axis[axis] = size
    position = ops.constant(np.arange(size, dtype=np.int64).reshape(along_axis)).output(0)
    values, indices = tensor, ops.broadcast(position, ops.shape_of(tensor, "i64")).output(0)
    for step in range(1, size):
        value, index = _along(values, axis, step, step + 1), _along(indices, axis, step, step + 1)
        below = ops.less(value, values).output(0)
        # The last earlier position the value is not below; the value goes right after it.
        earlier = ops.less(position, i64(step))
        stops = ops.select(ops.logical_and(ops.logical_not(below), earlier), position, i64(-1))
        after_stop = ops.add(ops.reduce_max(stops, i64([axis]), True), i64(1))
        to = ops.select(_along(below, axis, 0, 1), i64(0), after_stop).output(0)
        values = _moved(values, value, to, step, position, axis)
        indices = _moved(indices, index, to, step, position, axis)
    return values, indices


def _along(data: ov.Output, axis: int, start: int, stop: int) -> ov.Output:
    return ops.slice(data, i64([start]), i64([stop]), i64([1]), i64([axis])).output(0)


def _moved(data: ov.Output, value: ov.Output, to: ov.Output, step: int, position: ov.Output, axis: int) -> ov.Output:
    """`data` with its element at `step` (`value`) moved to position `to` and those from `to` on moved up one."""
    size = data.get_partial_shape()[axis].get_length()
    previous = ops.concat([_along(data, axis, 0, 1), _along(data, axis, 0, size - 1)], axis)  # data[k - 1] at k
    moved_up = ops.logical_and(ops.greater(position, to), ops.less_equal(position, i64(step)))
    shifted = ops.select(moved_up, previous, data)
    return ops.select(ops.equal(position, to), value, shifted).output(0)
