"""compare.py's four small models, which lowering_time.py and the runner's comparison
with benchmark_app also time: a title, a builder and example inputs each."""

from __future__ import annotations

from typing import Callable, Dict, Tuple

import torch

from common.example_models import Mlp, SmallCnn, Tiny, TransformerBlock

ModelBuilder = Callable[[], torch.nn.Module]
InputsBuilder = Callable[[], Tuple[torch.Tensor, ...]]

MODELS: Dict[str, Tuple[str, ModelBuilder, InputsBuilder]] = {
    "mlp": ("MLP 4 x Linear(1024), batch 64", lambda: Mlp(width=1024, layers=4), lambda: (torch.randn(64, 1024),)),
    "cnn": ("SmallCnn, 1 x 3 x 224 x 224", lambda: SmallCnn(), lambda: (torch.randn(1, 3, 224, 224),)),
    "transformer": ("TransformerBlock dim 64, seq 128", lambda: TransformerBlock(), lambda: (torch.randn(1, 128, 64),)),
    "tiny": ("Tiny: x + y, 1 x 16", lambda: Tiny(), lambda: (torch.randn(1, 16), torch.randn(1, 16))),
}


def build(model_name: str) -> Tuple[torch.nn.Module, Tuple[torch.Tensor, ...]]:
    """The model named `model_name` in eval mode and its inputs, both from seed 0, so that
    every process that builds it gets the same weights and inputs."""
    _, make_module, make_inputs = MODELS[model_name]
    torch.manual_seed(0)
    module = make_module().eval()
    return module, make_inputs()
