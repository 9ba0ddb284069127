"""``bucketize`` and ``searchsorted``: eager PyTorch's binary search, step by step.

Eager PyTorch 2.13's CPU kernel searches each value in its row of the sequence
(through ``sorter`` when given) with a binary search of its own: while start < end,
mid = start + (end - start) // 2, and start = mid + 1 when ``!(sequence[mid] >= value)``
(``side="left"``, ``right=False``) or ``!(sequence[mid] > value)`` (``right=True``),
else end = mid. The result is start. So a NaN value finds the end of the sequence,
and an unsorted sequence or one holding NaN gives whatever those steps give; both
are reproduced here by the same steps, unrolled (one per bit of the sequence's
length; a dynamic length takes 32), on every value at once. Checked against eager
on random sorted, unsorted and NaN-holding sequences, with and without a sorter.

Values and sequence are compared in the dtype PyTorch promotes them to (a float
scalar against an int sequence as float32, an int scalar in the sequence's dtype);
the result is int64, or int32 with ``out_int32``.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

import openvino as ov
import openvino.opset15 as ops

from ...edge_graph.dtypes import OPENVINO_TYPES
from ...workarounds import not_a_workaround
from .context import constant_argument, is_none, string_argument
from .ordering import i64, rank, size_along

# bucketize.Tensor/Scalar(self, boundaries, out_int32=False, right=False)
_BUCKETIZE_OUT_INT32, _BUCKETIZE_RIGHT = 2, 3
# searchsorted.Tensor/Scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None)
_SEARCH_OUT_INT32, _SEARCH_RIGHT, _SEARCH_SIDE, _SEARCH_SORTER = 2, 3, 4, 5
_DYNAMIC_LENGTH_STEPS = 32
_TORCH_TYPES = {ov_type: dtype for dtype, ov_type in OPENVINO_TYPES.items()}


def _torch_type(tensor: ov.Output) -> torch.dtype:
    return _TORCH_TYPES[tensor.get_element_type()]


def _compared(sequence: ov.Output, values, value_is_scalar: bool):
    """The sequence and the values (a tensor, or a Python number for the Scalar overloads) in
    the dtype PyTorch compares them in."""
    sequence_type = _torch_type(sequence)
    if value_is_scalar:
        common = torch.result_type(torch.empty(1, dtype=sequence_type), values)
        # Converted as PyTorch converts it (an int wraps into a narrower int dtype).
        value = torch.tensor(values).to(common).to(torch.float64 if common.is_floating_point else torch.int64)
        values = ops.convert(ops.constant(np.array(value.item())), OPENVINO_TYPES[common]).output(0)
    else:
        common = torch.promote_types(sequence_type, _torch_type(values))
        values = ops.convert(values, OPENVINO_TYPES[common]).output(0)
    return ops.convert(sequence, OPENVINO_TYPES[common]).output(0), values


def search(sequence: ov.Output, values: ov.Output, right: bool, sorter: Optional[ov.Output]) -> ov.Output:
    """Eager's binary search of each of `values` in `sequence` (1-d, or one row per leading index)."""
    axis = rank(sequence) - 1
    length = sequence.get_partial_shape()[axis]
    steps = length.get_length().bit_length() if length.is_static else _DYNAMIC_LENGTH_STEPS
    size = size_along(sequence, axis)
    last = ops.maximum(ops.subtract(size, i64(1)), i64(0))
    start = ops.broadcast(i64(0), ops.shape_of(values, "i64")).output(0)
    end = ops.broadcast(size, ops.shape_of(values, "i64")).output(0)

    def at(table: ov.Output, positions: ov.Output) -> ov.Output:
        if axis == 0:
            return ops.gather(table, positions, i64(0)).output(0)
        return ops.gather_elements(table, positions, axis).output(0)

    for _ in range(steps):
        searching = ops.less(start, end)
        middle = ops.add(start, ops.divide(ops.subtract(end, start), i64(2))).output(0)
        # Where the search is over, middle may be the length: any position will do there.
        position = ops.minimum(middle, last).output(0)
        if sorter is not None:
            position = at(sorter, position)
        pivot = at(sequence, position)
        go_up = ops.logical_not(ops.greater(pivot, values) if right else ops.greater_equal(pivot, values))
        start = ops.select(ops.logical_and(searching, go_up), ops.add(middle, i64(1)), start).output(0)
        end = ops.select(ops.logical_and(searching, ops.logical_not(go_up)), middle, end).output(0)
    return start


def _result(start: ov.Output, out_int32: bool) -> List[ov.Output]:
    return [ops.convert(start, "i32").output(0) if out_int32 else start]


def _bucketize(context, value_is_scalar: bool) -> List[ov.Output]:
    boundaries = context.get_input(1)
    values = context.get_values_from_const_input(0) if value_is_scalar else context.get_input(0)
    boundaries, values = _compared(boundaries, values, value_is_scalar)
    right = bool(constant_argument(context, _BUCKETIZE_RIGHT, False))
    return _result(
        search(boundaries, values, right, None), bool(constant_argument(context, _BUCKETIZE_OUT_INT32, False))
    )


@not_a_workaround("OpenVINO's PyTorch frontend converts no aten.bucketize (2026.4.1): eager's binary search, computed")
def translate_bucketize(context) -> List[ov.Output]:
    return _bucketize(context, value_is_scalar=False)


@not_a_workaround(
    "OpenVINO's PyTorch frontend converts no aten.bucketize.Scalar (2026.4.1): eager's binary search, computed"
)
def translate_bucketize_scalar(context) -> List[ov.Output]:
    return _bucketize(context, value_is_scalar=True)


def _searchsorted(context, value_is_scalar: bool) -> List[ov.Output]:
    sequence = context.get_input(0)
    values = context.get_values_from_const_input(1) if value_is_scalar else context.get_input(1)
    sequence, values = _compared(sequence, values, value_is_scalar)
    right = (
        bool(constant_argument(context, _SEARCH_RIGHT, False))
        or string_argument(context, _SEARCH_SIDE, None) == "right"
    )
    sorter = (
        None if is_none(context, _SEARCH_SORTER) else ops.convert(context.get_input(_SEARCH_SORTER), "i64").output(0)
    )
    return _result(search(sequence, values, right, sorter), bool(constant_argument(context, _SEARCH_OUT_INT32, False)))


@not_a_workaround(
    "OpenVINO's PyTorch frontend converts no aten.searchsorted (2026.4.1): eager's binary search, computed"
)
def translate_searchsorted(context) -> List[ov.Output]:
    return _searchsorted(context, value_is_scalar=False)


@not_a_workaround(
    "OpenVINO's PyTorch frontend converts no aten.searchsorted.Scalar (2026.4.1): eager's binary search, computed"
)
def translate_searchsorted_scalar(context) -> List[ov.Output]:
    return _searchsorted(context, value_is_scalar=True)
