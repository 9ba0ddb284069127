"""Division of 32- and 64-bit integers made exact, and refused for a zero divisor.

OpenVINO 2026.4.1's CPU plugin divides int32 and int64 in float32 (OpenVINO alone
too), which holds every integer only below 2**24: ``100000001 / 3`` came back
33333334 and ``(2**31 - 1) / 1`` as -2**31, without an error. It truncates, also for
a Divide marked ``pythondiv`` (the frontend marks integer ``div(..., rounding_mode=
"trunc")`` so). Every int32/int64 Divide is rebuilt as the truncating division it
computes, exactly:

- on negative magnitudes ``-|a|`` and ``-|b|``, which never overflow (``-2**31`` has
  no positive counterpart in int32);
- the quotient of their float32 values, shrunk by ``1 - 2**-20`` and floored, is at
  most the true quotient (float32's three roundings err by less than ``2**-22``)
  and at most about ``2**11`` below it, so the remainder ``-|a| + q * |b|`` lies in
  ``[-|a|, 0]``: it does not overflow, and integer multiply and subtract are exact;
- a second such estimate on that remainder leaves less than two divisors, and one
  comparison with zero (exact in the plugin at any size) takes the last unit;
- the quotient's sign is the signs' difference;
- the choices between values are arithmetic (``select_integers``): the plugin
  computes a Select fused with its comparison in float32.

Floor division is built on it: integer_floor_division.py runs before and leaves a
truncating Divide and a one-less correction, and this makes that Divide exact. int64
values past the int32 range are computed in 32 bits by the plugin anyway
(docs/known-limits.md).

Eager PyTorch raises ZeroDivisionError for an integer division by zero, and
ExecuTorch's portable kernel an error. A divisor that is not a constant is checked: a
zero in it makes a ScatterElementsUpdate index point past its one element, which the
CPU plugin refuses, so the call fails with an error naming the division (the
quotient reads the check's zero, so it is not dropped).
"""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import scalar_like, select_integers

_WIDE_INTEGERS = frozenset({ov.Type.i32, ov.Type.i64})
# Below 1 by more than float32's error on a quotient of two roundings (see the module).
_SHRINK = np.float32(1 - 2**-20)
ZERO_DIVISOR_CHECK_NAME = "executorch_openvino: integer division by zero (eager PyTorch raises ZeroDivisionError)"


@works_around("integer_ops_in_float32")
def divide_integers_exactly(model: ov.Model) -> None:
    """Rebuilds each int32/int64 Divide as an exact truncating division, in place."""
    changed = False
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Divide" or node.get_output_element_type(0) not in _WIDE_INTEGERS:
            continue
        node.output(0).replace(_exact_truncation(node.input_value(0), node.input_value(1)))
        changed = True
    if changed:
        model.validate_nodes_and_infer_types()


def _exact_truncation(dividend: ov.Output, divisor: ov.Output) -> ov.Output:
    zero = scalar_like(dividend, 0)
    dividend_negative = ov_ops.less(dividend, zero)
    divisor_negative = ov_ops.less(divisor, zero)
    dividend_magnitude = select_integers(dividend_negative, dividend, ov_ops.negative(dividend))  # -|a|
    divisor_magnitude = select_integers(divisor_negative, divisor, ov_ops.negative(divisor))  # -|b|
    divisor_float = ov_ops.convert(divisor_magnitude, "f32")

    first = _underestimate(dividend_magnitude, divisor_float)
    remainder = ov_ops.subtract(dividend_magnitude, ov_ops.multiply(first, divisor_magnitude))
    second = _underestimate(remainder, divisor_float)
    remainder = ov_ops.subtract(remainder, ov_ops.multiply(second, divisor_magnitude))
    # One more divisor left: -|r| <= -|b|.
    last = ov_ops.convert(
        ov_ops.less_equal(ov_ops.subtract(remainder, divisor_magnitude), zero), dividend.get_element_type()
    )
    magnitude = ov_ops.add(ov_ops.add(first, second), last)
    quotient = select_integers(
        ov_ops.not_equal(dividend_negative, divisor_negative), ov_ops.negative(magnitude).output(0), magnitude.output(0)
    )
    if divisor.get_node().get_type_name() != "Constant":
        quotient = ov_ops.add(quotient, _zero_divisor_check(divisor)).output(0)
    return quotient


def _underestimate(negative_magnitude: ov.Output, divisor_float: ov.Output) -> ov.Node:
    """floor(|x| / |b|), or a little less (never more), in `negative_magnitude`'s type."""
    ratio = ov_ops.divide(ov_ops.convert(negative_magnitude, "f32"), divisor_float)
    shrunk = ov_ops.floor(ov_ops.multiply(ratio, ov_ops.constant(_SHRINK)))
    return ov_ops.convert(shrunk, negative_magnitude.get_element_type())


def _zero_divisor_check(divisor: ov.Output) -> ov.Output:
    """A 0-d zero of the divisor's type that fails the call when the divisor holds a zero."""
    rank = divisor.get_partial_shape().rank.get_length()
    has_zero = ov_ops.reduce_logical_or(
        ov_ops.equal(divisor, scalar_like(divisor, 0)), ov_ops.constant(np.arange(rank, dtype=np.int64)), False
    )
    one_element = ov_ops.constant(np.zeros(1, dtype=divisor.get_element_type().to_dtype()))
    index = ov_ops.reshape(ov_ops.convert(has_zero, "i32"), ov_ops.constant(np.array([1], np.int64)), False)
    check = ov_ops.scatter_elements_update(
        one_element, index, one_element, ov_ops.constant(np.int64(0)), name=ZERO_DIVISOR_CHECK_NAME
    )
    return ov_ops.squeeze(check, ov_ops.constant(np.array([0], np.int64))).output(0)
