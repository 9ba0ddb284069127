"""Ops of Hugging Face decoders that OpenVINO's frontend lacks (2026.4.1) run in the delegate.

A bug bash of decoder families found ``clamp`` with tensor bounds (PhiMoE's expert
routing) and ``expm1`` (Apertus' xIELU activation) left on ExecuTorch's CPU kernels,
splitting those models' programs into three and four delegates. Our translators
(``conversion/translators/clamp_tensor.py``, ``expm1.py``) take them in, with eager's
values on special inputs through one loaded method.
"""

from __future__ import annotations

import torch
from harness import check_against_eager

NAN, INF = float("nan"), float("inf")


class ClampByTensors(torch.nn.Module):
    def forward(self, x, low, high):
        return torch.clamp(x, min=low, max=high), torch.clamp(x, min=low), torch.clamp(x, max=high)


def test_clamp_by_tensor_bounds_runs_in_openvino_with_eagers_values(tmp_path):
    x = torch.tensor([[-3.0, -0.5, 0.0, 0.7, 4.0, NAN, INF, -INF]])
    low = torch.tensor([[-1.0], [NAN], [2.0]])  # a NaN bound, and a low bound above the high one
    high = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, NAN, 1.0])
    input_sets = [(x, low, high), (torch.randn(1, 8) * 3, torch.randn(3, 1), torch.randn(8))]
    check_against_eager(ClampByTensors(), input_sets, tmp_path, rtol=0, atol=0, expect_delegated=["aten.clamp.Tensor"])


class IntegerClamp(torch.nn.Module):
    def forward(self, x, low):
        return torch.clamp(x, min=low)


def test_integer_clamp_by_a_tensor_runs_in_openvino(tmp_path):
    input_sets = [(torch.arange(-6, 6).reshape(3, 4), torch.tensor([[-2], [0], [9]])) for _ in range(2)]
    input_sets[1] = (input_sets[1][0] * 7, torch.tensor([[5], [-50], [1]]))
    check_against_eager(IntegerClamp(), input_sets, tmp_path, rtol=0, atol=0, expect_delegated=["aten.clamp.Tensor"])


class Expm1(torch.nn.Module):
    def forward(self, x):
        return torch.expm1(x)


def test_expm1_keeps_full_precision_near_zero(tmp_path):
    tiny = torch.tensor([1e-9, -1e-9, 1e-6, -3e-5, 1e-3, -0.2, 0.49, -0.49, 0.5, -0.5, 0.0, -0.0])
    special = torch.tensor([3.0, -3.0, 20.0, -20.0, 88.0, 89.0, -104.0, NAN, INF, -INF, 1.5, -7.0])
    generator = torch.Generator().manual_seed(0)
    input_sets = [(torch.stack([tiny, special]),), (torch.randn(2, 12, generator=generator) * 2,)]
    check_against_eager(Expm1(), input_sets, tmp_path, rtol=2e-6, atol=0, expect_delegated=["aten.expm1.default"])
