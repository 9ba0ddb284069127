"""A model input written into state unchanged gets copied by a real op first.

OpenVINO 2026.4.1's CPU plugin runs some ops in place: their output shares memory
with their input (Reshape), or with their output's consumer (a Concat along leading
axes, whose inputs write straight into its output). When such a chain leads from a
model input to the value an Assign stores, the plugin places the input in the
variable's memory but binds the caller's input tensor elsewhere, and never copies
it: a buffer written as ``cat([buffer[1:], x])`` (a streaming window) keeps stale or
uninitialized rows where ``x`` belongs, and other readers of ``x`` see them too,
silently. The plugin also drops ops that leave a value as it is (``x * 1``, ``x + 0``,
a layer scale of ones, ``where(True, x, y)``), which brings the input to the Assign
all the same: the buffer then reads the current call's input instead of the last
one's. Written from a computed value, the same chain is right. So each input on such
a chain is first computed into memory of its own, by a Maximum of the input with
itself, which the plugin keeps: every value, NaN and -0.0 included, comes out as it
went in.
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
    "ConvertLike": (0,),
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
    "Negative": (0,),
}

# Ops the plugin drops when their other inputs are constants that leave the value as it
# is (x * 1, x / 1, x + 0, x - 0, an einsum "ij->ij", a batch norm of mean 0 and variance 1,
# a FakeQuantize of 65536 levels over integers): followed through any input whose siblings
# are constants.
_WITH_CONSTANTS = (
    "Multiply",
    "Divide",
    "Add",
    "Subtract",
    "Maximum",
    "Minimum",
    "Power",
    "Einsum",
    "BatchNormInference",
    "FakeQuantize",
)


@works_around("input_into_state_in_place")
def copy_inputs_into_state(model: ov.Model) -> int:
    """Puts a copy between each parameter and the chains that may take it into an Assign unchanged.

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
    """Whether the value entering `target` may reach an Assign unchanged (_may_pass_through)."""
    pending: List[ov.Input] = [target]
    seen = set()
    while pending:
        current = pending.pop()
        node = current.get_node()
        if node.get_type_name() == "Assign":
            return True
        if not _may_pass_through(node, current.get_index()) or id(node) in seen:
            continue
        seen.add(id(node))
        for output in node.outputs():
            pending.extend(output.get_target_inputs())
    return False


def _may_pass_through(node: ov.Node, index: int) -> bool:
    """Whether the plugin may hand input `index` of `node` on unchanged, in place or by dropping `node`."""
    kind = node.get_type_name()
    if kind in _IN_PLACE:
        carried = _IN_PLACE[kind]
        return carried is None or index in carried
    others = [node.input_value(other) for other in range(node.get_input_size()) if other != index]
    if kind in _WITH_CONSTANTS:
        return all(_is_constant(other) for other in others)
    if kind in ("Select", "If"):  # where(constant condition, x, y) may become x
        return index > 0 and _is_constant(node.input_value(0))
    return False


def _is_constant(value: ov.Output) -> bool:
    """Whether `value` may be computed from Constants and shapes alone (``torch.ones(2, 3)``
    is a Broadcast of two, ``ones_like(x)`` one of x's shape), which the plugin folds."""
    pending, seen = [value.get_node()], set()
    while pending:
        node = pending.pop()
        if node.get_type_name() in ("Parameter", "ReadValue"):
            return False
        if node.get_type_name() not in ("ShapeOf",) and id(node) not in seen:
            seen.add(id(node))
            pending.extend(source.get_node() for source in node.input_values())
    return True


def _copy_of(value: ov.Output) -> ov.Output:
    """`value` computed into memory of its own, unchanged."""
    if value.get_element_type() == ov.Type.boolean:
        return ov_ops.logical_or(value, value).output(0)  # Maximum takes numbers only
    return ov_ops.maximum(value, value).output(0)
