"""Small graph edits the passes share: matching an op, adding an edge op, replacing a
node by another, erasing what is left unread."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ..edge_graph.nodes import op_name


def calls(node: object, name: str, positional: int = 0) -> bool:
    """Whether `node` calls op `name` with at least `positional` positional arguments."""
    return (
        isinstance(node, torch.fx.Node)
        and node.op == "call_function"
        and op_name(node) == name
        and len(node.args) >= positional
    )


def emit(graph: torch.fx.Graph, op: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
    """Adds ``op(*args, **kwargs)`` at the graph's insertion point, with its example value.

    The frontend types each value from its example, which the fake tensors of the
    arguments compute: ``emit(graph, exir_ops.edge.aten.floor.default, quotient)``.
    """
    node = graph.call_function(op, args, kwargs)
    examples = torch.fx.node.map_arg(args, lambda arg: arg.meta["val"])  # in lists too (cat's)
    node.meta["val"] = op(*examples, **kwargs)
    return node


def replace(graph: torch.fx.Graph, node: torch.fx.Node, replacement: torch.fx.Node) -> None:
    """Makes every user of `node` read `replacement`, which takes its metadata, and drops `node`."""
    replacement.meta = dict(node.meta)
    node.replace_all_uses_with(replacement)
    graph.erase_node(node)


def erase_unread(node: torch.fx.Node) -> None:
    """Erases op `node` if nothing reads it, then each of its inputs that leaves unread."""
    if node.op != "call_function" or node.users:
        return
    inputs = node.all_input_nodes
    node.graph.erase_node(node)
    for input_node in inputs:
        erase_unread(input_node)


def same_sizes(left: Optional[Sequence[Any]], right: Sequence[Any]) -> bool:
    """Whether two shapes are equal for every size their dynamic dims can take, without
    adding a guard on a symbolic size."""
    return (
        left is not None
        and len(left) == len(right)
        and all(a is b or statically_known_true(a == b) for a, b in zip(left, right))
    )
