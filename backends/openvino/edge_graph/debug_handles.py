"""The debug handles of the edge operators each node computes, carried from the edge graph
to the graph OpenVINO converts and to the ops of the OpenVINO model.

The conversion reads ``node_debug_handles`` (conversion/__init__.py); a rewrite that
joins ops marks the op it keeps with ``ALSO_COMPUTES`` (conversion/rewrites/sibling_products.py);
preprocess's debug handle map reads both (preprocessing/debug_handle_map.py).
"""

from __future__ import annotations

from typing import Dict, Tuple

import torch

#: The rt_info key under which a rewrite lists, comma-separated, the names of the ops it
#: replaced by the op holding it (conversion/rewrites/sibling_products.py: the products
#: a joined product computes too). Read at lowering only: IR files do not keep it.
ALSO_COMPUTES = "etov_also_computes"


def _own_handles(node: torch.fx.Node) -> Tuple[int, ...]:
    handle = node.meta.get("debug_handle")
    if isinstance(handle, int):
        return (handle,)
    if isinstance(handle, (tuple, list)):
        return tuple(handle)
    return ()


def node_debug_handles(edge_graph: torch.fx.Graph, graph_module: torch.fx.GraphModule) -> Dict[str, Tuple[int, ...]]:
    """The edge debug handles of each node of `graph_module`, the partition `edge_graph` prepared for conversion.

    A node keeps its own handle through our lowering passes. A node that a pass
    added has none: it takes the handles of the nodes the passes removed in its
    place (those that, in `edge_graph`, fed the nodes it now feeds, and what fed
    only them), or, where it replaced nothing (a cast put before an op), those of
    the nodes it feeds.
    """
    before = {node.name: node for node in edge_graph.nodes}
    after = {node.name for node in graph_module.graph.nodes}
    removed = {name for name, node in before.items() if name not in after and node.op == "call_function"}

    def replaced_before(survivor: torch.fx.Node) -> Tuple[int, ...]:
        """The handles of the removed nodes that fed `survivor` in the edge graph, and of those that fed them."""
        found, seen = set(), set()
        stack = [arg for arg in before[survivor.name].all_input_nodes if arg.name in removed]
        while stack:
            node = stack.pop()
            if node.name not in seen:
                seen.add(node.name)
                found.update(_own_handles(node))
                stack.extend(arg for arg in node.all_input_nodes if arg.name in removed)
        return tuple(found)

    handles: Dict[str, Tuple[int, ...]] = {}
    for node in reversed(graph_module.graph.nodes):
        own = _own_handles(node)
        if own or node.op != "call_function":
            if own:
                handles[node.name] = own
            continue
        found = set()
        for user in node.users:
            if user.name in before:
                found.update(replaced_before(user) or handles.get(user.name, ()))
            else:
                found.update(handles.get(user.name, ()))
        if found:
            handles[node.name] = tuple(sorted(found))
    return handles
