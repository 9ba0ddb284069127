"""Graph passes that preprocess runs on a partition before OpenVINO converts it.

One pass per file; ``PASSES`` lists them in the order they run.
"""

from __future__ import annotations

from typing import Callable, List

import torch

from .cast_reduction_input import cast_reduction_input
from .decompose_integer_floor_divide import decompose_integer_floor_divide
from .fold_constant_cumsum import fold_constant_cumsum

PASSES: List[Callable[[torch.fx.GraphModule], torch.fx.GraphModule]] = [
    decompose_integer_floor_divide,
    # Before the cast: a folded cumsum needs none.
    fold_constant_cumsum,
    cast_reduction_input,
]


def run_passes(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for graph_pass in PASSES:
        graph_module = graph_pass(graph_module)
    return graph_module
