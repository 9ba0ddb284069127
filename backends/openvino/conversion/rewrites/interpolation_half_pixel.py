"""Linear and cubic resizes whose output has one pixel along a dim sample its centre.

OpenVINO's PyTorch frontend marks ``F.interpolate(..., align_corners=False)`` as
``pytorch_half_pixel``, which samples input coordinate 0 wherever the output is one
pixel long, while PyTorch samples the centre of the input, as ``half_pixel`` does:
a 4x4 to 1x16 bilinear resize gave 0 where eager gives 6, without an error. For every
other output length the two modes are the same coordinates (checked against eager for
linear, bilinear, bicubic and trilinear, sizes 1-7 from 1-5), so each such Interpolate
is switched to ``half_pixel``.
"""

from __future__ import annotations

import openvino as ov
from openvino.utils.node_factory import NodeFactory

from ...workarounds import works_around

_FRONTEND_MODE, _PYTORCH_MODE = "pytorch_half_pixel", "half_pixel"


@works_around("interpolate_single_pixel_output")
def interpolate_with_half_pixel_centres(model: ov.Model) -> None:
    """Replaces each pytorch_half_pixel Interpolate by the same one in half_pixel mode, in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Interpolate":
            continue
        attributes = node.get_attributes()
        if attributes.get("coordinate_transformation_mode") != _FRONTEND_MODE:
            continue
        attributes["coordinate_transformation_mode"] = _PYTORCH_MODE
        inputs = [node.input_value(port) for port in range(node.get_input_size())]
        replacement = NodeFactory(node.get_type_info().version_id).create("Interpolate", inputs, attributes)
        replacement.set_friendly_name(node.get_friendly_name())
        node.output(0).replace(replacement.output(0))
    model.validate_nodes_and_infer_types()
