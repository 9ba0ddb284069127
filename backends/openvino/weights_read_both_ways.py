"""A weight that matrix multiplications read both as it is and transposed gets a copy per way.

OpenVINO 2026.4.1's CPU plugin computes ``(x @ w.T) @ w`` for a square ``w`` as
``(x @ w.T) @ w.T`` when both products read one weight: it prepares a weight once
per memory address and shape, so the second product reuses the first one's
transposed weights, silently (0.4-1.4 relative error, OpenVINO alone too). Two
Constants with the same values do not help: the IR stores equal data once, and
the runtime reads both from one address. So each further way reads a copy stored
with its last two axes swapped, swapped back by a Transpose: other bytes, the same
values. (A symmetric ``w`` is stored once again, and there both ways agree.) A
weight that several products read the same way (a layer called twice, a tied head)
keeps one constant, and its one prepared copy.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Dict, Iterator, List, Tuple

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

logger = logging.getLogger(__name__)

# Ops a weight passes through unchanged on its way to a MatMul, or transposed.
_PASSED_THROUGH = ("Convert", "Transpose")


# How a MatMul reads a weight: its input port, and the order of the weight's axes it sees.
Way = Tuple[int, Tuple[int, ...]]
# The inputs that read a weight one way, each with the Constant it reads.
Targets = List[Tuple[ov.Node, ov.Input]]


def separate_weights_read_both_ways(model: ov.Model) -> int:
    """Makes each further way MatMuls read a weight (as it is, transposed) read other bytes.

    Constants with equal values count as one weight: the IR stores them once.
    Returns how many copies were added.
    """
    ways_of: Dict[Tuple[ov.Type, Tuple[int, ...]], List[Tuple[ov.Node, Dict[Way, List[ov.Input]]]]] = {}
    for constant in model.get_ordered_ops():
        if constant.get_type_name() == "Constant":
            ways = _ways_read_by_matmuls(constant)
            if ways:
                key = (constant.get_element_type(), tuple(constant.get_output_shape(0)))
                ways_of.setdefault(key, []).append((constant, ways))
    added = 0
    for (element_type, _), readers in ways_of.items():
        if len({way for _, ways in readers for way in ways}) < 2:
            continue  # no two ways among constants of this type and shape: nothing to compare
        for weight in _same_values(readers):
            added += _separate(weight, element_type)
    if added:
        model.validate_nodes_and_infer_types()
    return added


def _ways_read_by_matmuls(constant: ov.Node) -> Dict[Way, List[ov.Input]]:
    """Way -> the constant's target inputs that lead to MatMuls reading it that way."""
    identity = tuple(range(len(constant.get_output_shape(0))))
    ways: Dict[Way, List[ov.Input]] = {}
    for target in constant.output(0).get_target_inputs():
        for way in set(_ways_read(target, identity)):
            ways.setdefault(way, []).append(target)
    return ways


def _same_values(readers: List[Tuple[ov.Node, Dict[Way, List[ov.Input]]]]) -> List[Dict[Way, Targets]]:
    """Merges the ways of constants holding the same bytes: way -> (constant, target input), per distinct value."""
    merged: Dict[bytes, Dict[Way, Targets]] = {}
    for constant, ways in readers:
        digest = hashlib.blake2b(constant.get_data().tobytes(), digest_size=16).digest()
        for way, targets in ways.items():
            merged.setdefault(digest, {}).setdefault(way, []).extend((constant, target) for target in targets)
    return list(merged.values())


def _separate(weight: Dict[Way, Targets], element_type: ov.Type) -> int:
    """Points the targets of each way but the first at a copy stored swapped; returns the copies made."""
    if len(weight) < 2:
        return 0
    first_constant = next(iter(weight.values()))[0][0]
    if element_type.bitwidth < 8:
        logger.warning(
            "OpenVINO conversion: %d-bit weight %r is read by matrix multiplications both as it is and transposed, "
            "which OpenVINO's CPU plugin may compute one way for both",
            element_type.bitwidth,
            first_constant.get_friendly_name(),
        )
        return 0
    for targets in list(weight.values())[1:]:
        copy = _stored_swapped(first_constant)
        for _, target in targets:
            target.replace_source_output(copy)
    logger.info(
        "OpenVINO conversion: weight %r is read by matrix multiplications both as it is and transposed; "
        "each way reads its own copy (OpenVINO's CPU plugin would read one way for both)",
        first_constant.get_friendly_name(),
    )
    return len(weight) - 1


def _stored_swapped(constant: ov.Node) -> ov.Output:
    """The constant's values, from a copy stored with its last two axes swapped."""
    element_type = constant.get_element_type()
    shape = list(constant.get_output_shape(0))
    raw = np.dtype(f"u{element_type.size}")  # bf16 and f16 come as float16: move bits, not values
    swapped = np.ascontiguousarray(np.swapaxes(constant.get_data().view(raw).reshape(shape), -1, -2))
    stored = ov.Tensor(element_type, ov.Shape(list(swapped.shape)))
    stored.data.view(raw)[...] = swapped
    order = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
    return ov_ops.transpose(ov.op.Constant(stored), ov_ops.constant(np.array(order, dtype=np.int64))).output(0)


def _ways_read(target: ov.Input, axes: Tuple[int, ...]) -> Iterator[Way]:
    """The ways of the MatMuls that `target` leads to, the weight's axes having reached it in order `axes`."""
    node = target.get_node()
    kind = node.get_type_name()
    if kind == "MatMul":
        port = target.get_index()
        if len(axes) >= 2 and node.get_attributes()["transpose_b" if port == 1 else "transpose_a"]:
            axes = axes[:-2] + (axes[-1], axes[-2])
        yield port, axes
    elif kind in _PASSED_THROUGH and target.get_index() == 0:
        if kind == "Transpose":
            order_node = node.input_value(1).get_node()
            if order_node.get_type_name() != "Constant":
                yield -1, (id(node),)  # an order known only at run time: a way of its own
                return
            axes = tuple(axes[int(axis)] for axis in order_node.get_data().reshape(-1))
        for user in node.output(0).get_target_inputs():
            yield from _ways_read(user, axes)
