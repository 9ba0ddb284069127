"""Op variants that OpenVINO converts without an error but computes wrong.

The partitioner asks ``argument_refusal`` for every node it would take: a node
whose arguments fall on a known wrong variant stays on ExecuTorch's CPU kernels.
Each rule says what OpenVINO does and the release it was seen on, so that it can
be dropped once OpenVINO computes the variant right. Variants that OpenVINO's
frontend refuses with an error need no rule: the partitioner's trial conversion
(conversion_check.py) finds them.
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, Optional

import torch

from .pool_geometry import AvgPool


def _avg_pool_refusal(node: torch.fx.Node, spatial: int) -> Optional[str]:
    pool = AvgPool.of(node, spatial)
    # With a divisor_override the frontend refuses the node (or a pass rewrites it).
    if pool.count_include_pad and pool.divisor_override is None and pool.has_window_past_padding():
        # OpenVINO 2026.4.1: the frontend makes AvgPool-14 with exclude_pad=false and
        # CEIL_TORCH rounding, which divides that last window by the whole kernel;
        # PyTorch divides by the part of it that lies within the padded input.
        return ("ceil_mode with count_include_pad adds a last window past the padding, which "
                "OpenVINO averages over the whole kernel and PyTorch over the padded input")
    return None


# Op name -> why a node of that op stays on the CPU, or None when OpenVINO computes it right.
ARGUMENT_RULES: Dict[str, Callable[[torch.fx.Node], Optional[str]]] = {
    "aten.avg_pool2d.default": functools.partial(_avg_pool_refusal, spatial=2),
    "aten.avg_pool3d.default": functools.partial(_avg_pool_refusal, spatial=3),
}


def argument_refusal(name: str, node: torch.fx.Node) -> Optional[str]:
    """Why OpenVINO would compute `node` (of op `name`) wrong, or None."""
    rule = ARGUMENT_RULES.get(name)
    return rule(node) if rule is not None else None
