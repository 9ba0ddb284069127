"""Trial conversion of a proposed partition: the nodes OpenVINO's frontend fails on stay on the CPU.

OpenVINO's support table lists ops by name, but its frontend refuses some of their
variants (``EmbeddingBag(mode="max")``, ``include_last_offset=True``,
``avg_pool3d(divisor_override=...)``, seen on 2026.4.1). Without this check one
such node fails the whole export in ``preprocess``. The partitioner converts each
partition it proposes the way ``preprocess`` will, reads from the frontend's error
which nodes failed (in their own conversion, or in a rewrite of its normalize step
that threw on them), and partitions again without them.
"""

from __future__ import annotations

import re
from operator import getitem
from typing import AbstractSet, Dict, Iterable, List, Set, Tuple

import torch
from torch.export import ExportedProgram

from ..conversion.frontend import convert_with_frontend, decoder_input, prepare_graph_module, return_each_value_once
from ..edge_graph.program_inputs import constant_input_names
from .compressed_weights import unpacked_stand_ins

# The frontend's error names each failed node as "<fx node name>/<op name>", then its message.
_FAILED_NODE = re.compile(
    r"during conversion of operation (\S+?)/\S+ with schema[^\n]*\n(.*?)(?=\n-- |\nSummary:|\Z)", re.DOTALL
)
# The name a node of the trial module had before preparing it, kept in its meta.
_TRIAL_NAME = "openvino_trial_name"
# A transformation of its normalize step that throws on a node it rewrites names it as
# "[<pass>] END: node: <type> <fx node name>/<op name> (<inputs>) -> (...) CALLBACK HAS THROWN: ..."
_FAILED_REWRITE = re.compile(r"\[([\w:]+)\] END: node: \S+ (\S+?)/\S+ \(.*?CALLBACK HAS THROWN: ([^\n]*)")


def unconvertible_nodes(exported_program: ExportedProgram, nodes: Iterable[torch.fx.Node]) -> Dict[str, str]:
    """Names of the partition's nodes that OpenVINO's frontend fails to convert, with the reason.

    Only the first failures are named: a node that failed because one of its inputs
    did is left for the next round, after the partition has been proposed again.
    Raises the frontend's error when it names no node of the partition.
    """
    nodes = list(nodes)
    stand_ins = unpacked_stand_ins(nodes, constant_input_names(exported_program))
    module, originals = _partition_module(exported_program, nodes, stand_ins)
    for node in module.graph.nodes:
        node.meta[_TRIAL_NAME] = node.name
    # Preparing may retrace the module (dim-order ops), which names nodes anew.
    module = prepare_graph_module(module)
    originals = {
        node.name: originals[node.meta[_TRIAL_NAME]]
        for node in module.graph.nodes
        if node.meta.get(_TRIAL_NAME) in originals
    }
    return_each_value_once(module)
    placeholders = [node for node in module.graph.nodes if node.op == "placeholder"]
    inputs = [decoder_input(node.meta["val"]) for node in placeholders]
    try:
        convert_with_frontend(module, [dtype for dtype, _ in inputs], [shape for _, shape in inputs])
    except Exception as error:  # the frontend's OpConversionFailure, or any check it raises
        failed = {originals[name]: reason for name, reason in _failures(str(error)).items() if name in originals}
        if not failed:
            raise
        first = [node for node in failed if not _depends_on_any(node, failed.keys())]
        return {node.name: f"OpenVINO's PyTorch frontend failed to convert it ({failed[node]})" for node in first}
    return {}


def _failures(message: str) -> Dict[str, str]:
    """Trial node name -> the last line the frontend gave for it."""
    failures = {}
    for name, detail in _FAILED_NODE.findall(message):
        lines = [line.strip() for line in detail.splitlines() if line.strip()]
        failures[name] = lines[-1] if lines else "no reason given"
    for rewrite, name, thrown in _FAILED_REWRITE.findall(message):
        failures.setdefault(name, f"{rewrite.split('::')[-1]} threw: {thrown.strip()}")
    return failures


def _depends_on_any(node: torch.fx.Node, others: Iterable[torch.fx.Node]) -> bool:
    """Whether `node` reads, directly or through other nodes, one of `others`."""
    targets = set(others) - {node}
    seen: Set[torch.fx.Node] = set()
    pending = list(node.all_input_nodes)
    while pending:
        current = pending.pop()
        if current in targets:
            return True
        if current not in seen:
            seen.add(current)
            pending.extend(current.all_input_nodes)
    return False


def _partition_module(
    exported_program: ExportedProgram, nodes: List[torch.fx.Node], stand_ins: AbstractSet[torch.fx.Node] = frozenset()
) -> Tuple[torch.fx.GraphModule, Dict[str, torch.fx.Node]]:
    """The partition as a GraphModule whose inputs are the values it reads from outside.

    Weights are inputs too, not attributes: ExecuTorch's passes refuse the program's
    own tensors in a new module, and the partitioner's weights are fake. The frontend
    converts most ops the same way whether a weight is a Parameter or a Constant; the
    exceptions are computed from constants only (4-bit unpacking): each node of
    `stand_ins` becomes an input, and what only they read is left out. Returns the
    module and, for each of its nodes' names, the program's node it copies. The
    program is not changed.
    """
    members = set(nodes)
    # The partitioner proposes a multi-result node without its getitems, which
    # ExecuTorch then puts in the node's partition: so does the trial.
    getitems = [user for node in nodes for user in node.users if user.op == "call_function" and user.target is getitem]
    nodes = nodes + [user for user in getitems if user not in members]
    members.update(getitems)
    left_out = {
        argument
        for stand_in in stand_ins
        for argument in stand_in.all_input_nodes
        if argument in members and set(argument.users) <= stand_ins
    }
    graph = torch.fx.Graph()
    copies: Dict[torch.fx.Node, torch.fx.Node] = {}
    for node in exported_program.graph.nodes:  # graph order keeps inputs before their users
        if node not in members or node in left_out:
            continue
        if node in stand_ins:
            copies[node] = graph.placeholder(node.name)
            copies[node].meta = dict(node.meta)
            continue
        for argument in node.all_input_nodes:
            if argument not in members and argument not in copies:
                copies[argument] = graph.placeholder(argument.name)
                copies[argument].meta = dict(argument.meta)
        copies[node] = graph.node_copy(node, lambda argument: copies[argument])
    results = [
        copies[node]
        for node in nodes
        if node in copies and node not in stand_ins and any(user not in members for user in node.users)
    ]
    graph.output(tuple(results))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    return module, {copy.name: node for node, copy in copies.items() if node in members and node not in stand_ins}
