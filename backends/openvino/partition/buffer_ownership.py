"""Which written buffers a partition owns, so that they stay inside the delegate as OpenVINO state.

A buffer the program writes (an LLM's KV cache, a running statistic) would
otherwise enter the delegate on every call and leave it again, to be copied back
by ExecuTorch. When every reader of the buffer and the node that computes its new
value lie in one partition, the partition owns the buffer: ExecuTorch then passes
nothing of it across the delegate boundary, and the conversion keeps it as an
OpenVINO variable (conversion/rewrites/state.py).
"""

from __future__ import annotations

import logging
from typing import Dict, FrozenSet, Set

import torch
from torch.export import ExportedProgram

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

logger = logging.getLogger(__name__)


def tag_owned_buffers(program: ExportedProgram, shared: FrozenSet[str] = frozenset()) -> Dict[str, str]:
    """Gives each mutated buffer that one partition reads and writes that partition's tag.

    Call it after the compute nodes are tagged. Unlike ExecuTorch's
    ``tag_mutated_buffer``, a buffer is taken only when the node that computes its
    new value is in the partition too, and nothing outside the partition reads the
    buffer or its new value: a value kept as state cannot also leave the delegate.
    Buffers in `shared` (fully qualified names) are used by other methods of the
    program too (shared_buffers.py) and are never taken. Returns buffer name -> tag.
    """
    signature = program.graph_signature
    new_values = {target: name for name, target in signature.buffers_to_mutate.items()}
    returned = set(signature.user_outputs)
    nodes = {node.name: node for node in program.graph.nodes}
    varying = _varying_inputs(program)
    owned: Dict[str, str] = {}
    for placeholder, target in signature.inputs_to_buffers.items():
        if target not in new_values:
            continue
        node, writer = nodes[placeholder], nodes[new_values[target]]
        tag = writer.meta.get("delegation_tag")
        readers = {user.meta.get("delegation_tag") for user in node.users}
        readers |= {user.meta.get("delegation_tag") for user in writer.users if user.op != "output"}
        reason = None
        if target in shared:
            reason = "another method of the program uses it too"
        elif tag is None:
            reason = "its new value is computed on the CPU"
        elif not readers <= {tag}:
            reason = "it is read outside the partition that writes it"
        elif not node.users:
            # A variable nothing reads would lose its ReadValue, and with it its definition.
            reason = "its old value is never read"
        elif writer.name in returned:
            reason = "the program also returns its new value"
        elif _computed_from_constants_only(writer, varying):
            reason = "its new value is the same at every call"
        if reason is None:
            node.meta["delegation_tag"] = tag
            owned[target] = tag
        else:
            logger.info("OpenVINO partitioner: buffer %r stays outside the delegate: %s", target, reason)
    return owned


def _varying_inputs(program: ExportedProgram) -> Set[str]:
    """The placeholders whose values may change between calls: user inputs and buffers."""
    signature = program.graph_signature
    return set(signature.user_inputs) | set(signature.inputs_to_buffers)


@works_around("constant_into_state_dropped")
def _computed_from_constants_only(node: torch.fx.Node, varying: Set[str]) -> bool:
    """Whether `node` reads no placeholder in `varying`, through any of its inputs.

    The conversion makes such a value a constant, which OpenVINO 2026.4.1's CPU plugin
    never stores into a variable (``buffer.fill_(0)``); written by ExecuTorch instead,
    the buffer enters the delegate as an input.
    """
    pending, seen = [node], set()
    while pending:
        current = pending.pop()
        if current.op == "placeholder" and current.name in varying:
            return False
        if current.name not in seen and op_name(current) not in _READ_SHAPE_ONLY:
            seen.add(current.name)
            pending.extend(current.all_input_nodes)
    return True


# Ops that read only their input's shape and dtype: with the shape known at export
# the conversion folds them to a constant (buffer.fill_(5) becomes full_like(buffer, 5)).
_READ_SHAPE_ONLY = frozenset(
    f"aten.{name}.default" for name in ("full_like", "zeros_like", "ones_like", "empty_like", "new_full", "new_zeros")
)
