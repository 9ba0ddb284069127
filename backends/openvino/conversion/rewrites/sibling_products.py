"""Matrix products of one input with constant weights become one product, split after.

An LLM's attention reads one normalized input with three products (queries, keys,
values) and its feed-forward block with two (gate, up). At one token a call each
product is a short pass over its weights, and OpenVINO 2026.4.1's CPU plugin
compiles each into a FullyConnected layer of its own (its GPU plugin joins them,
FullyConnectedHorizontalFusion). Joined here, a Llama of dim 1024 with 4-bit
weights compiles 33 FullyConnected layers instead of 57 and computes the same
logits, bit for bit, in 0.97-0.99x the decode time on an AMD EPYC Zen 5
(benchmarks/investigations/llm_joined_products.py; benchmarks/results/llm-quantized-zen5-2026-12-05.md).
At f32 it is a trade: apart, the plugin fuses a SiLU into the gate product and runs it
on oneDNN's brgemm, slower than MLAS at one token; joined, the split and the SiLU are
separate passes over a prompt's rows. On an AMD EPYC Zen 4 the joined products take
0.95-0.97x the time of a decode step and 1.00-1.10x that of a prompt
(benchmarks/investigations/llm_joined_products_prefill.py; benchmarks/results/llm-genai-2026-12-07.md).

Each output channel of a product depends only on its own row of the weights, so the
weights are joined along the output channels: every constant on a weight's way to
its product that holds one slice per output channel (the weight, its scales and
zero points in NNCF's decompression) is concatenated with its siblings', and the
decompression ops stay as they were, so the plugin still reads 4-bit or 8-bit
weights. A VariadicSplit hands each reader its product's channels.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...edge_graph.debug_handles import ALSO_COMPUTES
from ...workarounds import not_a_workaround
from .per_sequence_values import COMPUTED_PER_SEQUENCE

logger = logging.getLogger(__name__)

# Ops a weight's decompression may hold between its constants and the product that
# compute element by element, so the output channels stay apart. (Reshape and
# Transpose may too: _visit checks that they move the channels whole.)
_ELEMENTWISE = ("Convert", "Multiply", "Subtract", "Add")


@dataclass
class _WeightPlan:
    """How one product's weight is made from constants."""

    #: Constants holding one slice per output channel, with that channel axis.
    sliced: List[Tuple[ov.Node, int]] = field(default_factory=list)
    #: Constants every sibling must hold alike (a Transpose's order, a scale for all channels).
    shared: List[ov.Node] = field(default_factory=list)
    #: Reshapes on the way, with the channel axis of their output.
    reshapes: List[Tuple[ov.Node, int]] = field(default_factory=list)
    #: The ops between the constants and the product, the product's reader first.
    ops: List[ov.Node] = field(default_factory=list)
    #: The ops, their attributes and shapes in visiting order, which siblings must match.
    signature: List[Tuple] = field(default_factory=list)


@not_a_workaround("speed: the CPU plugin computes the separate products right, one layer each")
def fuse_sibling_products(model: ov.Model) -> int:
    """Joins MatMuls that read one input and constant weights into one MatMul per group.

    Returns how many groups were joined.
    """
    values = _ValueKeys(model)
    groups: Dict[Tuple, List[Tuple[ov.Node, _WeightPlan]]] = {}
    for product in model.get_ordered_ops():
        if product.get_type_name() != "MatMul" or COMPUTED_PER_SEQUENCE in product.get_rt_info():
            continue
        plan = _weight_plan(product)
        if plan is not None:
            key = (values.of(product.input_value(0)), _attributes(product))
            groups.setdefault(key, []).append((product, plan))
    joined = 0
    for key in list(groups):
        for siblings in _matching(groups.pop(key)):
            _join(siblings)
            joined += 1
            siblings.clear()  # the replaced weights go as soon as nothing refers to them
    if joined:
        model.validate_nodes_and_infer_types()
        logger.debug("joined %d group(s) of matrix products that read one input", joined)
    return joined


