"""``a > b`` and ``a >= b`` computed as ``b < a`` and ``b <= a``.

OpenVINO 2026.4.1's CPU plugin answers ``Greater`` and ``GreaterEqual`` with True
where either side is NaN (OpenVINO alone too), while PyTorch, IEEE 754 and the
plugin's own ``Less`` and ``LessEqual`` answer False: ``torch.where(x > 0, x, 0)``
returned NaN for a NaN ``x``, and counts such as ``(x > 0.5).sum()`` came out too
high, without an error. The mirrored comparison gives the same answer for every
other pair of values, integers included, so every such op in the model is swapped.
"""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around

_MIRRORED = {"Greater": ov_ops.less, "GreaterEqual": ov_ops.less_equal}


@works_around("greater_with_nan")
def compare_greater_as_less(model: ov.Model) -> None:
    """Replaces each Greater(a, b) by Less(b, a), and GreaterEqual by LessEqual, in place."""
    for node in model.get_ordered_ops():
        mirrored = _MIRRORED.get(node.get_type_name())
        if mirrored is None:
            continue
        left, right = (node.input_value(port) for port in (0, 1))
        broadcast = node.get_attributes().get("auto_broadcast", "numpy")
        replacement = mirrored(right, left, auto_broadcast=broadcast, name=node.get_friendly_name())
        node.output(0).replace(replacement.output(0))
    model.validate_nodes_and_infer_types()
