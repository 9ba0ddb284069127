"""``aten._embedding_bag`` (sum, mean and max) as eager PyTorch computes it.

OpenVINO's own translation (seen on 2026.4.1) ignores ``padding_idx``, refuses
``include_last_offset`` and mode max, and lowers to EmbeddingBagOffsets, whose CPU
node refuses an offset equal to the number of indices (a trailing empty bag, which
PyTorch allows). This one gives every index position a bag number and reduces the
gathered rows into their bags with ScatterElementsUpdate: exact for every mode.

Eager PyTorch 2.13's CPU kernel, which this follows (checked over thousands of
random cases, see tests/ops/test_embedding_bag.py):

- bag b takes the positions ``offsets[b] .. offsets[b + 1] - 1``; with
  ``include_last_offset`` there is one bag fewer than offsets;
- the last bag runs to the end of the indices, except that in modes sum and mean
  without a ``padding_idx`` it ends at the last offset when ``include_last_offset``
  is set (eager honours a last offset below the number of indices there);
- mean divides by the number of non-padding positions up to the end of the
  indices (for the last bag too, whatever the last offset), and an empty bag is 0;
- positions holding ``padding_idx`` take no part; a bag with none left is 0.

Only the first of the op's four results is computed: the partitioner keeps nodes
whose other results are read on the CPU (partition/argument_rules.py), and the
graph pass ``single_output_embedding_bag`` hands the frontend a node with one.
"""

from __future__ import annotations

from typing import List

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import works_around
from .context import constant_argument, is_none

SUM, MEAN, MAX = 0, 1, 2
# _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
#                per_sample_weights=None, include_last_offset=False, padding_idx=-1)
_WEIGHT, _INDICES, _OFFSETS, _MODE, _PER_SAMPLE_WEIGHTS, _INCLUDE_LAST_OFFSET, _PADDING_IDX = 0, 1, 2, 4, 6, 7, 8


def _i64(value) -> ov.Node:
    return ops.constant(np.array(value, dtype=np.int64))


def _length(tensor: ov.Output) -> ov.Node:
    """The first dimension's size, as a 1-element i64 tensor."""
    return ops.gather(ops.shape_of(tensor, "i64"), _i64([0]), _i64(0))


def _head(tensor: ov.Output, length: ov.Output) -> ov.Node:
    return ops.slice(tensor, _i64([0]), length, _i64([1]))


@works_around("embedding_bag_translation")
def translate_embedding_bag(context) -> List[ov.Output]:
    if is_none(context, _OFFSETS):
        raise ValueError("embedding_bag without offsets is not translated")
    weight = context.get_input(_WEIGHT)
    indices = ops.convert(context.get_input(_INDICES), "i64")
    offsets = ops.convert(context.get_input(_OFFSETS), "i64")
    mode = constant_argument(context, _MODE, SUM)
    include_last_offset = bool(constant_argument(context, _INCLUDE_LAST_OFFSET, False))
    padding_idx = constant_argument(context, _PADDING_IDX, -1)
    if mode not in (SUM, MEAN, MAX):
        raise ValueError(f"embedding_bag mode {mode} is not one of sum (0), mean (1), max (2)")

    count = _length(indices)  # N
    bags = ops.subtract(_length(offsets), _i64([1])) if include_last_offset else _length(offsets)  # B
    # Clamped into 0..N, so that a bad offset cannot make the scatter below write
    # outside its tensor (eager raises on it; the result is then unspecified).
    starts = ops.minimum(ops.maximum(_head(offsets, bags), _i64(0)), ops.squeeze(count, _i64(0)))
    bag_of_position = _bag_of_each_position(starts, count)

    not_padding = ops.not_equal(indices, _i64(padding_idx)) if padding_idx >= 0 else None
    taken = not_padding
    if mode != MAX and include_last_offset and padding_idx < 0:
        last_offset = ops.gather(offsets, ops.subtract(_length(offsets), _i64([1])), _i64(0))
        positions = ops.range(_i64(0), ops.squeeze(count, _i64(0)), _i64(1), "i64")
        taken = ops.less(positions, last_offset)
    if taken is not None:
        # Positions left out go to one more bag, dropped at the end.
        bag_of_position = ops.select(taken, bag_of_position, ops.squeeze(bags, _i64(0)))

    rows = ops.gather(weight, indices, _i64(0))  # [N, D]
    if not is_none(context, _PER_SAMPLE_WEIGHTS):
        weights = ops.convert_like(context.get_input(_PER_SAMPLE_WEIGHTS), weight)
        rows = ops.multiply(rows, ops.unsqueeze(weights, _i64(1)))
    width = ops.gather(ops.shape_of(weight, "i64"), _i64([1]), _i64(0))
    zeros = ops.broadcast(ops.convert_like(_i64(0), weight), ops.concat([ops.add(bags, _i64([1])), width], 0))
    row_bags = ops.broadcast(ops.unsqueeze(bag_of_position, _i64(1)), ops.shape_of(rows, "i64"))
    if mode == MAX:
        # Without the initial zeros in the maximum: a bag with no row stays 0.
        reduced = ops.scatter_elements_update(zeros, row_bags, rows, _i64(0), "max", False)
    else:
        reduced = ops.scatter_elements_update(zeros, row_bags, rows, _i64(0), "sum", True)
    result = _head(reduced, bags)
    if mode == MEAN:
        result = ops.divide(result, ops.unsqueeze(_bag_sizes(starts, count, not_padding, weight), _i64(1)))
    return [result.output(0)]


def _bag_of_each_position(starts: ov.Output, count: ov.Output) -> ov.Node:
    """For each index position, the number of the bag it falls in (-1 before the first).

    One mark per bag at its start (several for empty bags), summed cumulatively.
    """
    marks = ops.broadcast(_i64(0), ops.add(count, _i64([1])))
    ones = ops.broadcast(_i64(1), ops.shape_of(starts, "i64"))
    marks = ops.scatter_elements_update(marks, starts, ones, _i64(0), "sum")
    return ops.subtract(_head(ops.cumsum(marks, _i64(0)), count), _i64(1))


def _bag_sizes(starts: ov.Output, count: ov.Output, not_padding, like: ov.Output) -> ov.Node:
    """Each bag's number of non-padding positions up to the next start (the last: to the end), at least 1."""
    counted = ops.convert(not_padding, "i64") if not_padding is not None else ops.broadcast(_i64(1), count)
    counted_before = ops.concat([_i64([0]), ops.cumsum(counted, _i64(0))], 0)  # [N + 1]
    ends = ops.concat([ops.slice(starts, _i64([1]), _i64([np.iinfo(np.int64).max]), _i64([1])), count], 0)
    sizes = ops.subtract(ops.gather(counted_before, ends, _i64(0)), ops.gather(counted_before, starts, _i64(0)))
    return ops.convert_like(ops.maximum(sizes, _i64(1)), like)
