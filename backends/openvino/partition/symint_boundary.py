"""Which symbolic scalars may cross a partition's boundary.

A symbolic int (a size from ``x.size(1)``, a value from ``.item()``, arithmetic
on them) made outside a partition and read inside it is a delegate input:
ExecuTorch passes it as an Int, and the delegate gives it to OpenVINO as a 0-d
int64 tensor. Every other crossing is refused, because a delegate's outputs are
tensors and the runtime binds no other scalar inputs: a node that makes a
symbolic value read outside its partition, and a node that reads a symbolic
float or bool from outside. Those go to the CPU and the partitioner proposes
again; a size or ``.item()`` moved out reads a tensor that the delegate returns.
"""

from __future__ import annotations

from typing import Dict, Iterable, Set

import torch

from .op_support import is_symbolic_scalar


def symbolic_values_crossing(partitions: Iterable[Iterable[torch.fx.Node]]) -> Dict[str, str]:
    """Node name -> why it leaves its partition, for each node whose symbolic scalar would cross a boundary."""
    moved: Dict[str, str] = {}
    for nodes in partitions:
        members: Set[torch.fx.Node] = set(nodes)
        for node in members:
            for argument in node.all_input_nodes:
                value = argument.meta.get("val")
                if argument not in members and is_symbolic_scalar(value) and not isinstance(value, torch.SymInt):
                    moved[node.name] = (
                        f"it reads the symbolic {type(value).__name__} {argument.name!r} from outside its "
                        "partition, and a delegate takes tensors and ints only"
                    )
            if is_symbolic_scalar(node.meta.get("val")) and any(user not in members for user in node.users):
                moved[node.name] = (
                    "it makes a symbolic value that is read outside its partition, and a delegate's outputs are tensors"
                )
    return moved
