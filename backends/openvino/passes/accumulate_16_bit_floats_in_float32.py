"""``cumsum`` and ``var`` of float16/bfloat16 values accumulated in float32, as PyTorch does.

PyTorch computes these over 16-bit floats in float32 and rounds the result once.
OpenVINO's PyTorch frontend (seen on 2026.4.1) keeps them in the input's type, and
the CPU plugin computes a bfloat16 program in bfloat16 where it has bf16 units
(OpenVINO alone too): a bfloat16 ``cumsum`` of 4096 ones ended at 256, not 4096, and
the ``var`` of bfloat16 rows around 100 came out 20% high (the squared deviations
rounded to 8 bits), without an error. Each such node is computed on its input cast to
float32, and its result cast back.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around
from .graph_edits import emit

_ACCUMULATING = ("aten.cumsum.default", "aten.var.correction")
_SIXTEEN_BIT = (torch.float16, torch.bfloat16)


@works_around("sixteen_bit_accumulation")
def accumulate_16_bit_floats_in_float32(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    to_copy = exir_ops.edge.aten._to_copy.default
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) not in _ACCUMULATING:
            continue
        source = node.args[0]
        value = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
        if not isinstance(value, torch.Tensor) or value.dtype not in _SIXTEEN_BIT:
            continue
        if node.kwargs.get("dtype") is not None:
            continue  # cumsum(x, dtype=...) names the type to compute in
        with graph.inserting_before(node):
            widened = emit(graph, to_copy, source, dtype=torch.float32)
        node.replace_input_with(source, widened)
        users = list(node.users)
        with graph.inserting_after(node):
            narrowed = emit(graph, to_copy, node, dtype=value.dtype)
        for user in users:
            user.replace_input_with(node, narrowed)
        node.meta["val"] = node.meta["val"].to(torch.float32)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
