"""Integers cast to bfloat16 rounded to nearest, as PyTorch does.

OpenVINO 2026.4.1's CPU plugin converts int32 and int64 to bfloat16 by dropping the
low bits (OpenVINO alone too): 158500 became 157696 where PyTorch gives 158720, one
bf16 step toward zero, without an error. Its float32 to bfloat16 conversion rounds to
nearest even with static shapes but drops the low bits too with dynamic ones. So the
value is converted to float32 and rounded there to bf16's 8 significant bits with
Veltkamp's split (``c = y * (2**16 + 1); y' = c - (c - y)``, exact for |y| < 2**100),
which leaves the final conversion nothing to round: checked exact, ties to even
included, for every integer in [-70000, 70000) and 4000 random int32, static and
dynamic, at f32 and bf16 precision.
"""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around


@works_around("integer_to_bfloat16_truncates")
def round_integers_to_bfloat16(model: ov.Model) -> None:
    """Rounds the value of each Convert from a wide integer type to bf16 in f32 first, in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Convert" or node.get_output_element_type(0) != ov.Type.bf16:
            continue
        source = node.input_value(0)
        # bf16 holds every value of 8 bits or fewer; an int8 weight read this way must
        # keep its Convert for the plugin's compressed-weight kernels.
        if source.get_element_type().is_real() or source.get_element_type().bitwidth <= 8:
            continue
        value = ov_ops.convert(source, ov.Type.f32)
        spread = ov_ops.multiply(value, ov_ops.constant(np.float32(2**16 + 1)))
        rounded = ov_ops.subtract(spread, ov_ops.subtract(spread, value))
        node.output(0).replace(ov_ops.convert(rounded, ov.Type.bf16, name=node.get_friendly_name()).output(0))
    model.validate_nodes_and_infer_types()
