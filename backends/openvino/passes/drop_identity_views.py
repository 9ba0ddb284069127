"""Views to the shape their input already has dropped.

An exported attention often reshapes the output of ``scaled_dot_product_attention`` to
the shape it already has (``[1, heads, tokens, head size]``, the tokens a dynamic size)
before permuting it to ``[1, tokens, heads, head size]``. OpenVINO's frontend makes
that view a Reshape whose target shape is computed at run time, which OpenVINO 2026.4.1
keeps. In PagedAttention form (runtime/paged_attention.cpp) SDPAToPagedAttention puts
a Transpose back to ``[1, heads, tokens, head size]`` after the attention, and the
Reshape then stands between it and the model's own permute, which undoes it: the CPU
plugin runs both Transposes, two per layer (about 1% of a 900-token prompt of a
1024-wide Llama at bf16, benchmarks/investigations/llm_prefill_attention.py). Without
the view, OpenVINO's transformations fuse the two into nothing. The view's readers read
its input instead; a view that is an output of the graph stays, so that an output never
becomes the same tensor as an input or another output.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name, tensor_value
from ..workarounds import not_a_workaround
from .graph_edits import same_sizes

VIEWS = frozenset({"aten.view_copy.default", "aten.view.default", "aten._unsafe_view.default"})


def _is_identity_view(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or op_name(node) not in VIEWS:
        return False
    source, result = tensor_value(node.args[0]), tensor_value(node)
    if source is None or result is None or source.dtype != result.dtype:
        return False
    return same_sizes(source.shape, result.shape) and all(user.op != "output" for user in node.users)


@not_a_workaround("a speed-up: the same values without a Reshape that keeps Transposes apart")
def drop_identity_views(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    identities = [node for node in graph.nodes if _is_identity_view(node)]
    for view in identities:
        view.replace_all_uses_with(view.args[0])
        graph.erase_node(view)
    if identities:
        graph_module.recompile()
    return graph_module
