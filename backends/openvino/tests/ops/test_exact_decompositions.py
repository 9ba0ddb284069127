"""The core-ATen forms of ops no ExecuTorch kernel runs (pre_decomposition/ops_without_kernels/) against eager PyTorch.

Each decomposition is plain torch code, so it runs eagerly here on many random inputs
(ties, NaN, infinities, -0.0, empty and 0-d tensors, several dtypes) and is compared
with the op itself: bit for bit where PyTorch's result is exact (indices, extremes,
integers), within float32 rounding where the order of a sum or product differs. No
program is lowered: test_ops_without_kernels.py lowers them.
"""

from __future__ import annotations

import random
from typing import List

import pytest
import torch
import torch.nn.functional as F
from executorch_openvino.pre_decomposition.ops_without_kernels import (
    antialiased_resize,
    nan_ignoring_extremes,
    products,
    rounding,
    scans,
)
from harness import bitwise_equal

SPECIAL = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.0, float("nan"), float("inf"), -float("inf"), 0.5])
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.int8, torch.bool]


def close(got: torch.Tensor, want: torch.Tensor, tolerance: float = 1e-5) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if not want.is_floating_point():
        return torch.equal(got, want)
    return torch.allclose(got.double(), want.double(), rtol=tolerance, atol=tolerance, equal_nan=True)


def random_shape(rng: random.Random) -> List[int]:
    """0 to 3 dims, some empty, some long."""
    shape = [rng.randint(0, 5) for _ in range(rng.randint(0, 3))]
    if shape and rng.random() < 0.5:
        shape[rng.randrange(len(shape))] = rng.randint(1, 40)
    return shape


def random_tensor(rng: random.Random, generator: torch.Generator, dtype: torch.dtype, shape=None) -> torch.Tensor:
    """Floats drawn from SPECIAL or normal, integers with ties."""
    shape = random_shape(rng) if shape is None else shape
    if dtype.is_floating_point:
        if rng.random() < 0.5:
            return SPECIAL[torch.randint(0, len(SPECIAL), shape, generator=generator)].to(dtype)
        return torch.randn(shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) < 0.5
    scale = 10**7 if dtype in (torch.int32, torch.int64) and rng.random() < 0.5 else 1
    return (torch.randint(-4, 4, shape, generator=generator) * scale).to(dtype)


def random_cases(count: int, dtypes: List[torch.dtype]):
    rng, generator = random.Random(0), torch.Generator().manual_seed(0)
    for _ in range(count):
        x = random_tensor(rng, generator, rng.choice(dtypes))
        yield x, rng.randrange(-max(x.dim(), 1), max(x.dim(), 1))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumulative_extremes_take_the_last_tie_and_keep_nan(op):
    for x, dim in random_cases(600, DTYPES):
        want_values, want_indices = getattr(torch, op)(x, dim)
        got_values, got_indices = getattr(scans, op)(x, dim)
        assert bitwise_equal(got_values, want_values), (op, x, dim)
        assert torch.equal(got_indices, want_indices), (op, x, dim)


def test_cumprod_wraps_integers_as_eager_and_rounds_floats_within_tolerance():
    for x, dim in random_cases(600, DTYPES):
        want = torch.cumprod(x, dim)
        got = scans.cumprod(x, dim)
        tolerance = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-5
        assert close(got, want, tolerance), (x, dim)
    ints = torch.tensor([2**20, 2**20, 2**20, 3], dtype=torch.int32)
    assert torch.equal(scans.cumprod(ints, 0), torch.cumprod(ints, 0))  # int64, past 2**63: wrapped


def test_logcumsumexp_keeps_infinities_and_nan_as_eager():
    for x, dim in random_cases(600, [torch.float32, torch.float16]):
        tolerance = 1e-2 if x.dtype == torch.float16 else 1e-5
        assert close(scans.logcumsumexp(x, dim), torch.logcumsumexp(x, dim), tolerance), (x, dim)


@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_fmax_fmin_ignore_one_nan_and_keep_the_eager_zero_sign(op):
    rng, generator = random.Random(1), torch.Generator().manual_seed(1)
    for _ in range(1500):
        first = random_tensor(rng, generator, rng.choice(DTYPES))
        broadcast = [1 if rng.random() < 0.3 else size for size in first.shape]
        second = random_tensor(rng, generator, rng.choice(DTYPES), broadcast)
        if rng.random() < 0.5:
            first, second = second, first
        assert bitwise_equal(getattr(nan_ignoring_extremes, op)(first, second), getattr(torch, op)(first, second))
    # ties of 0.0 and -0.0: the first in float32, the second in bfloat16 (PyTorch 2.13 on the CPU)
    for dtype in (torch.float32, torch.bfloat16):
        zero, negative_zero = torch.zeros(3, dtype=dtype), torch.full((3,), -0.0, dtype=dtype)
        want = getattr(torch, op)(negative_zero, zero)
        assert bitwise_equal(getattr(nan_ignoring_extremes, op)(negative_zero, zero), want)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0, 1), (1, 0), (0, 0), (0.5, -2.0), (1.7, 2.9)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64])
