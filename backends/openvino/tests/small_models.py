"""Small modules that several tests lower; a test's own model stays inline in the test.

The larger shared models (SmallCnn, TransformerBlock, Mlp, the Llama) live in
examples/models.py, where the demo and the benchmarks use them too.
"""

from __future__ import annotations

import torch


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


class TwiceXPlusOne(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


class LinearRelu(torch.nn.Module):
    def __init__(self, features: int = 64):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


class TwoOutputs(torch.nn.Module):
    def forward(self, x, y):
        return x * y + 1, (x - y).sum(dim=-1)


class DynamicGelu(torch.nn.Module):
    """Exported with a dynamic first dimension by the tests that use it."""

    def forward(self, x):
        return torch.nn.functional.gelu(x) * 2
