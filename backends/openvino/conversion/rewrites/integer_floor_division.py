"""Python's ``//`` of symbolic ints rebuilt from a truncating division.

The PyTorch frontend converts ``a // b`` of symbolic ints (``(x.size(-1) - 9) // 8``
and other arithmetic on sizes, which OpenVINO computes inside the delegate) to a
Divide marked ``pythondiv``, but OpenVINO 2026.4.1's CPU plugin truncates anyway:
``-7 // 8`` gave 0 and ``-9 // 8`` gave -1, where Python gives -1 and -2, without an
error. A symbolic remainder written as ``a - (a // b) * b`` (partition/symbolic_remainder.py)
then came out negative, and a pad to a multiple of 8 cropped.

Only the Divides the frontend makes for Python's ``//`` operator are rewritten, found
by the name it gives them: it also marks ``pythondiv`` on divisions it means to
truncate (``torch.div(x, y, rounding_mode="trunc")`` of int16), which the plugin's
truncation gets right. Tensor floor division is rewritten before conversion
(passes/decompose_integer_floor_divide.py).

Truncation is right, so the floor is taken from it: one less where the division
leaves a remainder whose sign differs from the divisor's. The comparisons are with
zero, which the CPU plugin gets right at any size.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

from .model_edits import scalar_like

#: In the friendly name the frontend gives the nodes it makes for Python's ``//``.
FLOOR_DIVISION_NAME = "<built-in function floordiv>"


def floor_integer_divisions(model: ov.Model) -> None:
    """Rebuilds each signed integer Divide made for Python's ``//`` from a truncating one, in place."""
    changed = False
    for node in model.get_ordered_ops():
        element_type = node.get_output_element_type(0)
        if node.get_type_name() != "Divide" or not (element_type.is_integral_number() and element_type.is_signed()):
            continue
        if FLOOR_DIVISION_NAME not in node.get_friendly_name() or not node.get_attributes().get("m_pythondiv", False):
            continue
        node.output(0).replace(_floor_of_truncation(node))
        changed = True
    if changed:
        model.validate_nodes_and_infer_types()


def _floor_of_truncation(division: ov.Node) -> ov.Output:
    dividend, divisor = division.input_value(0), division.input_value(1)
    truncated = ov_ops.divide(dividend, divisor, name=division.get_friendly_name())
    truncated.set_attribute("m_pythondiv", False)
    remainder = ov_ops.subtract(dividend, ov_ops.multiply(truncated, divisor))
    zero = scalar_like(remainder.output(0), 0)
    signs_differ = ov_ops.not_equal(ov_ops.less(remainder, zero), ov_ops.less(divisor, zero))
    one_less = ov_ops.logical_and(ov_ops.not_equal(remainder, zero), signs_differ)
    return ov_ops.subtract(truncated, ov_ops.convert(one_less, truncated.get_output_element_type(0))).output(0)
