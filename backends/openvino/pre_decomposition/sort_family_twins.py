"""The sort family's nodes of several results that the partitioner takes, given their twin op.

ExecuTorch 1.5.1 keeps no op of several results whole (``ops_to_not_decompose`` drops
them), and its edge dialect refuses those outside core ATen (``sort(stable=True)``,
``kthvalue``, ``mode``...). Each such node the partitioner takes calls instead its twin
in our namespace (edge_graph/twin_ops.py says why), which the edge dialect lets through.
Which nodes the partitioner takes is its decision (partition/sort_family.py, ``claims``):
a node is twinned exactly when it is taken.
"""

from __future__ import annotations

from typing import Collection

import torch
from torch.export import ExportedProgram

from ..edge_graph.nodes import matches_op_type, op_name
from ..edge_graph.twin_ops import twin
from ..partition.sort_family import TWINNED, claims


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
