"""Integer cumsum and prod computed in the dtype PyTorch gives their result.

PyTorch computes ``cumsum`` and ``prod`` of a bool or integer tensor in int64
(or in the ``dtype`` the caller asks for). OpenVINO's PyTorch frontend (seen on
2026.4.1) computes them in the input's type instead: a cumsum over a bool mask
runs in 8 bits and wraps after 255 (``cumsum`` of 300 ``True`` values ends in
44, not 300), and a cumsum or prod over int32 makes an int32 tensor, which an
int64 tensor it is written into then refuses at conversion ("Updates element
type must be the same as inputs"). Casting the input to the result dtype first
makes the frontend compute what PyTorch computes. ``sum`` needs no cast: the
frontend already gives it the right type.
"""

from __future__ import annotations

import logging

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

logger = logging.getLogger(__name__)

_REDUCTIONS = ("aten.cumsum.default", "aten.prod.dim_int", "aten.prod.default")


def _tensor_value(node: object):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _is_integer_or_bool(dtype: torch.dtype) -> bool:
    return not dtype.is_floating_point and not dtype.is_complex


@works_around("reduction_in_input_type")
def cast_reduction_input(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Casts the bool or integer input of every cumsum and prod to the dtype of its result.

    The result dtype is the one PyTorch gave the node when the program was
    exported (``node.meta["val"]``), so a ``dtype=`` argument is respected.
    """
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) not in _REDUCTIONS:
            continue
        source = node.args[0]
        source_value, result_value = _tensor_value(source), _tensor_value(node)
        if source_value is None or result_value is None:
            continue
        if not _is_integer_or_bool(source_value.dtype) or source_value.dtype == result_value.dtype:
            continue
        with graph.inserting_before(node):
            cast = graph.call_function(exir_ops.edge.aten._to_copy.default, (source,), {"dtype": result_value.dtype})
        # Only "val": the source's other metadata (tensor_meta) describes its old dtype.
        cast.meta = {"val": source_value.to(result_value.dtype)}
        node.replace_input_with(source, cast)
        logger.debug("%s: input cast from %s to %s", node.name, source_value.dtype, result_value.dtype)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
