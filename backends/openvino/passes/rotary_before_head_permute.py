"""Rotary embeddings applied to the heads before they are permuted, not after.

Hugging Face's decoders (Llama, Mistral, Qwen, Gemma and others) lay a product's output
out as ``[batch, tokens, heads, head size]``, permute it to ``[batch, heads, tokens,
head size]`` and only then rotate it, with cos and sin unsqueezed at dim 1:

    x * cos + cat(-x[..., D/2:], x[..., :D/2]) * sin

OpenVINO's CPU plugin (2026.4.1) fuses that into one RoPE layer that reads the permuted
input in place. In PagedAttention form (runtime/paged_attention.cpp) the attention takes
``[tokens, heads x head size]`` again, so SDPAToPagedAttention permutes the rotated
queries and keys back, and those two Transposes a layer run in full. Rotated before the
permute (cos and sin unsqueezed at dim 2), the rotation reads and writes the product's
layout, the plugin fuses it into one RoPE layer all the same, and the permute meets the
one PagedAttention adds, which cancels it. The rotation computes the same values element
by element, so the results are the same floats. Anything that is not exactly the
pattern is left as it was.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ..workarounds import not_a_workaround
from .graph_edits import calls, emit, erase_unread

logger = logging.getLogger(__name__)

_ATEN = exir_ops.edge.aten
_HEADS_FIRST = [0, 2, 1, 3]  # [batch, tokens, heads, size] <-> [batch, heads, tokens, size]


@dataclass
class _Rotation:
    """``heads`` ([batch, tokens, heads, size]) permuted, then rotated by ``cos`` and ``sin``
    ([batch, tokens, size]); ``result`` is the rotation's last op."""

    heads: torch.fx.Node
    cos: torch.fx.Node
    sin: torch.fx.Node
    result: torch.fx.Node


