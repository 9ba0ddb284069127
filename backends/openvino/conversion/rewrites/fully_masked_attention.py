"""Attention rows whose mask hides every key come out as zeros, as in PyTorch.

OpenVINO 2026.4.1's ``ScaledDotProductAttention`` gives NaN for a query row whose mask
hides every key (all False, or all -inf), where PyTorch 2.13 gives zeros: a padded
query in a batch, silently. The NaN does not stay in its row: the next layer's
attention multiplies it by a zero weight and spreads it to every query. So such rows
are set to zero after the attention.

A mask whose values come only from constants (an LLM's causal mask: rows of a
constant table chosen by the positions) is left alone, sparing a decode step the
extra nodes: inputs that only pick rows, cut or shape it do not count. A mask whose
values an input reaches (a float or bool mask, or a padding mask made from an integer
``attention_mask``) gets the guard.
"""

from __future__ import annotations

from typing import Set, Tuple

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around
from .model_edits import put_after, scalar_like

_MASK_PORT = 3


@works_around("fully_masked_attention_nan")
def zero_fully_masked_attention_rows(model: ov.Model) -> None:
    """Puts a Select after each attention whose mask values come from an input, in place."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "ScaledDotProductAttention" or node.get_input_size() <= _MASK_PORT:
            continue
        mask = node.input_value(_MASK_PORT)
        if not _values_from_an_input(mask.get_node(), set()):
            continue
        _guard(node, mask)
    model.validate_nodes_and_infer_types()


# Ops whose output values are those of their first input, moved: their other inputs
# (indices, bounds, shapes) choose which.
_MOVES_FIRST_INPUT = frozenset(
    {"Gather", "Slice", "StridedSlice", "Reshape", "Squeeze", "Unsqueeze", "Broadcast", "Tile", "Transpose"}
)


def _values_from_an_input(node: ov.Node, seen: Set[Tuple[int, bool]], choosing: bool = False) -> bool:
    """Whether an input reaches `node`'s values; `choosing`: only as indices or bounds.

    Integer inputs that only choose (an LLM's positions) do not count; float and bool
    inputs do, even there: a bool input picking rows of a constant table can pick a row
    that hides every key.
    """
    if (id(node), choosing) in seen:
        return False
    seen.add((id(node), choosing))
    kind = node.get_type_name()
    if kind == "Parameter":
        element_type = node.get_output_element_type(0)
        return not choosing or element_type == ov.Type.boolean or element_type.is_real()
    if kind == "ShapeOf":
        return False
    moved = kind in _MOVES_FIRST_INPUT
    return any(
        _values_from_an_input(node.input_value(port).get_node(), seen, choosing or (moved and port > 0))
        for port in range(node.get_input_size())
    )


def _guard(attention: ov.Node, mask: ov.Output) -> None:
    if mask.get_element_type() == ov.Type.boolean:
        visible = mask
    else:
        visible = ov_ops.not_equal(mask, scalar_like(mask, -np.inf))
    any_visible = ov_ops.reduce_logical_or(visible, ov_ops.constant(np.array([-1], dtype=np.int64)), keep_dims=True)
    output = attention.output(0)
    put_after(output, ov_ops.select(any_visible, output, scalar_like(output, 0)).output(0))
