"""Casts to bool computed as ``x != 0``.

OpenVINO 2026.4.1's CPU plugin converts an int32 of -2**31 and a float NaN to False
(OpenVINO alone too), while PyTorch, as C does, makes every value but zero True:
``x.bool()``, ``logical_not(x)`` and ``where(x.bool(), ...)`` went wrong there, without an
error. ``x != 0`` is exactly PyTorch's rule, so every such Convert in the model is
replaced by it.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import scalar_like


@works_around("bool_cast_of_int_min_and_nan")
def cast_to_bool_as_not_equal(model: ov.Model) -> None:
    """Replaces each Convert from a non-boolean type to boolean by NotEqual(x, 0), in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Convert" or node.get_output_element_type(0) != ov.Type.boolean:
            continue
        source = node.input_value(0)
        if source.get_element_type() == ov.Type.boolean:
            continue
        replacement = ov_ops.not_equal(source, scalar_like(source, 0), name=node.get_friendly_name())
        node.output(0).replace(replacement.output(0))
    model.validate_nodes_and_infer_types()
