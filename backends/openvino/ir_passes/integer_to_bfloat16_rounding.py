"""Integers cast to bfloat16 rounded to nearest, as PyTorch does.

OpenVINO 2026.4.1's CPU plugin converts int32 and int64 to bfloat16 by dropping the
low bits (OpenVINO alone too): 158500 became 157696 where PyTorch gives 158720, one
bf16 step toward zero, without an error. PyTorch casts through float32, and the
plugin's float32 to bfloat16 conversion rounds to nearest even, so each such Convert
goes through float32.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops


def round_integers_to_bfloat16(model: ov.Model) -> None:
    """Replaces each Convert from an integer type to bf16 by one through f32, in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Convert" or node.get_output_element_type(0) != ov.Type.bf16:
            continue
        source = node.input_value(0)
        if source.get_element_type().is_real() or source.get_element_type() == ov.Type.boolean:
            continue
        through_f32 = ov_ops.convert(ov_ops.convert(source, ov.Type.f32), ov.Type.bf16, name=node.get_friendly_name())
        node.output(0).replace(through_f32.output(0))
    model.validate_nodes_and_infer_types()
