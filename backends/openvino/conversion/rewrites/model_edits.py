"""Small edits of an OpenVINO model the rewrites in this package share."""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around


def scalar_like(value: ov.Output, number: float) -> ov.Output:
    """A 0-d constant `number` of `value`'s element type.

    Floats are made in f32 and converted, which OpenVINO folds: numpy has no bfloat16
    (``to_dtype()`` gives float16 for it, a type mismatch), and OpenVINO's constant
    builder refuses an infinity for bf16.
    """
    element_type = value.get_element_type()
    if element_type.is_real():
        return ov_ops.convert(ov_ops.constant(np.float32(number)), element_type).output(0)
    return ov_ops.constant(np.array(number, dtype=element_type.to_dtype())).output(0)


def put_after(output: ov.Output, replacement: ov.Output) -> None:
    """Makes every reader of `output` read `replacement`, which reads `output` itself.

    The tensor names move too, so a model output keeps its name.
    """
    output.replace(replacement)  # leaves the replacement's own input alone
    output.get_tensor().set_names(set())


@works_around("integer_select_in_float32")
def select_integers(condition: ov.Output, chosen: ov.Output, other: ov.Output) -> ov.Output:
    """``Select(condition, chosen, other)`` for int32/int64 values, written as ``other + (chosen - other) * condition``.

    OpenVINO 2026.4.1's CPU plugin fuses a comparison and the Select that reads it into
    one eltwise kernel that computes the Select in float32: ``where(x != 0, a, b)`` of
    int32 gave -2**31 for 2**31 - 1. Integer subtract, multiply and add are exact (they
    wrap, so the sum gives ``chosen`` back exactly).
    """
    element_type = chosen.get_element_type()
    taken = ov_ops.convert(condition, element_type)
    return ov_ops.add(other, ov_ops.multiply(ov_ops.subtract(chosen, other), taken)).output(0)
