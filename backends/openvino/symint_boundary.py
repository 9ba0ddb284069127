"""Symbolic sizes never cross a partition's boundary.

A delegate's inputs and outputs are tensors, so a symbolic scalar (a size from
``x.size(1)``, a value from ``.item()``, arithmetic on them) must be made and
used inside one partition. The partitioner proposes partitions with every node
that reads such a value, then asks here which nodes break that rule: a node
that reads one from outside its partition, and a node that makes one that is
read outside. Those go to the CPU and the partitioner proposes again.
"""

from __future__ import annotations

from typing import Dict, Iterable, Set

import torch

from .op_support import is_symbolic_scalar


def symbolic_values_crossing(partitions: Iterable[Iterable[torch.fx.Node]]) -> Dict[str, str]:
    """Node name -> why it leaves its partition, for each node whose symbolic scalar crosses a boundary."""
    moved: Dict[str, str] = {}
    for nodes in partitions:
        members: Set[torch.fx.Node] = set(nodes)
        for node in members:
            for argument in node.all_input_nodes:
                if argument not in members and is_symbolic_scalar(argument.meta.get("val")):
                    moved[node.name] = (
                        f"it reads the symbolic value {argument.name!r} from outside its "
                        "partition, and a delegate's inputs are tensors"
                    )
            if is_symbolic_scalar(node.meta.get("val")) and any(user not in members for user in node.users):
                moved[node.name] = (
                    "it makes a symbolic value that is read outside its partition, and a delegate's outputs are tensors"
                )
    return moved
