"""Ops the partitioner asks ExecuTorch to keep whole instead of decomposing them.

OpenVINO has one op for scaled dot-product attention, which its CPU plugin runs as
one fused kernel (and, for an LLM's cache, fuses with it). ExecuTorch's edge
dialect decomposes it into matmuls, a softmax and the mask's arithmetic unless
the partitioner claims it. NNCF's unpacking of 4-bit weights is kept whole for the
same reason (compressed_weights.py), and the sorting, selection and set
ops outside core ATen because nothing else computes them (partition/sort_family.py).
ExecuTorch raises when a claimed node is neither delegated nor decomposed, so a node
is claimed only when OpenVINO converts it for sure; the others are decomposed as before.
"""

from __future__ import annotations

from typing import Callable, Collection, Dict, List, Optional, Tuple

import torch
from torch.export import ExportedProgram

from ..edge_graph.nodes import matches_op_type, op_name, tensor_value
from ..edge_graph.program_inputs import constant_input_names
from ..workarounds import works_around
from . import sort_family
from .compressed_weights import STACK, UNPACK_SHIFT, is_unpack_node

SDPA = torch.ops.aten.scaled_dot_product_attention.default
# Missing from the table of ops the frontend converts (openvino_supported_ops), which
# lists only the torch.compile forms of attention; its frontend converts this one.
KEPT_WHOLE_OPS = frozenset({"aten.scaled_dot_product_attention.default"})
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def ops_kept_whole(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> Tuple[List[torch._ops.OpOverload], Optional[Callable[[torch.fx.Node], bool]]]:
    """The ``ops_to_not_decompose`` answer: the ops, and which of their nodes to keep whole."""
    # Decided on the graph as given: ExecuTorch renames each kept node's op while it
    # goes through the graph, after which the shift no longer looks like one.
    constants = constant_input_names(program)
    unpacking = {node.name for node in program.graph.nodes if is_unpack_node(node, constants)}
    rules: Dict[torch._ops.OpOverload, Callable[[torch.fx.Node], bool]] = {
        SDPA: converts_whole,
        STACK: lambda node: node.name in unpacking,
        UNPACK_SHIFT: lambda node: node.name in unpacking,
    }
    # Sorting, selection and set ops outside core ATen (issue 40), claimed where the delegate takes them.
    rules.update(dict.fromkeys(sort_family.KEPT_WHOLE, sort_family.claims))
    rules = {op: rule for op, rule in rules.items() if not matches_op_type(str(op), op_types_to_skip)}
    if not rules:
        return [], None

    def keep(node: torch.fx.Node) -> bool:
        rule = rules.get(node.target)
        return rule is not None and node.name not in op_names_to_skip and rule(node)

    return list(rules), keep


@works_around("attention_enable_gqa_ignored")
def converts_whole(node: torch.fx.Node) -> bool:
    """Whether OpenVINO's frontend converts this attention node as it is."""
    if node.op != "call_function" or op_name(node) not in KEPT_WHOLE_OPS:
        return False
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
    arguments = dict(zip(names, node.args))
    arguments.update(node.kwargs)
    query, key, value = (tensor_value(arguments.get(name)) for name in ("query", "key", "value"))
    if query is None or key is None or value is None:
        return False
    if query.dtype not in _FLOATS or key.dtype != query.dtype or value.dtype != query.dtype:
        return False
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return False
    if arguments.get("dropout_p", 0.0) != 0.0:
        return False
    # OpenVINO's frontend ignores enable_gqa: grouped heads must be repeated first.
    if arguments.get("enable_gqa", False) and not _same_size(query.shape[1], key.shape[1]):
        return False
    mask = arguments.get("attn_mask")
    if mask is not None:
        mask_value = tensor_value(mask)
        if mask_value is None or mask_value.dtype not in (torch.bool, query.dtype):
            return False
    return True


def _same_size(first, second) -> bool:
    return isinstance(first, int) and isinstance(second, int) and first == second
