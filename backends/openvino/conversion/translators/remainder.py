"""``aten.remainder``: the remainder of floor division, for OpenVINO releases whose FX table lacks it.

OpenVINO 2025.1.0 and 2025.4.1's PyTorch frontend convert ``aten::remainder`` from
TorchScript but not ``aten.remainder.Tensor`` or ``.Scalar`` from FX graphs (2026.4.1
does, as a ``FloorMod``). The op then stayed on ExecuTorch's CPU kernel, and ExecuTorch
1.5.1's portable ``remainder`` returns C's truncated remainder for integers: ``-5 % 3``
gave -2 where PyTorch gives 1, with no error (found by running the op tests on 2025.1.0).
On those releases this translator gives the op the ``FloorMod`` 2026.4.1's frontend
builds; on 2026.4.1 and later the frontend's own conversion stays.

Its operands take PyTorch's result type (``torch.result_type``): a Python number takes
the tensor's type, or both become float32 (PyTorch's default float type) for an integer
tensor and a float number; two tensors follow PyTorch's categories, a 0-d one beside one
with dimensions setting the type only when its category is higher.
"""

from __future__ import annotations

import re
from typing import List, Tuple

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import not_a_workaround

#: The first release whose FX table converts aten.remainder (checked: 2025.1.0 and 2025.4.1 do not).
FRONTEND_CONVERTS_REMAINDER_FROM = (2026, 4)


def frontend_converts_remainder(version: str) -> bool:
    """Whether OpenVINO `version` ("2025.4.1-20426-...") converts aten.remainder from FX graphs itself."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return match is None or (int(match.group(1)), int(match.group(2))) >= FRONTEND_CONVERTS_REMAINDER_FROM


def _floor_mod(x: ov.Output, y: ov.Output) -> List[ov.Output]:
    return [ops.floor_mod(x, y).output(0)]


def _category(element_type: ov.Type) -> int:
    """PyTorch's promotion categories: bool 0, integers 1, floats 2."""
    return 2 if element_type.is_real() else 0 if element_type == ov.Type.boolean else 1


def _is_zero_dim(value: ov.Output) -> bool:
    rank = value.get_partial_shape().rank
    return rank.is_static and rank.get_length() == 0


def _wider(first: ov.Type, second: ov.Type) -> ov.Type:
    """The type of one category that holds both (PyTorch: uint8 and int8 make int16)."""
    if {first, second} == {ov.Type.u8, ov.Type.i8}:
        return ov.Type.i16
    return first if first.bitwidth >= second.bitwidth else second


def _promoted_tensors(x: ov.Output, y: ov.Output) -> Tuple[ov.Output, ov.Output]:
    """Both tensors in PyTorch's result type: a 0-d tensor beside one with dimensions sets
    the type only if its category is higher; otherwise the higher category, then the wider type."""
    x_type, y_type = x.get_element_type(), y.get_element_type()
    if x_type == y_type:
        return x, y
    if _is_zero_dim(x) != _is_zero_dim(y):
        dimensioned, zero_dim = (y_type, x_type) if _is_zero_dim(x) else (x_type, y_type)
        result = zero_dim if _category(zero_dim) > _category(dimensioned) else dimensioned
    elif _category(x_type) != _category(y_type):
        result = x_type if _category(x_type) > _category(y_type) else y_type
    else:
        result = _wider(x_type, y_type)
    return ops.convert(x, result).output(0), ops.convert(y, result).output(0)


@not_a_workaround(
    "OpenVINO 2025.1.0 and 2025.4.1's PyTorch frontend have no FX conversion of aten.remainder: an op they lack"
)
def translate_remainder_tensor(context) -> List[ov.Output]:
    return _floor_mod(*_promoted_tensors(context.get_input(0), context.get_input(1)))


@not_a_workaround(
    "OpenVINO 2025.1.0 and 2025.4.1's PyTorch frontend have no FX conversion of aten.remainder: an op they lack"
)
def translate_remainder_scalar(context) -> List[ov.Output]:
    x, y = context.get_input(0), context.get_input(1)
    if x.get_element_type().is_integral() and y.get_element_type().is_real():
        return _floor_mod(ops.convert(x, ov.Type.f32).output(0), ops.convert(y, ov.Type.f32).output(0))
    return _floor_mod(x, ops.convert_like(y, x).output(0))
