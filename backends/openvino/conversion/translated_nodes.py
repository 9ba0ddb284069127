"""How the nodes our translators convert are shown to OpenVINO's frontend: arguments by position, one output per result.

OpenVINO's FX decoder (seen on 2026.4.1) does two things our Python translators
(translators/) cannot work with:

- It gives a translator the node's positional arguments as inputs; a keyword argument
  reaches a Python translator only as a constant, and a tensor passed by keyword not
  at all (``searchsorted(..., sorter=s)`` and ``sort(x, stable=True, dim=0)`` arrive
  as keywords). ``positional_arguments`` writes each such node's arguments in the
  order of the op's schema, defaults included, so a translator reads argument i as
  input i.
- It reports one output per graph node, so the frontend keeps only a translator's
  first output and converts each ``getitem`` of the node as a Gather along axis 0 of
  that output: ``sort(x)[1]`` became the second row of the sorted values, without an
  error. (The frontend's own multi-result translations return a list construct,
  which Python cannot make.) ``MultiResultDecoder`` reports one output per result of
  such a node, each being the getitem node that reads it (or an id no node has, for
  a result nobody reads), and skips the getitems: the frontend then stores each
  translator output as the value of its getitem.
"""

from __future__ import annotations

import itertools
import operator
from typing import Dict, Optional

import torch

from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

from ..edge_graph.nodes import op_name
from ..workarounds import works_around
from .translators import TRANSLATORS


def _translated(node: object) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and op_name(node) in TRANSLATORS


@works_around("keyword_argument_of_own_translation")
def positional_arguments(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Writes every argument of each node our translators convert by position, defaults included."""
    changed = False
    for node in graph_module.graph.nodes:
        schema = getattr(node.target, "_schema", None) if _translated(node) else None
        if schema is None or (not node.kwargs and len(node.args) == len(schema.arguments)):
            continue
        arguments = []
        for index, argument in enumerate(schema.arguments):
            if index < len(node.args):
                arguments.append(node.args[index])
            elif argument.name in node.kwargs:
                arguments.append(node.kwargs[argument.name])
            elif argument.has_default_value():
                arguments.append(argument.default_value)
            else:
                raise ValueError(f"{node.name} ({op_name(node)}) has no value for its argument {argument.name!r}")
        node.args, node.kwargs = tuple(arguments), {}
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module


def _results(node: object) -> Optional[int]:
    """How many results a node of one of our translated ops has, or None for a single tensor."""
    if not _translated(node):
        return None
    value = node.meta.get("val")
    return len(value) if isinstance(value, (tuple, list)) else None


def _reads_a_result(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem and _results(node.args[0]) is not None


@works_around("getitem_of_own_translation")
class MultiResultDecoder(TorchFXPythonDecoder):
    """TorchFXPythonDecoder for a whole graph module, mapping our ops' results to their getitems."""

    def visit_subgraph(self, node_visitor) -> None:
        # Ids past the last node's: the frontend names every output it stores by an id,
        # and a result nobody reads must not take the id of a node that exists.
        unused_ids = itertools.count(len(self._nodes))
        index_of = {node: index for index, node in enumerate(self._nodes)}

        def visit(decoder) -> None:
            node = decoder.pt_module
            if _reads_a_result(node):
                return  # its value is stored when the node it reads is converted
            count = _results(node)
            if count is not None:
                readers: Dict[int, torch.fx.Node] = {
                    user.args[1]: user for user in node.users if user.target is operator.getitem
                }
                decoder._outputs = [
                    ("", index_of[readers[k]] if k in readers else next(unused_ids)) for k in range(count)
                ]
            node_visitor(decoder)

        super().visit_subgraph(visit)
