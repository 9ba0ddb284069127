"""A dequantize with no quantize before it, written out as arithmetic.

PT2E quantization with ``fold_quantize=True`` (the default of NNCF's
``quantize_pt2e`` and of torchao's ``convert_pt2e``) stores each weight as an
integer constant read by a lone ``dequantize_per_tensor`` / ``dequantize_per_channel``.
OpenVINO's PyTorch frontend (seen on 2026.4.1, with OpenVINO alone too) folds a
dequantize into the quantize before it; with none there, it drops the dequantize
and the layer reads the raw integers, and the conversion fails ("Arguments do not
have the same element type"), so the layers stayed on ExecuTorch's CPU kernels.
Written as ``(convert(w) - zero_point) * scale``, the weight becomes the integer
constant + Convert + Subtract + Multiply that OpenVINO recognises as a quantized
weight, and the layer runs on its INT8 kernels. A quantize -> dequantize pair is
left for the frontend, which makes it a FakeQuantize.
"""

from __future__ import annotations

import torch

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

_DEQUANTIZE = {
    "quantized_decomposed.dequantize_per_tensor.default",
    "quantized_decomposed.dequantize_per_channel.default",
}
_QUANTIZE_PREFIX = "quantized_decomposed.quantize_per_"


@works_around("lone_dequantize_dropped")
def expand_lone_dequantize(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    lone = [
        node
        for node in graph.nodes
        if node.op == "call_function"
        and op_name(node) in _DEQUANTIZE
        and not (isinstance(node.args[0], torch.fx.Node) and op_name(node.args[0]).startswith(_QUANTIZE_PREFIX))
    ]
    for node in lone:
        with graph.inserting_before(node):
            value = _written_out(graph, node)
        node.replace_all_uses_with(value)
        graph.erase_node(node)
    if lone:
        graph_module.recompile()
    return graph_module


def _written_out(graph: torch.fx.Graph, node: torch.fx.Node) -> torch.fx.Node:
    quantized, scale, zero_point = node.args[:3]
    if op_name(node).endswith("per_channel.default"):
        # Per-channel scales and zero points lie along `axis`: broadcast them there.
        axis = node.args[3]
        rank = len(node.meta["val"].shape)
        shape = [-1 if dim == axis % rank else 1 for dim in range(rank)]
        scale = _call(graph, node, torch.ops.aten.view.default, (scale, shape))
        zero_point = _call(graph, node, torch.ops.aten.view.default, (zero_point, shape))
    as_float = _call(graph, node, torch.ops.aten._to_copy.default, (quantized,), {"dtype": torch.float32})
    centred = _call(graph, node, torch.ops.aten.sub.Tensor, (as_float, zero_point))
    return _call(graph, node, torch.ops.aten.mul.Tensor, (centred, scale))


def _call(graph: torch.fx.Graph, like: torch.fx.Node, target, args, kwargs=None) -> torch.fx.Node:
    # The frontend reads each node's type from its meta; every step here is float32
    # of the dequantized shape except the broadcast views, whose meta it does not need.
    new = graph.call_function(target, args, kwargs or {})
    new.meta = {key: value for key, value in like.meta.items() if key == "val"}
    return new