def test_addmv_ignores_operands_with_factor_zero_and_truncates_integer_factors(beta, alpha, dtype):
    generator = torch.Generator().manual_seed(2)
    for input_shape in ((5,), (1,), ()):
        matrix = (torch.randn(5, 3, generator=generator) * 4).to(dtype)
        vector = (torch.randn(3, generator=generator) * 4).to(dtype)
        added = torch.full(input_shape, float("nan")) if dtype.is_floating_point else torch.randn(input_shape) * 4
        added = added.to(dtype)
        want = torch.addmv(added, matrix, vector, beta=beta, alpha=alpha)
        assert close(products.addmv(added, matrix, vector, beta=beta, alpha=alpha), want)


def test_bilinear_matches_eager_over_leading_dims():
    generator = torch.Generator().manual_seed(3)
    for leading in ((2,), (2, 3), (1, 2, 2)):
        first, second = torch.randn(*leading, 3, generator=generator), torch.randn(*leading, 4, generator=generator)
        weight, bias = torch.randn(5, 3, 4, generator=generator), torch.randn(5, generator=generator)
        for used_bias in (bias, None):
            assert close(
                products.bilinear(first, second, weight, used_bias), F.bilinear(first, second, weight, used_bias)
            )


def test_antialiased_resize_matches_eager_at_random_sizes_scales_and_corners():
    rng, generator = random.Random(4), torch.Generator().manual_seed(4)
    vec = {
        "bilinear": antialiased_resize.upsample_bilinear2d_aa_vec,
        "bicubic": antialiased_resize.upsample_bicubic2d_aa_vec,
    }
    checked = 0
    for _ in range(800):
        mode, corners = rng.choice(list(vec)), rng.random() < 0.5
        x = torch.randn(1, 2, rng.randint(1, 16), rng.randint(1, 16), generator=generator)
        if rng.random() < 0.5:  # size=, which PyTorch passes without scales
            size = (rng.randint(1, 16), rng.randint(1, 16))
            want = F.interpolate(x, size=size, mode=mode, align_corners=corners, antialias=True)
            got = vec[mode](x, list(size), corners, None)
        else:  # scale_factor=, which PyTorch passes on to the kernel
            factors = [rng.choice([0.3, 0.5, 2 / 3, 1.3, 2.0, 2.5]) for _ in range(2)]
            if any(int(size * factor) == 0 for size, factor in zip(x.shape[-2:], factors)):
                continue  # PyTorch refuses an empty output
            want = F.interpolate(x, scale_factor=factors, mode=mode, align_corners=corners, antialias=True)
            got = vec[mode](x, None, corners, factors)
        assert close(got, want), (mode, corners, tuple(x.shape), tuple(want.shape))
        checked += 1
    assert checked > 600


def test_antialiased_resize_to_one_pixel_wide_repeats_the_first_row_as_eager():
    """PyTorch 2.13's CPU kernel gives every row the first row's values when the output is one
    pixel wide and the height changes; the delegate follows it."""
    x = torch.arange(16.0).reshape(1, 1, 8, 2)
    want = F.interpolate(x, size=(4, 1), mode="bilinear", antialias=True)
    assert torch.equal(want, want[..., :1, :].expand_as(want))  # PyTorch's behaviour, still there
    assert close(antialiased_resize.upsample_bilinear2d_aa(x, [4, 1], False), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_round_decimals_is_eagers_bit_for_bit_at_every_scale(dtype):
    """Many scales (values from 1e-6 to 1e8 around ties), special values, and a factor past the
    dtype's range (39 decimals: infinity in float32, so NaN everywhere, as eager gives)."""
    generator = torch.Generator().manual_seed(0)
    scales = 10.0 ** torch.randint(-6, 9, (5000,), generator=generator)
    x = torch.cat([torch.randn(5000, generator=generator) * scales, SPECIAL, torch.tensor([1.445, 2.5, -0.125])])
    x = x.to(dtype)
    for decimals in (0, 1, 2, 3, 5, 8, 39, 400):
        assert bitwise_equal(rounding.round_decimals(x, decimals), torch.round(x, decimals=decimals)), decimals


@pytest.mark.parametrize("decimals, dtype", [(-1, torch.float32), (2, torch.int32)])
def test_round_decimals_leaves_rounding_to_tens_and_integers_as_they_are(decimals, dtype):
    assert rounding.round_decimals(torch.ones(3, dtype=dtype), decimals) is NotImplemented