class _ValueKeys:
    """Keys that are equal for outputs computing the same values: the same op, attributes
    and inputs (small constants by their bytes). Parameters, state and random numbers are
    keyed by the node itself."""

    # Inputs, state, random numbers, and ops holding bodies whose attributes do not show them whole.
    _BY_IDENTITY = ("Parameter", "ReadValue", "Assign", "RandomUniform", "Multinomial", "If", "Loop", "TensorIterator")
    _SMALL_CONSTANT_BYTES = 256

    def __init__(self, model: ov.Model) -> None:
        self._interned: Dict[Tuple, int] = {}
        self._node_keys: Dict[int, int] = {}
        for node in model.get_ordered_ops():
            self._node_keys[node.get_instance_id()] = self._intern(self._node_form(node))

    def of(self, value: ov.Output) -> Tuple[int, int]:
        return self._node_keys[value.get_node().get_instance_id()], value.get_index()

    def _intern(self, form: Tuple) -> int:
        return self._interned.setdefault(form, len(self._interned))

    def _node_form(self, node: ov.Node) -> Tuple:
        kind = node.get_type_name()
        if kind in self._BY_IDENTITY:
            return ("node", node.get_instance_id())
        if kind == "Constant":
            if node.get_byte_size() > self._SMALL_CONSTANT_BYTES:
                return ("node", node.get_instance_id())
            return (kind, str(node.get_element_type()), tuple(node.get_output_shape(0)), _bytes(node))
        inputs = tuple(self.of(source) for source in node.input_values())
        return (*_attributes(node), inputs)


def _attributes(node: ov.Node) -> Tuple:
    return (node.get_type_name(), tuple(sorted((k, str(v)) for k, v in node.get_attributes().items())))


def _weight_plan(product: ov.Node) -> Optional[_WeightPlan]:
    """The plan of a MatMul's weight, or None when it is not made of constants alone,
    is read by others on the way, or mixes its output channels."""
    weight = product.input_value(1)
    shape = weight.get_partial_shape()
    if shape.is_dynamic or len(shape) != 2 or product.get_output_partial_shape(0).rank.is_dynamic:
        return None
    channel_axis = 0 if product.get_attributes()["transpose_b"] else 1
    plan = _WeightPlan()
    return plan if _visit(weight, channel_axis, plan) else None


def _visit(value: ov.Output, axis: int, plan: _WeightPlan) -> bool:
    """Records how `value` is made, its output channels on `axis`; False when it cannot be joined."""
    node = value.get_node()
    kind = node.get_type_name()
    shape = list(node.get_output_shape(0))
    if kind == "Constant":
        if len(value.get_target_inputs()) != 1:
            return False  # a weight read elsewhere too (tied): joining would store it twice
        bits_from_channel_on = int(np.prod(shape[axis:])) * node.get_element_type().bitwidth
        if bits_from_channel_on % 8:
            return False  # a slice of sub-byte values that does not start on a byte
        plan.signature.append((kind, str(node.get_element_type()), _without(shape, axis)))
        plan.sliced.append((node, axis))
        return True
    if len(value.get_target_inputs()) != 1 or node.get_output_size() != 1:
        return False  # read elsewhere too: that reader would see the joined weight
    plan.ops.append(node)
    plan.signature.append((*_attributes(node), str(node.get_output_element_type(0)), _without(shape, axis)))
    if kind in _ELEMENTWISE:
        for source in node.input_values():
            in_shape = list(source.get_shape())
            in_axis = axis - (len(shape) - len(in_shape))
            if in_axis >= 0 and in_shape[in_axis] == shape[axis]:
                if not _visit(source, in_axis, plan):
                    return False
            elif not _record_shared(source, plan):
                return False  # broadcast along the channels: must be one constant
        return True
    if kind == "Transpose":
        if not _record_shared(node.input_value(1), plan):
            return False  # an order computed in the graph
        order = node.input_value(1).get_node().get_vector()
        return _visit(node.input_value(0), int(order[axis]), plan)
    if kind == "Reshape":
        in_axis = _same_channels_axis(list(node.get_input_shape(0)), shape, axis)
        if in_axis is None:
            return False
        plan.reshapes.append((node, axis))
        return _visit(node.input_value(0), in_axis, plan)
    return False


def _record_shared(source: ov.Output, plan: _WeightPlan) -> bool:
    node = source.get_node()
    if node.get_type_name() != "Constant":
        return False
    plan.shared.append(node)
    plan.signature.append(("shared", str(node.get_element_type()), tuple(node.get_output_shape(0))))
    return True


