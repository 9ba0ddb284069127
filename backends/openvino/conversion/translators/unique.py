"""``torch.unique`` and ``torch.unique_consecutive``: values, inverse and counts as eager PyTorch gives them.

Eager PyTorch 2.13's CPU kernels (checked on random inputs of every dtype, with ties
and NaN):

- ``unique`` (``aten._unique2``) flattens its input and returns the distinct values in
  ascending order, ``sorted=False`` included (the CPU kernel sorts anyway); NaN is
  distinct from every value, NaN included, so each NaN is returned on its own, after
  the numbers. The inverse maps each input element (in the input's shape) to its
  value's position, the counts are each value's number of elements. Eager sorts with
  std::sort, which up to 16 elements keeps the NaNs in index order, as here; past
  16 the inverse numbers the NaNs in std::sort's own order, and the partitioner
  leaves a float node whose inverse is read on the CPU (partition/sort_family.py).
- ``unique`` along a dim (``aten.unique_dim``) sorts the slices along the dim
  lexicographically (std::sort comparing element by element) and keeps one of each
  run of equal slices; inverse and counts are per slice. Integer and bool slices are
  sorted here by one stable sort per element of a slice, last element first. A float
  slice holding NaN has no order in eager's comparison, so its std::sort's result is
  its own: the partitioner leaves float nodes on the CPU.
- ``unique_consecutive`` keeps the first of each run of equal neighbours (NaN differs
  from NaN), along a dim as whole slices; the inverse is each element's (or slice's)
  run number, the counts the runs' lengths.

A result not asked for (``return_inverse=False``...) is an empty int64 tensor, as in
eager. The number of values depends on the data: OpenVINO's NonZero gives it, and the
delegate returns an output of the size each call produces.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround
from .context import constant_argument
from .ordering import axis_of, i64, rank, size_along, stable_sort_indices, std_sort

# _unique2(self, sorted=True, return_inverse=False, return_counts=False)
_RETURN_INVERSE, _RETURN_COUNTS = 2, 3
# unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False)
_DIM, _DIM_INVERSE, _DIM_COUNTS = 1, 3, 4
# unique_consecutive(self, return_inverse=False, return_counts=False, dim=None)
_CONSECUTIVE_INVERSE, _CONSECUTIVE_COUNTS, _CONSECUTIVE_DIM = 1, 2, 3


def _along(data: ov.Output, axis: int, start, stop) -> ov.Output:
    return ops.slice(data, i64([start]), stop, i64([1]), i64([axis])).output(0)


def _run_starts(data: ov.Output, axis: int) -> ov.Output:
    """Along `axis`, whether each element (or slice) differs from the one before it: the first
    does, and so does NaN from NaN. Shape [size of axis]."""
    size = size_along(data, axis)
    rest = ops.unsqueeze(ops.subtract(size, i64(1)), i64(0))
    differs = ops.not_equal(_along(data, axis, 1, i64([np.iinfo(np.int64).max])), _along(data, axis, 0, rest))
    other_axes = [a for a in range(rank(data)) if a != axis]
    if other_axes:
        differs = ops.reduce_logical_or(differs, i64(other_axes), False)
    first = ops.broadcast(ops.constant(True), ops.minimum(ops.unsqueeze(size, i64(0)), i64([1])))
    return ops.concat([first, differs], 0).output(0)


def _runs(starts: ov.Output):
    """(the position of each run's first element, each element's run number, each run's length)."""
    positions = ops.squeeze(ops.non_zero(starts, "i64"), i64([0])).output(0)
    run_number = ops.subtract(ops.cumsum(ops.convert(starts, "i64"), i64(0)), i64(1)).output(0)
    ends = ops.concat([_along(positions, 0, 1, i64([np.iinfo(np.int64).max])), ops.shape_of(starts, "i64")], 0)
    return positions, run_number, ops.subtract(ends, positions).output(0)


def _empty() -> ov.Output:
    return ops.constant(np.zeros([0], dtype=np.int64)).output(0)


def _results(values, inverse, counts, return_inverse: bool, return_counts: bool) -> List[ov.Output]:
    return [values, inverse if return_inverse else _empty(), counts if return_counts else _empty()]


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten._unique2 (2026.4.1): eager's results, computed")
def translate_unique(context) -> List[ov.Output]:
    tensor = context.get_input(0)
    flat = ops.reshape(tensor, i64([-1]), False).output(0)
    values, order = std_sort(flat, 0)
    positions, run_number, counts = _runs(_run_starts(values, 0))
    # Element order[i] of the input is the i-th sorted, whose value is run_number[i].
    inverse = ops.scatter_elements_update(ops.broadcast(i64(0), ops.shape_of(flat, "i64")), order, run_number, i64(0))
    inverse = ops.reshape(inverse, ops.shape_of(tensor, "i64"), False).output(0)
    return _results(
        ops.gather(values, positions, i64(0)).output(0),
        inverse,
        counts,
        bool(constant_argument(context, _RETURN_INVERSE, False)),
        bool(constant_argument(context, _RETURN_COUNTS, False)),
    )


@not_a_workaround(
    "OpenVINO's PyTorch frontend converts no aten.unique_consecutive (2026.4.1): eager's results, computed"
)
def translate_unique_consecutive(context) -> List[ov.Output]:
    tensor = context.get_input(0)
    dim: Optional[int] = constant_argument(context, _CONSECUTIVE_DIM, None)
    if dim is None:
        data, axis = ops.reshape(tensor, i64([-1]), False).output(0), 0
    else:
        data, axis = tensor, axis_of(dim, tensor)
    positions, run_number, counts = _runs(_run_starts(data, axis))
    inverse = run_number
    if dim is None:
        inverse = ops.reshape(run_number, ops.shape_of(tensor, "i64"), False).output(0)
    return _results(
        ops.gather(data, positions, i64(axis)).output(0),
        inverse,
        counts,
        bool(constant_argument(context, _CONSECUTIVE_INVERSE, False)),
        bool(constant_argument(context, _CONSECUTIVE_COUNTS, False)),
    )


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.unique_dim (2026.4.1): eager's results, computed")
def translate_unique_dim(context) -> List[ov.Output]:
    tensor = context.get_input(0)
    axis = axis_of(constant_argument(context, _DIM, 0), tensor)
    order = [axis] + [a for a in range(rank(tensor)) if a != axis]
    slices = ops.transpose(tensor, i64(order)).output(0)  # the slices along the first axis
    shape = slices.get_partial_shape()
    width = int(np.prod([shape[a].get_length() for a in range(1, rank(tensor))]))
    rows = ops.reshape(slices, i64([-1, width]), False).output(0)
    # Lexicographic order: stable sorts by each column, the last column first.
    permutation = ops.range(i64(0), size_along(rows, 0), i64(1), "i64").output(0)
    for column in reversed(range(width)):
        key = ops.gather(ops.gather(rows, i64(column), i64(1)), permutation, i64(0)).output(0)
        permutation = ops.gather(permutation, stable_sort_indices(key, 0), i64(0)).output(0)
    sorted_slices = ops.gather(slices, permutation, i64(0)).output(0)
    positions, run_number, counts = _runs(_run_starts(sorted_slices, 0))
    inverse = ops.scatter_elements_update(
        ops.broadcast(i64(0), ops.shape_of(permutation, "i64")), permutation, run_number, i64(0)
    )
    back = [order.index(a) for a in range(rank(tensor))]
    values = ops.transpose(ops.gather(sorted_slices, positions, i64(0)), i64(back)).output(0)
    return _results(
        values,
        inverse.output(0),
        counts,
        bool(constant_argument(context, _DIM_INVERSE, False)),
        bool(constant_argument(context, _DIM_COUNTS, False)),
    )
