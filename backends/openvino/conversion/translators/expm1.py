"""``aten.expm1``: ``exp(x) - 1`` to full precision near zero.

OpenVINO's PyTorch frontend has no conversion of ``expm1`` (2026.4.1), so it ran on
ExecuTorch's CPU kernel and split the delegate around it (Apertus' xIELU activation:
four delegates). ``exp(x) - 1`` alone loses ``x`` where it is small (``1e-9`` gives 0),
so where ``|x| < 0.5`` the series ``x + x**2/2! + ... + x**12/12!`` is used (its first
omitted term is below 1e-13 of the result) and ``exp(x) - 1`` elsewhere, whose rounding
error there is below 2e-7 of the result. NaN and infinities come out as eager's.
"""

from __future__ import annotations

from typing import List

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround
from ..rewrites.model_edits import scalar_like

_SERIES_TERMS = 12
_SERIES_BELOW = 0.5


@not_a_workaround("OpenVINO 2026.4.1's PyTorch frontend has no conversion of aten.expm1: an op it lacks")
def translate_expm1(context) -> List[ov.Output]:
    x = context.get_input(0)
    if not x.get_element_type().is_real():
        x = ops.convert(x, ov.Type.f32).output(0)  # eager's expm1 of integers is float32
    # Horner's form of x * (1 + x/2 * (1 + x/3 * (1 + ... * (1 + x/12)))).
    series = scalar_like(x, 1.0)
    for term in range(_SERIES_TERMS, 1, -1):
        step = ops.multiply(ops.multiply(x, scalar_like(x, 1.0 / term)), series)
        series = ops.add(scalar_like(x, 1.0), step).output(0)
    series = ops.multiply(x, series).output(0)
    near_zero = ops.less(ops.abs(x), scalar_like(x, _SERIES_BELOW))
    far = ops.subtract(ops.exp(x), scalar_like(x, 1.0))
    result = ops.select(near_zero, series, far)
    return [ops.select(ops.is_nan(x), x, result).output(0)]  # the CPU plugin's Exp of NaN is not NaN
