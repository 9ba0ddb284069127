"""Integer floor division rebuilt from a truncating division.

The PyTorch frontend converts an integer floor division to a Divide marked
``pythondiv`` (Python's floor), but OpenVINO 2026.4.1's CPU plugin truncates anyway:
``-7 // 8`` gave 0 and ``-9 // 8`` gave -1, where Python gives -1 and -2, for int16,
int32 and int64 alike, without an error. Both forms come here:

- tensor floor division (``x // y``, ``torch.div(x, y, rounding_mode="floor")``,
  ``torch.floor_divide``): a Divide read by a Floor, which is no-op on integers;
- Python's ``//`` of symbolic ints (``(x.size(-1) - 9) // 8`` and other arithmetic on
  sizes, computed inside the delegate): a Divide the frontend names after the
  ``floordiv`` builtin. A symbolic remainder written as ``a - (a // b) * b``
  (pre_decomposition/symbolic_remainder.py) came out negative, and a pad to a multiple of 8
  cropped.

Other Divides marked ``pythondiv`` are left alone: the frontend marks truncating
division too (``torch.div(x, y, rounding_mode="trunc")``, a Divide read by Converts,
or by nothing for int32), which the plugin's truncation gets right.

Truncation is right, so the floor is taken from it: one less where the quotient is
inexact (the dividend is not the quotient times the divisor) and the operands' signs
differ. The remainder itself is not computed: the plugin gave int8 ``-128 - (-128)``
as -1, so ``-128 // 2`` came out -65. The comparisons with zero are exact at any size;
for int32 and int64 the comparison of the dividend with the product is made exact by
compare_integers_exactly (exact_integer_comparisons.py), which runs after this rewrite.
Unsigned division needs nothing: its floor is its truncation. An int8 ``-128 // -1``
overflows: 127 here, -128 in eager PyTorch (its truncation, too).

The Floor the frontend puts after an integer division is dropped: the CPU plugin
computes a Floor of int32 in float32 (2026.4.1), so ``floor(851235684)`` gave
851235712, and every int32 floor division past 2**24 came out rounded, though the
division before it is exact (exact_integer_division.py, which runs after this).
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import scalar_like

#: In the friendly name the frontend gives the nodes it makes for Python's ``//``.
FLOOR_DIVISION_NAME = "<built-in function floordiv>"


@works_around("integer_floor_division", "integer_floor_in_float32")
def floor_integer_divisions(model: ov.Model) -> None:
    """Rebuilds each signed integer floor division from a truncating one, and drops integer Floors, in place."""
    changed = False
    for node in model.get_ordered_ops():
        if _is_integer_floor(node):
            node.output(0).replace(node.input_value(0))
            changed = True
        elif _is_integer_floor_division(node):
            node.output(0).replace(_floor_of_truncation(node))
            changed = True
    if changed:
        model.validate_nodes_and_infer_types()


def _is_integer_floor(node: ov.Node) -> bool:
    """A Floor of integers: its input unchanged, which the plugin computes in float32."""
    return node.get_type_name() == "Floor" and node.get_output_element_type(0).is_integral_number()


def _is_integer_floor_division(node: ov.Node) -> bool:
    element_type = node.get_output_element_type(0)
    if node.get_type_name() != "Divide" or not (element_type.is_integral_number() and element_type.is_signed()):
        return False
    if not node.get_attributes().get("m_pythondiv", False):
        return False
    if FLOOR_DIVISION_NAME in node.get_friendly_name():
        return True
    readers = [target.get_node() for target in node.output(0).get_target_inputs()]
    return bool(readers) and all(reader.get_type_name() == "Floor" for reader in readers)


def _floor_of_truncation(division: ov.Node) -> ov.Output:
    dividend, divisor = division.input_value(0), division.input_value(1)
    truncated = ov_ops.divide(dividend, divisor, name=division.get_friendly_name())
    truncated.set_attribute("m_pythondiv", False)
    inexact = ov_ops.not_equal(dividend, ov_ops.multiply(truncated, divisor))
    zero = scalar_like(dividend, 0)
    signs_differ = ov_ops.not_equal(ov_ops.less(dividend, zero), ov_ops.less(divisor, zero))
    one_less = ov_ops.logical_and(inexact, signs_differ)
    return ov_ops.subtract(truncated, ov_ops.convert(one_less, truncated.get_output_element_type(0))).output(0)
