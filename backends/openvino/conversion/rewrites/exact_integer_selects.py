"""Selects of 32- and 64-bit integers made exact.

OpenVINO 2026.4.1's CPU plugin fuses a comparison and the Select that reads it into
one eltwise kernel, which computes the Select in float32: ``torch.where(x != 0, a, b)``
of int32 gave -2**31 for 2**31 - 1 and -18084880 for -18084881, without an error
(a Select alone, or its arithmetic, is exact). So every int32/int64 Select becomes
``b + (a - b) * c``, with the condition ``c`` converted to the integer type: integer
subtract, multiply and add are exact in the plugin, and wrap so that the sum gives
``a`` back exactly where ``c`` is 1.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

_WIDE_INTEGERS = frozenset({ov.Type.i32, ov.Type.i64})


def select_integers_exactly(model: ov.Model) -> None:
    """Rewrites each int32/int64 Select as arithmetic on its condition, in place."""
    changed = False
    for node in model.get_ordered_ops():
        element_type = node.get_output_element_type(0)
        if node.get_type_name() != "Select" or element_type not in _WIDE_INTEGERS:
            continue
        condition, chosen, other = (node.input_value(port) for port in range(3))
        taken = ov_ops.convert(condition, element_type)
        arithmetic = ov_ops.add(other, ov_ops.multiply(ov_ops.subtract(chosen, other), taken))
        arithmetic.set_friendly_name(node.get_friendly_name())
        node.output(0).replace(arithmetic.output(0))
        changed = True
    if changed:
        model.validate_nodes_and_infer_types()
