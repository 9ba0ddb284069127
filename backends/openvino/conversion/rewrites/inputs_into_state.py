"""A model input written into state unchanged gets copied by a real op first.

OpenVINO 2026.4.1's CPU plugin runs some ops in place: their output shares memory
with their input (Reshape), or with their output's consumer (a Concat along leading
axes, whose inputs write straight into its output). When such a chain leads from a
model input to the value an Assign stores, the plugin places the input in the
variable's memory but binds the caller's input tensor elsewhere, and never copies
it: a buffer written as ``cat([buffer[1:], x])`` (a streaming window) keeps stale or
uninitialized rows where ``x`` belongs, and other readers of ``x`` see them too,
silently. Written from a computed value, the same chain is right. So each input on
such a chain is first computed into memory of its own, by a Maximum of the input
with itself: every value, NaN and -0.0 included, comes out as it went in.
"""

from __future__ import annotations

import logging
from typing import List

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around

logger = logging.getLogger(__name__)

# Ops the CPU plugin may run in place, or drop as no-ops (a Convert to the type it
# already computes in, a full Slice, a Broadcast to the same shape), by the inputs
# that carry the data through: None for all of them, else the input indices.
_IN_PLACE = {
    "Reshape": (0,),
    "Squeeze": (0,),
    "Unsqueeze": (0,),
    "Convert": (0,),
    "Identity": (0,),
    "Concat": None,
    "Slice": (0,),
    "StridedSlice": (0,),
    "Split": (0,),
    "VariadicSplit": (0,),
    "Gather": (0,),
    "Broadcast": (0,),
    "Tile": (0,),
    "Transpose": (0,),
    "Pad": (0,),
    "ScatterUpdate": (0,),
    "ScatterNDUpdate": (0,),
    "ScatterElementsUpdate": (0,),
}


@works_around("input_into_state_in_place")
def copy_inputs_into_state(model: ov.Model) -> int:
    """Puts a copy between each parameter and the in-place chains that take it into an Assign.

    Returns how many parameters got a copy.
    """
    copied = 0
    for parameter in model.get_parameters():
        chains = [target for target in parameter.output(0).get_target_inputs() if _reaches_assign(target)]
        if not chains:
            continue
        copy = _copy_of(parameter.output(0))
        for target in chains:
            target.replace_source_output(copy)
        copied += 1
        logger.info(
            "OpenVINO conversion: input %r is written into state unchanged; it is copied first "
            "(OpenVINO's CPU plugin would lose it in place)",
            parameter.get_friendly_name(),
        )
    if copied:
        model.validate_nodes_and_infer_types()
    return copied


def _reaches_assign(target: ov.Input) -> bool:
    """Whether the value entering `target` reaches an Assign through in-place ops only."""
    pending: List[ov.Input] = [target]
    seen = set()
    while pending:
        current = pending.pop()
        node = current.get_node()
        kind = node.get_type_name()
        if kind == "Assign":
            return True
        carried = _IN_PLACE.get(kind, ())
        if (carried is not None and current.get_index() not in carried) or id(node) in seen:
            continue
        seen.add(id(node))
        for output in node.outputs():
            pending.extend(output.get_target_inputs())
    return False


def _copy_of(value: ov.Output) -> ov.Output:
    """`value` computed into memory of its own, unchanged."""
    if value.get_element_type() == ov.Type.boolean:
        return ov_ops.logical_or(value, value).output(0)  # Maximum takes numbers only
    return ov_ops.maximum(value, value).output(0)
