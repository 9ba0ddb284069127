"""Sorting, selection and set ops: which nodes the partitioner keeps whole, and which variants stay on the CPU.

Our translators (conversion/translators/) compute these ops as eager PyTorch does.
Those outside core ATen have no decomposition, so ExecuTorch's edge dialect refuses
them unless the partitioner claims them: the ops of one result through
``ops_to_not_decompose`` (kept_whole.py), the ops of several results by giving each
node a twin before the edge dialect is made (edge_graph/twin_ops.py says why). A
node is claimed exactly when the partitioner takes it, that is when ``refusal``
finds nothing. The variants refused are those no OpenVINO form reproduces; each
reason says why.
"""

from __future__ import annotations

import operator
from typing import Callable, Collection, Dict, FrozenSet, Optional

import torch
from torch.export import ExportedProgram

from ..edge_graph.dtypes import BOUND_DTYPES
from ..edge_graph.nodes import matches_op_type, op_name
from ..edge_graph.twin_ops import twin

aten = torch.ops.aten

# Non-core ATen ops of one result, without a decomposition (or with one we would rather
# not have), which our translators convert.
KEPT_WHOLE: FrozenSet[torch._ops.OpOverload] = frozenset(
    {
        aten.argsort.stable,
    }
)
# Non-core ATen ops of several results, which our translators convert.
TWINNED: FrozenSet[torch._ops.OpOverload] = frozenset(
    {
        aten.sort.stable,
    }
)


def _reads_result(node: torch.fx.Node, index: int) -> bool:
    return any(user.target is operator.getitem and user.args[1] == index for user in node.users)


# Op name -> why a node of that op stays on the CPU, or None.
REFUSALS: Dict[str, Callable[[torch.fx.Node], Optional[str]]] = {}


def _bound(node: torch.fx.Node) -> bool:
    values = [node.meta.get("val")] + [arg.meta.get("val") for arg in node.all_input_nodes]
    tensors = [t for value in values for t in (value if isinstance(value, (tuple, list)) else [value])]
    return all(t.dtype in BOUND_DTYPES for t in tensors if isinstance(t, torch.Tensor))


def refusal(node: torch.fx.Node) -> Optional[str]:
    """Why a node of the sort family stays on the CPU, or None when the delegate computes it."""
    rule = REFUSALS.get(op_name(node))
    return rule(node) if rule is not None else None


def claims(node: torch.fx.Node) -> bool:
    """Whether the partitioner takes this node, so ExecuTorch is to keep it whole."""
    return node.op == "call_function" and _bound(node) and refusal(node) is None


def twin_claimed_nodes(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """A program whose nodes of ops in TWINNED that the partitioner takes call their twin op;
    `program` itself is not changed. Returns `program` when it has none."""

    def taken(node: torch.fx.Node) -> bool:
        return (
            node.op == "call_function"
            and node.target in TWINNED
            and not matches_op_type(op_name(node), op_types_to_skip)
            and node.name not in op_names_to_skip
            and claims(node)
        )

    if not any(taken(node) for node in program.graph.nodes):
        return program
    program = program.run_decompositions({})  # a copy of the graph; `{}` decomposes nothing
    for node in program.graph.nodes:
        if taken(node):
            node.target = twin(node.target)
    program.graph_module.recompile()
    return program
