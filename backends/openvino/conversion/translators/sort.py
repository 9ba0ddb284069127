"""``aten.sort``, ``aten.argsort`` and ``aten.topk`` in eager PyTorch's order, NaN largest.

``sort.stable`` and ``argsort.stable`` are what ``torch.sort(stable=True)`` and
``torch.argsort(stable=True)`` export to: they are computed in eager's order
exactly (ordering.py). ``sort.default`` (``torch.sort``, ``torch.argsort``) is
std::sort in eager PyTorch 2.13's CPU kernel: up to 16 values along the dim that is
an insertion sort, which keeps equal values in index order, as here; beyond 16,
equal values come in an order of std::sort's making, which no sort in OpenVINO
reproduces, and here in TopK's. The values, and where each NaN goes, are eager's in
every case. OpenVINO's own translation (TopK without stable order, seen on 2026.4.1)
put ties in any order and NaN anywhere.

``topk`` is the first k of the same order (descending for the largest): its values are
eager's, NaN counted the largest (OpenVINO's own translation returned [1, nan] as
the top 2 of [1, nan, 3, 2], eager [nan, 3]). Among equal values eager's index comes
from std::partial_sort or std::nth_element, whose order no OpenVINO op reproduces
(it differed from the stable order on 3 elements already): the indices of ties may
differ. With ``sorted=False`` eager returns the k values in an order of its own; the
partitioner leaves such a node on the CPU, where ExecuTorch's kernel runs it.
"""

from __future__ import annotations

from typing import List

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import works_around
from .context import constant_argument
from .ordering import axis_of, i64, rank, stable_sort, std_sort

# sort.stable and argsort.stable(self, *, stable=None, dim=-1, descending=False);
# sort.default(self, dim=-1, descending=False); topk(self, k, dim=-1, largest=True, sorted=True)
_STABLE_DIM, _STABLE_DESCENDING = 2, 3
_DIM, _DESCENDING = 1, 2
_K, _TOPK_DIM, _LARGEST = 1, 2, 3


def _sorted(tensor: ov.Output, dim: int, descending: bool, stable: bool) -> List[ov.Output]:
    if rank(tensor) == 0:  # a 0-d tensor is its own sort, at index 0
        return [tensor, ops.constant(np.array(0, dtype=np.int64)).output(0)]
    return list((stable_sort if stable else std_sort)(tensor, axis_of(dim, tensor), descending))


@works_around("topk_nan_anywhere")
def translate_sort_stable(context) -> List[ov.Output]:
    dim = constant_argument(context, _STABLE_DIM, -1)
    descending = bool(constant_argument(context, _STABLE_DESCENDING, False))
    return _sorted(context.get_input(0), dim, descending, stable=True)


@works_around("topk_nan_anywhere")
def translate_sort(context) -> List[ov.Output]:
    dim = constant_argument(context, _DIM, -1)
    descending = bool(constant_argument(context, _DESCENDING, False))
    return _sorted(context.get_input(0), dim, descending, stable=False)


@works_around("topk_nan_anywhere")
def translate_argsort_stable(context) -> List[ov.Output]:
    return translate_sort_stable(context)[1:]


@works_around("topk_nan_anywhere")
def translate_topk(context) -> List[ov.Output]:
    tensor = context.get_input(0)
    largest = bool(constant_argument(context, _LARGEST, True))
    if rank(tensor) == 0:
        return _sorted(tensor, 0, largest, stable=False)
    axis = axis_of(constant_argument(context, _TOPK_DIM, -1), tensor)
    count = ops.unsqueeze(ops.convert(context.get_input(_K), "i64"), i64(0))
    return [
        ops.slice(result, i64([0]), count, i64([1]), i64([axis])).output(0)
        for result in _sorted(tensor, axis, largest, stable=False)
    ]
