"""Keyword arguments of the ops our translators convert, written as positional ones.

OpenVINO 2026.4.1's Python ``NodeContext`` cannot read a keyword argument: the FX
decoder hands it over as an OpenVINO constant, which ``get_attribute`` fails to
convert, or replaces with the default it is given (``scatter_reduce(...,
include_self=False)`` read as True). Positional arguments it reads
(``get_values_from_const_input``). So each node of an op in ``TRANSLATORS`` gets its
keyword arguments appended to its positional ones, in the schema's order, with the
schema's defaults for those in between. The graph is not run after the passes, only
converted.
"""

from __future__ import annotations

import torch

from ..conversion.translators import TRANSLATORS
from ..edge_graph.nodes import op_name
from ..workarounds import works_around


@works_around("keyword_argument_of_own_translation")
def positional_translator_arguments(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    changed = False
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or not node.kwargs or op_name(node) not in TRANSLATORS:
            continue
        schema = node.target._schema
        names = [argument.name for argument in schema.arguments]
        last = max(names.index(name) for name in node.kwargs)
        arguments = list(node.args)
        for argument in schema.arguments[len(arguments) : last + 1]:
            default = argument.default_value if argument.has_default_value() else None
            arguments.append(node.kwargs.get(argument.name, default))
        node.args, node.kwargs = tuple(arguments), {}
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
