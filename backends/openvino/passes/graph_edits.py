"""Small graph edits the passes share: adding an edge op, replacing a node by another."""

from __future__ import annotations

from typing import Any

import torch


def emit(graph: torch.fx.Graph, op: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
    """Adds ``op(*args, **kwargs)`` at the graph's insertion point, with its example value.

    The frontend types each value from its example, which the fake tensors of the
    arguments compute: ``emit(graph, exir_ops.edge.aten.floor.default, quotient)``.
    """
    node = graph.call_function(op, args, kwargs)
    examples = [arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg for arg in args]
    node.meta["val"] = op(*examples, **kwargs)
    return node


def replace(graph: torch.fx.Graph, node: torch.fx.Node, replacement: torch.fx.Node) -> None:
    """Makes every user of `node` read `replacement`, which takes its metadata, and drops `node`."""
    replacement.meta = dict(node.meta)
    node.replace_all_uses_with(replacement)
    graph.erase_node(node)
