"""``torch.histc`` with the bins eager PyTorch puts each value in, for a range given as constants.

Eager PyTorch 2.13's CPU kernel (linear interpolation, no search) takes the range's
ends as float32 (the ends of ``linspace(min, max, bins + 1)``), skips values outside
them and NaN, and puts value x in bin ``int((x - min) * bins / (max - min))``,
computed in float32 one operation at a time and truncated, the last bin taking x =
max. A value on a bin's edge can land in the bin below through that rounding (the
float32 2/3, the edge ``linspace(0, 1, 4)[2]``, goes to bin 1 of 3), so the bins here are not computed by
division, which OpenVINO's CPU plugin does through a reciprocal up to an ulp off
(2026.4.1): for each bin, the smallest float32 that eager puts in it or above is
found when the program is lowered (a binary search over the float32 values with
eager's formula, each result checked with eager's histc itself), and a value's bin
is the number of those thresholds at or below it. The counts are summed in float32
as eager does, exact below 2**24 per bin.

``min == max`` (the default) takes the range from the data at run time, which needs
that division: the partitioner leaves such a node on the CPU (partition/sort_family.py),
as it does a float64 or bfloat16 input (eager bins those in their own precision).
"""

from __future__ import annotations

from typing import List, Tuple

import numpy as np
import torch

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import works_around
from .context import constant_argument
from .ordering import i64
from .search import search

# histc(self, bins=100, min=0, max=0)
_BINS, _MIN, _MAX = 1, 2, 3
_FLOAT32_BITS = 32


def _ordered(values: torch.Tensor) -> torch.Tensor:
    """int64 keys that order float32 values as their values do (-0.0 and 0.0 both 0)."""
    bits = values.view(torch.int32).to(torch.int64)
    return torch.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _from_ordered(keys: torch.Tensor) -> torch.Tensor:
    bits = torch.where(keys < 0, (-keys) | -0x80000000, keys)
    return bits.to(torch.int32).view(torch.float32)


def _eager_bins(values: torch.Tensor, bins: int, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """The bin eager's formula gives each float32 of `values`, before the last bin takes `high`."""
    return ((values - low) * bins / (high - low)).to(torch.int64)


def bin_thresholds(bins: int, low: float, high: float) -> Tuple[float, float, np.ndarray]:
    """(range start, range end, float32 thresholds): a value in the range goes to the bin
    numbered by how many of the `bins` - 1 thresholds are at or below it, as in eager."""
    edges = torch.linspace(low, high, bins + 1, dtype=torch.float32)
    start, end = edges[0], edges[-1]
    wanted = torch.arange(1, bins, dtype=torch.int64)
    lower = torch.full_like(wanted, int(_ordered(start.reshape(1))))
    upper = torch.full_like(wanted, int(_ordered(end.reshape(1))))
    for _ in range(_FLOAT32_BITS + 1):  # the smallest key whose value eager puts in bin `wanted` or above
        middle = (lower + upper) // 2
        reached = _eager_bins(_from_ordered(middle), bins, start, end) >= wanted
        upper = torch.where(reached, middle, upper)
        lower = torch.where(reached, lower, middle + 1)
    thresholds = _from_ordered(upper)
    _check_with_eager(thresholds, bins, float(start), float(end))
    return float(start), float(end), thresholds.numpy()


def _check_with_eager(thresholds: torch.Tensor, bins: int, start: float, end: float) -> None:
    """Each threshold, and the float32 below it, go where eager's histc puts them."""
    below = torch.nextafter(thresholds, torch.tensor(-np.inf))
    for probe, expected in [(t, k + 1) for k, t in enumerate(thresholds)] + [(b, k) for k, b in enumerate(below)]:
        if probe < start:
            continue
        got = int(torch.histc(probe.reshape(1), bins, start, end).argmax())
        if got != expected:
            raise ValueError(f"histc's bin for {float(probe)!r} is {got}, not {expected} as computed for bins={bins}")


@works_around("float_division_one_ulp_off")
def translate_histc(context) -> List[ov.Output]:
    bins = int(constant_argument(context, _BINS, 100))
    start, end, thresholds = bin_thresholds(
        bins, float(constant_argument(context, _MIN, 0)), float(constant_argument(context, _MAX, 0))
    )
    values = ops.convert(ops.reshape(context.get_input(0), i64([-1]), False), "f32").output(0)
    inside = ops.logical_and(
        ops.greater_equal(values, ops.constant(np.float32(start))),
        ops.less_equal(values, ops.constant(np.float32(end))),
    )
    table = ops.constant(thresholds.astype(np.float32)).output(0)
    bin_of_value = (
        search(table, values, right=True, sorter=None)
        if bins > 1
        else ops.broadcast(i64(0), ops.shape_of(values, "i64")).output(0)
    )
    # Values outside the range go to one more bin, dropped at the end.
    bin_of_value = ops.select(inside, bin_of_value, i64(bins))
    counts = ops.scatter_elements_update(
        ops.constant(np.zeros(bins + 1, dtype=np.float32)),
        bin_of_value,
        ops.broadcast(ops.constant(np.float32(1)), ops.shape_of(values, "i64")),
        i64(0),
        "sum",
        True,
    )
    return [ops.slice(counts, i64([0]), i64([bins]), i64([1])).output(0)]
