"""Views of an attention result read a contiguous copy, so that they hold under any layout.

ExecuTorch decomposes ``y.transpose(1, 2).reshape(b, t, d)`` after attention into
a ``view``, because the attention kernel that ran at export time returned its result
in a layout where that transpose is contiguous. When attention is kept whole
(partition/kept_whole.py), ExecuTorch traces the program again with the op's generic
implementation, whose result is laid out the other way, and the ``view`` fails
("Cannot view a tensor with shape ... and strides ...", seen with torch 2.13.0 and
ExecuTorch 1.5.1): ViT-style blocks, whose
queries come out of a permuted projection, failed to lower, and so did
``nn.TransformerEncoderLayer`` quantized with 8-bit activations, whose attention result is
quantized and dequantized before it is permuted and viewed. A contiguous ``clone``
before each view reached from attention through layout ops makes the view valid
under either layout. OpenVINO drops the copy: its tensors have no strides.
"""

from __future__ import annotations

from typing import Collection, List

import torch
from torch.export import ExportedProgram

from ..edge_graph.nodes import matches_op_type, op_name
from ..partition.kept_whole import SDPA

# torch.export keeps reshape (it becomes a view when ExecuTorch decomposes it).
_VIEWS = frozenset({"aten.view.default", "aten.reshape.default", "aten._unsafe_view.default"})
# Ops that compute element by element and keep their input's layout: a quantized model
# (ExecuTorch's OpenVINOQuantizer, NNCF's PT2E) quantizes and dequantizes the attention
# result before the view.
_KEEP_LAYOUT = frozenset(
    f"quantized_decomposed.{op}_per_tensor.{overload}"
    for op in ("quantize", "dequantize")
    for overload in ("default", "tensor")
)
# Ops that only move or relabel an attention result's dimensions, or keep its layout.
_LAYOUT_OPS = (
    _VIEWS
    | _KEEP_LAYOUT
    | {
        "aten.permute.default",
        "aten.transpose.int",
        "aten.unsqueeze.default",
        "aten.squeeze.dim",
        "aten.squeeze.dims",
        "aten.squeeze.default",
    }
)


def copy_before_views_after_attention(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """A program whose views of the results of the attention op kept whole read contiguous copies;
    `program` itself is not changed.

    Returns `program` when it has no such view, or when `op_types_to_skip` keeps attention on the CPU.
    """
    attention = SDPA
    if matches_op_type(str(attention), op_types_to_skip) or not _views_after(program.graph, attention):
        return program
    program = program.run_decompositions({})  # a copy of the graph; `{}` decomposes nothing
    for view in _views_after(program.graph, attention):
        source = view.args[0]
        with program.graph.inserting_before(view):
            copy = program.graph.call_function(
                torch.ops.aten.clone.default, (source,), {"memory_format": torch.contiguous_format}
            )
        copy.meta["val"] = source.meta["val"].clone(memory_format=torch.contiguous_format)
        view.replace_input_with(source, copy)
    program.graph_module.recompile()
    return program


def _views_after(graph: torch.fx.Graph, attention: torch._ops.OpOverload) -> List[torch.fx.Node]:
    views, seen = [], set()
    pending = [user for node in graph.nodes if node.target is attention for user in node.users]
    while pending:
        node = pending.pop()
        if node in seen or node.op != "call_function" or op_name(node) not in _LAYOUT_OPS:
            continue
        seen.add(node)
        if op_name(node) in _VIEWS:
            views.append(node)
        pending.extend(node.users)
    return views
