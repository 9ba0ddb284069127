"""Comparisons of 32- and 64-bit integers made exact.

OpenVINO 2026.4.1's CPU plugin compares int32 and int64 values in float32 (OpenVINO
alone too), which holds integers exactly only below 2**24: ``16777217 == 16777216``
came out True and ``2**31 - 2 < 2**31 - 1`` False, without an error. Integer
subtraction is exact there (it wraps as int32 does), and comparing a value with zero
keeps its sign in float32, so each comparison is rewritten on the difference:

- ``a == b`` as ``a - b == 0`` (and ``!=`` alike): a wrapped difference is zero only
  when the values are equal;
- ``a < b`` as ``a < 0`` where the signs of ``a`` and ``b`` differ, else ``a - b < 0``
  (the difference of two values of one sign cannot wrap); ``a <= b`` adds ``a == b``.

Greater and GreaterEqual are mirrored into Less and LessEqual beforehand
(``greater_as_less.py``). int64 values past the int32 range are computed in 32 bits by
the plugin anyway (README, Known limits).
"""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import scalar_like

# Narrower integers are exact in float32.
_WIDE_INTEGERS = frozenset({ov.Type.i32, ov.Type.i64})
_COMPARISONS = frozenset({"Equal", "NotEqual", "Less", "LessEqual"})


@works_around("integer_comparison_in_float32")
def compare_integers_exactly(model: ov.Model) -> None:
    """Rewrites each int32/int64 Equal, NotEqual, Less and LessEqual on differences, in place."""
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind not in _COMPARISONS or node.get_input_element_type(0) not in _WIDE_INTEGERS:
            continue
        left, right = (node.input_value(port) for port in (0, 1))
        if _is_zero(right):
            continue
        node.output(0).replace(_exact_comparison(kind, left, right, node.get_friendly_name()))
    model.validate_nodes_and_infer_types()


def _exact_comparison(kind: str, left: ov.Output, right: ov.Output, name: str) -> ov.Output:
    zero = scalar_like(left, 0)
    difference = ov_ops.subtract(left, right)
    if kind == "Equal":
        return _named(ov_ops.equal(difference, zero), name)
    if kind == "NotEqual":
        return _named(ov_ops.not_equal(difference, zero), name)
    left_negative = ov_ops.less(left, zero)
    signs_differ = ov_ops.not_equal(left_negative, ov_ops.less(right, zero))
    less = ov_ops.select(signs_differ, left_negative, ov_ops.less(difference, zero))
    if kind == "Less":
        return _named(less, name)
    return _named(ov_ops.logical_or(less, ov_ops.equal(difference, zero)), name)


def _named(node: ov.Node, name: str) -> ov.Output:
    node.set_friendly_name(name)
    return node.output(0)


def _is_zero(value: ov.Output) -> bool:
    node = value.get_node()
    return node.get_type_name() == "Constant" and not np.any(node.get_data())
