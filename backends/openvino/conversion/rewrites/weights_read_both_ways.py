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
keeps one constant, and its one prepared copy. A compressed weight (NNCF's integer
weights with their decompression) read both ways is refused at lowering: there the
plugin shares the scales between the ways too, and a copy gave wrong values still.
So is a weight stored flat and reshaped in the graph, which has no axes to swap.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Dict, Hashable, Iterator, List, Tuple

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around

logger = logging.getLogger(__name__)

# NNCF's decompression of a compressed weight: subtract the zero point, scale, regroup.
_DECOMPRESSION = ("Subtract", "Multiply", "Reshape")
# Ops between a weight and the MatMuls that read it, by their first input.
_PASSED_THROUGH = ("Convert", "Transpose") + _DECOMPRESSION

# How a MatMul reads a weight: its input port (the second), and where each axis it sees comes from.
Way = Tuple[int, Tuple[Hashable, ...]]
# A path from a weight to a MatMul: each node with the input the weight reaches it by.
Path = Tuple[Tuple[ov.Node, int], ...]


@works_around("weight_read_both_ways")
def separate_weights_read_both_ways(model: ov.Model) -> int:
    """Makes each further way MatMuls read a weight (as it is, transposed) start from other bytes.

    Constants with equal values count as one weight: the IR stores them once.
    Returns how many copies were added.
    """
    readers_of: Dict[Tuple[ov.Type, Tuple[int, ...]], List[Tuple[ov.Node, Dict[Way, List[Path]]]]] = {}
    for constant in model.get_ordered_ops():
        if constant.get_type_name() == "Constant":
            ways = _ways_read_by_matmuls(constant)
            if ways:
                key = (constant.get_element_type(), tuple(constant.get_output_shape(0)))
                readers_of.setdefault(key, []).append((constant, ways))
    added = 0
    for (element_type, _), readers in readers_of.items():
        if len({way for _, ways in readers for way in ways}) < 2:
            continue  # no two ways among constants of this type and shape: nothing to compare
        for weight in _same_values(readers):
            added += _separate(weight, element_type)
    if added:
        model.validate_nodes_and_infer_types()
    return added


def _ways_read_by_matmuls(constant: ov.Node) -> Dict[Way, List[Path]]:
    """Way -> the paths from the constant to the MatMuls that read it that way."""
    axes = tuple(range(len(constant.get_output_shape(0))))
    ways: Dict[Way, List[Path]] = {}
    for target in constant.output(0).get_target_inputs():
        for way, path in _ways_read(target, axes, ()):
            ways.setdefault(way, []).append(path)
    return ways


def _same_values(readers: List[Tuple[ov.Node, Dict[Way, List[Path]]]]) -> List[Dict[Way, List[Path]]]:
    """Merges the ways of constants holding the same bytes: way -> paths, per distinct value."""
    merged: Dict[bytes, Dict[Way, List[Path]]] = {}
    for constant, ways in readers:
        digest = hashlib.blake2b(constant.get_data().tobytes(), digest_size=16).digest()
        for way, paths in ways.items():
            merged.setdefault(digest, {}).setdefault(way, []).extend(((constant, -1),) + path for path in paths)
    return list(merged.values())


def _separate(weight: Dict[Way, List[Path]], element_type: ov.Type) -> int:
    """Rebuilds the paths of each way but the first from a copy stored swapped; returns the copies made."""
    if len(weight) < 2:
        return 0
    constant = next(iter(weight.values()))[0][0][0]
    kinds = {node.get_type_name() for paths in weight.values() for path in paths for node, _ in path}
    decompressed = bool(kinds & {"Subtract", "Multiply"})
    if decompressed or element_type.is_integral() or len(constant.get_output_shape(0)) < 2:
        # A copy in other bytes was not enough for a compressed weight: the CPU plugin
        # also shares the decompression's scales between the ways (0.3 off in a trial).
        name = f"{constant.get_friendly_name()!r} ({element_type.get_type_name()}, {constant.get_output_shape(0)})"
        raise RuntimeError(
            f"OpenVINO delegate: weight {name} is read by matrix multiplications both as it is and transposed, "
            "which OpenVINO's CPU plugin computes one way for both (wrong values). The delegate copies such a "
            "weight only when it is a float weight of two axes or more, not compressed: leave a compressed "
            "weight uncompressed (nncf.compress_weights(..., ignored_scope=nncf.IgnoredScope(...))), or store "
            "the weight in the shape the products read"
        )
    for paths in list(weight.values())[1:]:
        rebuilt: Dict[int, ov.Output] = {}
        copy = _stored_swapped(constant)
        for path in paths:
            source = copy
            for node, _ in path[1:-1]:
                key = id(node)  # a node two MatMuls of this way share is rebuilt once
                if key not in rebuilt:
                    rebuilt[key] = _rebuilt(node, source)
                source = rebuilt[key]
            matmul, port = path[-1]
            matmul.input(port).replace_source_output(source)
    logger.info(
        "OpenVINO conversion: weight %r is read by matrix multiplications both as it is and transposed; "
        "each way reads its own copy (OpenVINO's CPU plugin would read one way for both)",
        constant.get_friendly_name(),
    )
    return len(weight) - 1


def _rebuilt(node: ov.Node, source: ov.Output) -> ov.Output:
    """`node` (a Convert, Transpose or Reshape) again, reading `source` and its other inputs as before."""
    kind = node.get_type_name()
    if kind == "Convert":
        return ov_ops.convert(source, node.get_attributes()["destination_type"]).output(0)
    if kind == "Transpose":
        return ov_ops.transpose(source, node.input_value(1)).output(0)
    if kind == "Reshape":
        return ov_ops.reshape(source, node.input_value(1), node.get_attributes()["special_zero"]).output(0)
    raise AssertionError(f"not rebuilt: {kind}")  # paths through decompression are refused before


def _is_constant(value: ov.Output) -> bool:
    """A Constant, or a Constant converted (NNCF's zero point)."""
    node = value.get_node()
    if node.get_type_name() == "Convert":
        node = node.input_value(0).get_node()
    return node.get_type_name() == "Constant"


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


def _ways_read(target: ov.Input, axes: Tuple[Hashable, ...], path: Path) -> Iterator[Tuple[Way, Path]]:
    """(way, path) for each MatMul that `target` leads to; the weight's axes reached it as `axes`."""
    node = target.get_node()
    kind = node.get_type_name()
    path = path + ((node, target.get_index()),)
    if kind == "MatMul":
        if target.get_index() != 1:
            return  # the plugin prepares a MatMul's second input as its weight
        if node.get_attributes()["transpose_b"]:
            axes = axes[:-2] + (axes[-1], axes[-2])
        yield (1, axes), path
        return
    if kind not in _PASSED_THROUGH or target.get_index() != 0:
        return  # the first input carries the weight: a zero point or scale is not followed
    if kind in ("Subtract", "Multiply") and not _is_constant(node.input_value(1)):
        return  # a weight times an activation is no longer a weight
    if kind == "Transpose":
        order_node = node.input_value(1).get_node()
        if order_node.get_type_name() != "Constant":
            axes = (("transposed at run time", id(node)),)  # a way of its own
        else:
            axes = tuple(axes[int(axis)] for axis in order_node.get_data().reshape(-1))
    elif kind == "Reshape":
        shape = tuple(node.get_output_partial_shape(0).to_string())
        axes = tuple((axes, shape, index) for index in range(node.get_output_partial_shape(0).rank.get_length()))
    for user in node.output(0).get_target_inputs():
        yield from _ways_read(user, axes, path)
