"""Negative indices of a multi-tensor index made positive before OpenVINO sees them.

For ``x[i, j]`` OpenVINO's frontend (seen on 2026.4.1, ``index_tensor_on_list``)
flattens the indices to ``i * x.size(1) + j`` and gathers from the flattened
tensor without first wrapping a negative index into range: ``x[0, -1]`` reads
``x[-1]`` of the flattened tensor, ``x[4, 5]`` of a 5 x 6 one. A single index
tensor (``x[i]``, ``x[:, i]``) is right. Each integer index of an index with two
or more tensors becomes ``where(index < 0, index + size, index)``; the
partitioner keeps on the CPU those over a dimension of dynamic size
(partition/argument_rules.py), where the size is not a number here.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.multi_index import integer_index_dims
from ..edge_graph.nodes import op_name
from ..workarounds import works_around

INDEX = "aten.index.Tensor"


@works_around("negative_index_in_multi_index")
def wrap_negative_indices(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    aten = exir_ops.edge.aten
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node) != INDEX:
            continue
        sizes = node.args[0].meta["val"].shape
        indices = list(node.args[1])
        for dim in integer_index_dims(node):
            if not isinstance(sizes[dim], int):
                continue
            index = indices[dim]
            with graph.inserting_before(node):
                negative = graph.call_function(aten.lt.Scalar, (index, 0))
                shifted = graph.call_function(aten.add.Scalar, (index, sizes[dim]))
                indices[dim] = graph.call_function(aten.where.self, (negative, shifted, index))
            changed = True
        node.args = (node.args[0], indices, *node.args[2:])
    if changed:
        graph_module.recompile()
    return graph_module