def _same_channels_axis(in_shape: Sequence[int], out_shape: Sequence[int], axis: int) -> Optional[int]:
    """The input axis of a reshape that holds the output's `axis` unchanged (the same
    length after the same number of elements), or None when the reshape splits or merges it."""
    before = int(np.prod(out_shape[:axis]))
    for in_axis, length in enumerate(in_shape):
        if int(np.prod(in_shape[:in_axis])) == before and length == out_shape[axis]:
            return in_axis
    return None


def _without(shape: Sequence[int], axis: int) -> Tuple[int, ...]:
    return tuple(-1 if index == axis else length for index, length in enumerate(shape))


def _matching(members: List[Tuple[ov.Node, _WeightPlan]]) -> List[List[Tuple[ov.Node, _WeightPlan]]]:
    """The members split into groups of two or more whose weights are made alike."""
    by_form: Dict[Tuple, List[Tuple[ov.Node, _WeightPlan]]] = {}
    for product, plan in members:
        shared = tuple(_bytes(constant) for constant in plan.shared)
        by_form.setdefault((tuple(plan.signature), shared), []).append((product, plan))
    return [group for group in by_form.values() if len(group) > 1]


def _bytes(constant: ov.Node) -> bytes:
    return np.ascontiguousarray(constant.data).view(np.uint8).tobytes()


def _join(siblings: List[Tuple[ov.Node, _WeightPlan]]) -> None:
    """Makes the first sibling compute all of them, and each sibling's readers read its slice."""
    first, plan = siblings[0]
    plans = [member_plan for _, member_plan in siblings]
    for index, (constant, axis) in enumerate(plan.sliced):
        joined = _concatenated([member_plan.sliced[index][0] for member_plan in plans], axis)
        [reader] = constant.output(0).get_target_inputs()  # its only one, as _visit checked
        reader.replace_source_output(joined.output(0))
    for index, (reshape, axis) in enumerate(plan.reshapes):
        shape = list(reshape.get_output_shape(0))
        shape[axis] = sum(int(member_plan.reshapes[index][0].get_output_shape(0)[axis]) for member_plan in plans)
        reshape.input(1).replace_source_output(ov_ops.constant(np.array(shape, dtype=np.int64)).output(0))
    widths = [member.get_output_partial_shape(0)[-1].get_length() for member, _ in siblings]  # static: the weights are
    readers = [list(member.output(0).get_target_inputs()) for member, _ in siblings]
    for op in reversed(plan.ops):  # each op after the ops it reads
        op.validate_and_infer_types()
    first.validate_and_infer_types()
    split = ov_ops.variadic_split(first.output(0), np.int64(-1), np.array(widths, dtype=np.int64))
    split.set_friendly_name(first.get_friendly_name() + "/split")
    # Profiling relates the joined layer to every product's operators, not the first's alone.
    first.get_rt_info()[ALSO_COMPUTES] = ",".join(member.get_friendly_name() for member, _ in siblings[1:])
    for index, targets in enumerate(readers):
        for target in targets:
            target.replace_source_output(split.output(index))


def _concatenated(constants: List[ov.Node], axis: int) -> ov.Node:
    """One constant holding `constants` one after another along `axis`, byte for byte
    (sub-byte types too: each slice starts on a byte, as _visit checked)."""
    shapes = [list(constant.get_output_shape(0)) for constant in constants]
    rows = int(np.prod(shapes[0][:axis]))
    parts = [np.ascontiguousarray(constant.data).view(np.uint8).reshape(rows, -1) for constant in constants]
    joined_shape = list(shapes[0])
    joined_shape[axis] = sum(shape[axis] for shape in shapes)
    tensor = ov.Tensor(constants[0].get_element_type(), joined_shape)
    joined_bytes = np.asarray(tensor.data).view(np.uint8).reshape(rows, -1)
    start = 0
    for part in parts:  # written in place: no second copy of the joined weight
        joined_bytes[:, start : start + part.shape[1]] = part
        start += part.shape[1]
    joined = ov.op.Constant(tensor)
    joined.set_friendly_name(constants[0].get_friendly_name() + "/joined")
    return joined
