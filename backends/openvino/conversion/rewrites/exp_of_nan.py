"""``exp`` of NaN kept NaN.

OpenVINO 2026.4.1's CPU plugin computes ``Exp`` of NaN as inf (OpenVINO alone too, on
an Intel Xeon with AMX, also held to AVX2 or SSE4.1 kernels), so a NaN reaching ``torch.exp`` came out as an overflow,
without an error. A Select puts the NaN back after each float Exp; anywhere else the
plugin's value is kept.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import put_after


@works_around("exp_of_nan_infinite")
def keep_nan_through_exp(model: ov.Model) -> None:
    """Makes each float Exp of the model give NaN for NaN, in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Exp" or not node.get_input_element_type(0).is_real():
            continue
        value, result = node.input_value(0), node.output(0)
        put_after(result, ov_ops.select(ov_ops.is_nan(value), value, result).output(0))
    model.validate_nodes_and_infer_types()
