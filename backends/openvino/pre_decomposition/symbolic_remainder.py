"""A remainder of symbolic ints, written with floor division.

ExecuTorch 1.5.1 runs ``a % b`` of symbolic ints with its prim op
``executorch_prim::mod.Scalar``, which takes C's remainder: for ``(-n) % 8`` (the
padding that brings a length n to a multiple of 8) it gives -7 where Python, and so
eager PyTorch, gives 1. A pad by that negative width crops where eager pads; our
delegate pads as PyTorch does for a negative width, so the output came back shorter
without an error (ExecuTorch's own pad kernel refuses a negative width, and its
replicate pad crops too). OpenVINO's frontend does not convert the op, so it runs on
ExecuTorch's CPU kernels either way.

``a - (a // b) * b`` is Python's remainder for every ``b != 0``, and ExecuTorch
divides ints rounding down, as Python does: the rewrite gives eager's value with the
prim ops ExecuTorch has.
"""

from __future__ import annotations

import logging
import operator
from typing import Collection, List

import torch
from torch.export import ExportedProgram

logger = logging.getLogger(__name__)


def remainders_through_floor_division(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """A program whose symbolic int remainders are computed as ``a - (a // b) * b``;
    `program` itself is not changed. Returns `program` when it has none.

    Every such remainder, whatever the user keeps on the CPU: it runs on the CPU either way."""
    if not _symbolic_remainders(program.graph):
        return program
    program = program.run_decompositions({})  # a copy of the graph; `{}` decomposes nothing
    remainders = _symbolic_remainders(program.graph)
    for remainder in remainders:
        dividend, divisor = remainder.args
        graph = program.graph
        with graph.inserting_before(remainder):
            quotient = _call(graph, operator.floordiv, dividend, divisor)
            multiple = _call(graph, operator.mul, quotient, divisor)
            difference = _call(graph, operator.sub, dividend, multiple)
        difference.meta["val"] = remainder.meta["val"]
        remainder.replace_all_uses_with(difference)
        graph.erase_node(remainder)
    program.graph_module.recompile()
    logger.info("OpenVINO partitioner: %d symbolic int remainder(s) computed through floor division", len(remainders))
    return program


def _symbolic_remainders(graph: torch.fx.Graph) -> List[torch.fx.Node]:
    return [
        node
        for node in graph.nodes
        if node.op == "call_function"
        and node.target is operator.mod
        and isinstance(node.meta.get("val"), torch.SymInt)
        and len(node.args) == 2
    ]


def _call(graph: torch.fx.Graph, function, left, right) -> torch.fx.Node:
    node = graph.call_function(function, (left, right))
    node.meta["val"] = function(_value(left), _value(right))
    return node


def _value(argument):
    return argument.meta["val"] if isinstance(argument, torch.fx.Node) else argument
