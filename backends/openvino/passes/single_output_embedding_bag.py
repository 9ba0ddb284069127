"""EmbeddingBag nodes with their one read result as the node's own output.

``aten._embedding_bag`` has four results, of which models read the first (the
others serve its gradient). OpenVINO's FX decoder takes the ``getitem`` of a
translator registered from Python as indexing into that translator's first output
(seen on 2026.4.1), so the translator in conversion/translators/embedding_bag.py returns the
bags alone and the getitem goes. The partitioner keeps nodes whose other results
are read on the CPU (partition/argument_rules.py).
"""

from __future__ import annotations

import operator

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

_EMBEDDING_BAG = "aten._embedding_bag.default"


@works_around("getitem_of_own_translation")
def single_output_embedding_bag(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    changed = False
    for node in list(graph_module.graph.nodes):
        if node.op != "call_function" or op_name(node) != _EMBEDDING_BAG:
            continue
        if not node.users or any(user.target is not operator.getitem or user.args[1] != 0 for user in node.users):
            continue
        for getitem in list(node.users):
            getitem.replace_all_uses_with(node)
            graph_module.graph.erase_node(getitem)
        # The decoder reads shapes and types from tensor_meta.
        for key in ("val", "tensor_meta"):
            if isinstance(node.meta.get(key), (tuple, list)):
                node.meta[key] = node.meta[key][0]
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