@not_a_workaround("a speed-up: the same values without two Transposes a layer in PagedAttention form")
def rotary_before_head_permute(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    rotations = [rotation for node in graph.nodes if (rotation := _match(node)) is not None]
    for rotation in rotations:
        with graph.inserting_before(rotation.result):
            permuted = emit(graph, _ATEN.permute_copy.default, _rotate(graph, rotation), _HEADS_FIRST)
        rotation.result.replace_all_uses_with(permuted)
        erase_unread(rotation.result)
    if rotations:
        graph_module.recompile()
        logger.debug("OpenVINO delegate: %d rotary embeddings moved before their heads' permute", len(rotations))
    return graph_module


def _rotate(graph: torch.fx.Graph, rotation: _Rotation) -> torch.fx.Node:
    heads = rotation.heads
    half = heads.meta["val"].shape[-1] // 2
    cos = emit(graph, _ATEN.unsqueeze_copy.default, rotation.cos, 2)
    sin = emit(graph, _ATEN.unsqueeze_copy.default, rotation.sin, 2)
    first, second = _half(graph, heads, 0, half), _half(graph, heads, half, sys.maxsize)
    rotated_half = emit(graph, _ATEN.cat.default, [emit(graph, _ATEN.neg.default, second), first], -1)
    return emit(
        graph,
        _ATEN.add.Tensor,
        emit(graph, _ATEN.mul.Tensor, heads, cos),
        emit(graph, _ATEN.mul.Tensor, rotated_half, sin),
    )


def _half(graph: torch.fx.Graph, heads: torch.fx.Node, start: int, end: int) -> torch.fx.Node:
    """``heads[..., start:end]``, half its last dim. Its example value is made empty: the
    edge op's fake kernel asks a dynamic-shaped input for its storage offset and fails."""
    node = graph.call_function(_ATEN.slice_copy.Tensor, (heads, 3, start, end))
    value = heads.meta["val"]
    with value.fake_mode:
        node.meta["val"] = torch.empty((*value.shape[:-1], value.shape[-1] // 2), dtype=value.dtype)
    return node


def _match(node: torch.fx.Node) -> Optional[_Rotation]:
    """The rotation whose add is `node`: ``x * cos + rotate_half(x) * sin``, x permuted heads."""
    if not calls(node, "aten.add.Tensor", 2) or node.kwargs.get("alpha", 1) != 1:
        return None
    for straight, turned in (node.args[:2], reversed(node.args[:2])):
        permuted_and_cos = _product_with(straight, _permuted_heads)
        if permuted_and_cos is None:
            continue
        permuted, cos = permuted_and_cos
        sin = _factor_beside(turned, permuted)
        if sin is None:
            continue
        cos_table, sin_table = _table(cos, permuted), _table(sin, permuted)
        if cos_table is None or sin_table is None:
            return None
        return _Rotation(heads=permuted.args[0], cos=cos_table, sin=sin_table, result=node)
    return None


def _permuted_heads(node: object) -> bool:
    """Whether `node` permutes [batch, tokens, heads, size] to heads first, size even."""
    if not calls(node, "aten.permute_copy.default", 2) or list(node.args[1]) != _HEADS_FIRST:
        return False
    value = node.meta.get("val")
    size = value.shape[-1] if isinstance(value, torch.Tensor) and value.dim() == 4 else None
    return isinstance(size, int) and size % 2 == 0 and getattr(value, "fake_mode", None) is not None


def _product_with(product: object, wanted) -> Optional[Tuple[torch.fx.Node, torch.fx.Node]]:
    """(operand, other factor) if `product` multiplies an operand `wanted` accepts by a node."""
    if not calls(product, "aten.mul.Tensor", 2):
        return None
    left, right = product.args[:2]
    for operand, other in ((left, right), (right, left)):
        if wanted(operand) and isinstance(other, torch.fx.Node):
            return operand, other
    return None


def _factor_beside(product: object, permuted: torch.fx.Node) -> Optional[torch.fx.Node]:
    """sin, if `product` is ``rotate_half(permuted) * sin`` in either order."""
    found = _product_with(product, lambda operand: _is_rotated_half(operand, permuted))
    return None if found is None else found[1]


def _is_rotated_half(node: object, permuted: torch.fx.Node) -> bool:
    """Whether `node` is ``cat(-x[..., D/2:], x[..., :D/2], dim=-1)`` of x = `permuted`."""
    if not calls(node, "aten.cat.default", 1) or len(node.args[0]) != 2:
        return False
    if (node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)) not in (-1, 3):
        return False
    negated, first = node.args[0]
    if not calls(negated, "aten.neg.default", 1):
        return False
    half = permuted.meta["val"].shape[-1] // 2
    return _is_slice(negated.args[0], permuted, half, None) and _is_slice(first, permuted, 0, half)


def _is_slice(node: object, source: torch.fx.Node, start: int, end: Optional[int]) -> bool:
    """Whether `node` is ``source[..., start:end]`` (end None: to the last element)."""
    if not calls(node, "aten.slice_copy.Tensor", 1) or node.args[0] is not source:
        return False
    dim, begin, stop, step = (*node.args[1:5], *(0, None, None, 1)[len(node.args[1:5]) :])
    if dim not in (-1, 3) or step != 1 or (begin or 0) != start:
        return False
    width = source.meta["val"].shape[-1]
    return stop == end if end is not None else stop is None or stop >= width


def _table(factor: torch.fx.Node, permuted: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The [batch, tokens, size] table a cos or sin factor unsqueezes at dim 1, if it does
    and matches the heads' batch, tokens and size."""
    if not calls(factor, "aten.unsqueeze_copy.default", 2) or factor.args[1] != 1:
        return None
    table = factor.args[0]
    value, heads = table.meta.get("val"), permuted.meta["val"]
    if not isinstance(value, torch.Tensor) or value.dim() != 3:
        return None
    batch, _, tokens, size = heads.shape
    # Each size the heads' or 1 (broadcast): unsqueezed at dim 2 instead of 1, the table
    # then gives every (batch, token, head, element) the value it gave before.
    return table if all(_same_or_one(have, want) for have, want in zip(value.shape, (batch, tokens, size))) else None


def _same_or_one(have: object, want: object) -> bool:
    return (isinstance(have, int) and have == 1) or statically_known_true(have == want)
