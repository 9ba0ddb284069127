"""``aten.clamp.Tensor``: a clamp whose bounds are tensors (PhiMoE's expert routing).

OpenVINO's PyTorch frontend converts ``clamp`` with number bounds but not
``clamp.Tensor`` (2026.4.1), so it ran on ExecuTorch's CPU kernel and split the
delegate around it (PhiMoE: three delegates). As PyTorch computes it:
``min(max(x, low), high)``, so a low bound above the high one gives the high one, and
NaN in ``x`` or in a bound comes out NaN. Bounds are converted to ``x``'s type; an
integer ``x`` with float bounds (a float result in PyTorch) is left to the CPU.
"""

from __future__ import annotations

from typing import List, Optional

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround
from ..rewrites.model_edits import scalar_like
from .context import is_none


def _bound(context, index: int, x: ov.Output) -> Optional[ov.Output]:
    if is_none(context, index):
        return None
    bound = context.get_input(index)
    if x.get_element_type().is_integral() and bound.get_element_type().is_real():
        raise TypeError("clamp.Tensor of an integer tensor by float bounds is left to ExecuTorch's kernel")
    return ops.convert_like(bound, x).output(0)


def _nan_where_any_is(result: ov.Output, values: List[ov.Output]) -> ov.Output:
    """`result`, NaN wherever one of `values` is (the CPU plugin's Maximum and Minimum drop it)."""
    masks = [ops.is_nan(value).output(0) for value in values if value.get_element_type().is_real()]
    if not masks:
        return result
    any_nan = masks[0]
    for mask in masks[1:]:
        any_nan = ops.logical_or(any_nan, mask).output(0)
    return ops.select(any_nan, scalar_like(result, float("nan")), result).output(0)


@not_a_workaround("OpenVINO 2026.4.1's PyTorch frontend has no conversion of aten.clamp.Tensor: an op it lacks")
def translate_clamp_tensor(context) -> List[ov.Output]:
    x = context.get_input(0)
    low, high = _bound(context, 1, x), _bound(context, 2, x)
    result = x
    if low is not None:
        result = ops.maximum(result, low).output(0)
    if high is not None:
        result = ops.minimum(result, high).output(0)
    return [_nan_where_any_is(result, [value for value in (x, low, high) if value is not None])]
