"""Programs exported in bfloat16 lower, and compute as eager PyTorch does in bfloat16.

Rewrites of the converted model make their constants in the program's own float type,
which numpy cannot hold for bfloat16. Where PyTorch accumulates bfloat16 in float32,
so does the delegate.
"""

import torch
import torch.nn.functional as F
from harness import check_against_eager

BF16 = torch.bfloat16


def bf16(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(BF16)


class Maxima(torch.nn.Module):
    def forward(self, x):
        return x.amax(-1), F.max_pool2d(x[None], 2), x.bool()


def test_maxima_and_casts_to_bool_lower_in_a_bfloat16_program(tmp_path):
    inputs = [(bf16(2, 4, 8, seed=seed),) for seed in (1, 2)]
    check_against_eager(
        Maxima(), inputs, tmp_path, expect_delegated=["aten.amax.default", "aten.max_pool2d_with_indices.default"]
    )


class MaskedAttention(torch.nn.Module):
    def forward(self, q, float_mask, bool_mask):
        return (
            F.scaled_dot_product_attention(q, q, q, attn_mask=float_mask),
            F.scaled_dot_product_attention(q, q, q, attn_mask=bool_mask),
        )


def test_attention_with_a_mask_input_lowers_in_a_bfloat16_program(tmp_path):
    def inputs(seed):
        keep = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(seed)) > 0.3
        float_mask = torch.zeros(1, 1, 8, 8).masked_fill(~keep, float("-inf")).to(BF16)
        return bf16(1, 2, 8, 16, seed=seed), float_mask, keep

    check_against_eager(MaskedAttention(), [inputs(1), inputs(2)], tmp_path)


class RunningSum(torch.nn.Module):
    def forward(self, x):
        return x.cumsum(-1)


def test_a_bfloat16_cumsum_accumulates_in_float32(tmp_path):
    # In bfloat16, a running sum of 4096 ones stops at 256.
    inputs = [
        (torch.ones(1, 4096, dtype=BF16),),
        (torch.rand(1, 4096, generator=torch.Generator().manual_seed(1)).to(BF16),),
    ]
    check_against_eager(RunningSum(), inputs, tmp_path, expect_delegated=["aten.cumsum.default"])


class Variance(torch.nn.Module):
    def forward(self, x):
        return x.var(-1), x.std(-1, correction=0)


def test_the_variance_of_bfloat16_values_far_from_zero_is_computed_in_float32(tmp_path):
    # Squared deviations of values around 100 rounded to bfloat16 made the variance 20% high.
    inputs = [((bf16(4, 256, seed=seed).float() + 100).to(BF16),) for seed in (1, 2)]
    check_against_eager(Variance(), inputs, tmp_path, expect_delegated=["aten.var.correction"])


class IntegersToBfloat16(torch.nn.Module):
    def forward(self, i, j):
        return i.to(BF16), j.to(BF16) * 2


def test_integers_cast_to_bfloat16_round_to_nearest(tmp_path):
    # The CPU plugin dropped the low bits: 158500 became 157696, not 158720.
    def inputs(seed):
        generator = torch.Generator().manual_seed(seed)
        return (
            torch.randint(-(2**24), 2**24, (64,), generator=generator, dtype=torch.int32),
            torch.randint(-(2**31), 2**31 - 1, (64,), generator=generator),
        )

    check_against_eager(IntegersToBfloat16(), [inputs(1), inputs(2)], tmp_path, rtol=0, atol=0)


def test_integers_cast_to_bfloat16_round_to_nearest_with_a_dynamic_size(tmp_path):
    # With dynamic shapes the plugin's float32 to bfloat16 conversion drops the low bits too.
    def inputs(count):
        generator = torch.Generator().manual_seed(count)
        return (
            torch.randint(-(2**24), 2**24, (count,), generator=generator, dtype=torch.int32),
            torch.arange(-count * 300, count * 300, 600),
        )

    length = torch.export.Dim("length", min=2, max=256)
    check_against_eager(
        IntegersToBfloat16(),
        [inputs(64), inputs(7)],
        tmp_path,
        dynamic_shapes=({0: length}, {0: length}),
        rtol=0,
        atol=0,
    )
