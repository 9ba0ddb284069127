"""``aten.sort`` (values and indices) and ``aten.argsort`` in PyTorch's stable order, NaN largest.

``sort.stable`` and ``argsort.stable`` are what ``torch.sort(stable=True)`` and
``torch.argsort(stable=True)`` export to: they are computed in eager's order
exactly (ordering.py). ``sort.default``
(``torch.sort``, ``torch.argsort``) is std::sort in eager PyTorch 2.13's CPU kernel:
up to 16 values along the dim that is an insertion sort, which keeps equal values in
index order, so there the stable order is eager's order too; beyond 16, equal values
come in an order of std::sort's making, which no sort in OpenVINO reproduces. The
values, and where each NaN goes, are eager's in every case. OpenVINO's own
translation (TopK without stable order, seen on 2026.4.1) put ties in any order
and NaN anywhere.
"""

from __future__ import annotations

from typing import List

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from .context import constant_argument
from .ordering import axis_of, rank, stable_sort

# sort.stable and argsort.stable(self, *, stable=None, dim=-1, descending=False);
# sort.default(self, dim=-1, descending=False)
_STABLE_DIM, _STABLE_DESCENDING = 2, 3
_DIM, _DESCENDING = 1, 2


def _sorted(tensor: ov.Output, dim: int, descending: bool) -> List[ov.Output]:
    if rank(tensor) == 0:  # a 0-d tensor is its own sort, at index 0
        return [tensor, ops.constant(np.array(0, dtype=np.int64)).output(0)]
    return list(stable_sort(tensor, axis_of(dim, tensor), descending))


def translate_sort_stable(context) -> List[ov.Output]:
    dim = constant_argument(context, _STABLE_DIM, -1)
    descending = bool(constant_argument(context, _STABLE_DESCENDING, False))
    return _sorted(context.get_input(0), dim, descending)


def translate_sort(context) -> List[ov.Output]:
    dim = constant_argument(context, _DIM, -1)
    descending = bool(constant_argument(context, _DESCENDING, False))
    return _sorted(context.get_input(0), dim, descending)


def translate_argsort_stable(context) -> List[ov.Output]:
    return translate_sort_stable(context)[1:]
