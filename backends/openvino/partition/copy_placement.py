"""Copies that OpenVINO would alias, and where each one runs.

OpenVINO's PyTorch frontend turns a copy such as ``x.clone()`` into nothing, so a
partition that returns a copy returns its source itself. For a copy of an input
that means the delegate hands back the caller's own buffer, and the CPU plugin
gives wrong values for it; so such copies run on ExecuTorch's CPU kernels. A copy
of a constant can stay in the partition (OpenVINO returns the constant's values)
when nothing about it can come back different; otherwise it runs on the CPU too.

The rules, each found with a trigger (see the README):
- a copy whose source is a real input (a user input or a buffer the graph mutates)
  and that leaves its partition runs on the CPU, unless the program computes nothing
  else and OpenVINO returns each copy exactly through an Identity
  (input_copies_to_move_out); a copy that only nodes of its own partition read stays,
  since OpenVINO then reads the input where the copy was read and writes nothing back;
- a copy of a constant (parameter, unmutated buffer, lifted tensor constant) that
  leaves its partition stays in it only when every reader of the constant is in
  that partition, no other output of the partition is a copy of the same constant,
  the copy keeps the default dim order, its dtype comes back exactly (never 64-bit:
  the CPU plugin computes those in 32 bits; never uint16, which came back changed),
  and, for a float copy, the inference precision is f32;
- a copy that leaves a partition takes the copies it reads with it, so a chain of
  copies is never split across the partition boundary.
"""

from __future__ import annotations

import logging
from typing import Callable, Collection, Dict, FrozenSet, List, Optional, Set

import torch
from torch.export import ExportedProgram

from ..edge_graph.copies import copy_chain, copy_source, is_copy, keeps_default_dim_order
from ..edge_graph.nodes import tensor_value
from ..workarounds import works_around

logger = logging.getLogger(__name__)

# Dtypes a constant copy comes back exactly in, checked one by one (tests/lowering/test_copies.py);
# 64-bit ones come back through 32 bits (workarounds.py, sixty_four_bit_in_32_bits).
EXACT_CONSTANT_COPY_DTYPES: FrozenSet[torch.dtype] = frozenset(
    {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.float16, torch.bfloat16, torch.float32}
)


class CopyPlacement:
    """Decides which copies of an exported program run on the CPU.

    Args:
        program: the edge program being partitioned.
        precision: the inference precision OpenVINO is asked for (None: the device's own).
        may_run_on_cpu: whether the device may run the program on the CPU plugin, which
            returns an input through an Identity (only the CPU plugin was checked).
    """

    def __init__(self, program: ExportedProgram, precision: Optional[str], may_run_on_cpu: bool = True) -> None:
        signature = program.graph_signature
        mutated = set(signature.buffers_to_mutate.values())
        self._inputs: Set[str] = set(signature.user_inputs)
        self._inputs |= {name for name, buffer in signature.inputs_to_buffers.items() if buffer in mutated}
        self._constants: Set[str] = set(signature.inputs_to_parameters)
        self._constants |= {name for name, buffer in signature.inputs_to_buffers.items() if buffer not in mutated}
        self._constants |= set(signature.inputs_to_lifted_tensor_constants)
        self._precision = precision
        self._input_copies = self._input_copies_needing_the_cpu(program.graph_module.graph, may_run_on_cpu)

    def _input_copies_needing_the_cpu(self, graph: torch.fx.Graph, may_run_on_cpu: bool) -> FrozenSet[torch.fx.Node]:
        """The copies of real inputs, which run on the CPU wherever they leave their partition.

        A program that computes nothing but such copies (``x.transpose(0, 0)``, an
        ``alias_copy``) keeps them all: there is no CPU part to save a boundary for, and the
        delegate returns each through an Identity (conversion/rewrites/outputs.py,
        separate_returned_inputs), where the copy comes back exactly: its dtype is one
        OpenVINO returns exactly, its dim order the default, and a float one at f32.
        """
        computed = [node for node in graph.nodes if node.op == "call_function"]
        copies = frozenset(node for node in computed if is_copy(node) and self._is_input(copy_source(node)))
        if copies and may_run_on_cpu and all(self._copies_exactly(node) for node in computed):
            return frozenset()
        return copies

    @works_around("returned_input_not_copied")
    def input_copies_to_move_out(self, partitions: Collection[Collection[torch.fx.Node]]) -> Dict[str, str]:
        """Copies of real inputs that leave one of `partitions`, with the copies they read."""
        moved: Dict[str, str] = {}
        for partition in partitions:
            members = set(partition)
            for node in _copies_leaving(members, self._input_copies.__contains__):
                for copy in copy_chain(node):
                    moved.setdefault(copy.name, "it copies an input, which OpenVINO would return as the input itself")
        return moved

    def _copies_exactly(self, node: torch.fx.Node) -> bool:
        """Whether OpenVINO's Identity returns this copy of an input exactly."""
        value = tensor_value(node)
        return (
            is_copy(node)
            and self._is_input(copy_source(node))
            and keeps_default_dim_order(node)
            and value is not None
            and value.dtype in EXACT_CONSTANT_COPY_DTYPES
            and (not value.dtype.is_floating_point or self._precision == "f32")
        )

    def constant_copies_to_move_out(self, partitions: Collection[Collection[torch.fx.Node]]) -> Dict[str, str]:
        """Copies of constants that leave one of `partitions` and cannot stay in it."""
        moved: Dict[str, str] = {}
        for partition in partitions:
            members = set(partition)
            leaving = _copies_leaving(members, lambda node: self._is_constant(copy_source(node)))
            for node in leaving:
                reason = self._why_constant_copy_leaves(node, members, leaving)
                if reason is not None:
                    for copy in copy_chain(node):
                        moved.setdefault(copy.name, reason)
        return moved

    def _why_constant_copy_leaves(self, node, members, leaving) -> Optional[str]:
        source = copy_source(node)
        value = tensor_value(node)
        if any(user not in members for user in source.users):
            return "its constant is also read outside the partition, which would store it twice"
        if sum(copy_source(other) is source for other in leaving) > 1:
            return "the partition returns another copy of the same constant"
        if not keeps_default_dim_order(node):
            return "it changes the dim order, which the runtime does not return"
        if value is None or value.dtype not in EXACT_CONSTANT_COPY_DTYPES:
            return f"OpenVINO does not return a {getattr(value, 'dtype', None)} constant exactly"
        if value.dtype.is_floating_point and self._precision != "f32":
            return f"at inference precision {self._precision or 'the device default'} a float constant may be rounded"
        return None

    def _is_input(self, node: torch.fx.Node) -> bool:
        return node.op == "placeholder" and node.name in self._inputs

    def _is_constant(self, node: torch.fx.Node) -> bool:
        return node.op == "placeholder" and node.name in self._constants


def _copies_leaving(members: Set[torch.fx.Node], wanted: Callable[[torch.fx.Node], bool]) -> List[torch.fx.Node]:
    """The `wanted` copies among `members` that a node outside them reads."""
    return [
        node for node in members if is_copy(node) and wanted(node) and any(user not in members for user in node.users)
    ]
