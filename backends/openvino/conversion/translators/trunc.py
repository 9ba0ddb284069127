"""``aten.trunc``: rounding toward zero, which OpenVINO has no op for.

OpenVINO's PyTorch frontend does not convert ``trunc`` (2026.4.1), so it ran on
ExecuTorch's CPU kernel, splitting the delegate around it. For floats it is
``ceil(x)`` below zero and ``floor(x)`` elsewhere: exact, and as eager PyTorch 2.13
gives it for ``-0.5`` (``-0.0``), ``-0.0``, NaN, infinities and values past 2**31
(checked on the CPU plugin for float32 and float16). Integers are their own
truncation: the input itself, which the conversion treats as the copy it is.
"""

from __future__ import annotations

from typing import List

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround


@not_a_workaround(
    "OpenVINO 2026.4.1's PyTorch frontend has no conversion of aten.trunc: an op it lacks, not one it computes wrong"
)
def translate_trunc(context) -> List[ov.Output]:
    value = context.get_input(0)
    if not value.get_element_type().is_real():
        return [value]
    below_zero = ops.less(value, ops.convert_like(ops.constant(np.float32(0)), value))
    return [ops.select(below_zero, ops.ceiling(value), ops.floor(value)).output(0)]
