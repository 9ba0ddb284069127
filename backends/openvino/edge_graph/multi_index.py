"""Which dimensions an ``index.Tensor`` node indexes with integer tensors, when it indexes with several.

OpenVINO's frontend reads a negative index of such an index wrong (workarounds.py,
``negative_index_in_multi_index``): passes/wrap_negative_indices.py wraps those over a
static size, partition/argument_rules.py keeps those over a dynamic one on the CPU.
"""

from __future__ import annotations

from typing import List, Optional

import torch


def integer_index_dims(node: torch.fx.Node) -> List[int]:
    """The dimensions that an index.Tensor node indexes with integer tensors, if two or more."""
    indices: List[Optional[torch.fx.Node]] = list(node.args[1])
    dims = [
        dim
        for dim, index in enumerate(indices)
        if isinstance(index, torch.fx.Node)
        and not index.meta["val"].dtype.is_floating_point
        and index.meta["val"].dtype != torch.bool
    ]
    return dims if len([index for index in indices if index is not None]) >= 2 else []
