"""Integer cumsum, prod and sum through the delegate, in the dtype and with the values
PyTorch gives them: each model is lowered, saved, loaded from the file and run on two
inputs through one loaded method."""

import pytest
import torch
from harness import assert_runs_like_eager, check_against_eager, lower


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


def long_runs_of_true(length=600):
    """A bool mask whose cumsum passes 255, where an 8-bit count wraps."""
    mask = torch.ones(2, length, dtype=torch.bool)
    mask[1, 400:] = False
    return mask


def small_ints(*shape):
    return torch.randint(-4, 5, shape, dtype=torch.int32)


def test_cumsum_over_bool_counts_past_255(tmp_path):
    inputs = [(long_runs_of_true(),), (torch.rand(2, 600) > 0.1,)]
    check_against_eager(
        Fn(lambda mask: torch.cumsum(mask, dim=1)), inputs, tmp_path, expect_delegated=["aten.cumsum.default"]
    )


# An int32 cumsum or prod is int64 in PyTorch; written into an int64 tensor inside the
# graph, an int32 result from OpenVINO fails the conversion.


def test_cumsum_over_int32_is_int64(tmp_path):
    def model(x, positions):
        return torch.slice_scatter(positions, torch.cumsum(x, dim=1), dim=1, start=0, end=6)

    inputs = [(small_ints(2, 6), torch.zeros(2, 8, dtype=torch.int64)) for _ in range(2)]
    check_against_eager(Fn(model), inputs, tmp_path, expect_delegated=["aten.cumsum.default"])


def test_prod_over_int32_dim_is_int64(tmp_path):
    def model(x, products):
        return torch.slice_scatter(products, torch.prod(x, dim=1), dim=0, start=0, end=2)

    inputs = [(small_ints(2, 6), torch.zeros(4, dtype=torch.int64)) for _ in range(2)]
    check_against_eager(Fn(model), inputs, tmp_path, expect_delegated=["aten.prod.dim_int"])


def test_full_prod_over_int32_is_int64(tmp_path):
    def model(x, products):
        return torch.slice_scatter(products, torch.prod(x).reshape(1), dim=0, start=0, end=1)

    inputs = [(small_ints(2, 6), torch.zeros(4, dtype=torch.int64)) for _ in range(2)]
    check_against_eager(Fn(model), inputs, tmp_path, expect_delegated=["aten.prod.default"])


# Guards: OpenVINO's frontend already computes sum in int64; nothing casts it.


def test_sum_over_bool_mask_past_255_is_int64(tmp_path):
    inputs = [(long_runs_of_true(),), (torch.rand(2, 600) > 0.1,)]
    check_against_eager(Fn(lambda mask: mask.sum(dim=1)), inputs, tmp_path, expect_delegated=["aten.sum.dim_IntList"])


def test_sum_over_int32_is_int64(tmp_path):
    inputs = [(small_ints(3, 7),) for _ in range(2)]
    check_against_eager(Fn(lambda x: x.sum(dim=1)), inputs, tmp_path, expect_delegated=["aten.sum.dim_IntList"])


def test_sum_over_an_empty_int32_dim_is_zeros(tmp_path):
    # The cumsum the exact sum is made of has no last element to take there.
    inputs = [(torch.ones(3, 0, dtype=torch.int32),), (torch.ones(3, 0, dtype=torch.int32) * 7,)]
    check_against_eager(Fn(lambda x: x.sum(dim=1) + 1), inputs, tmp_path)


TOKENS, PREFIX = 816, 765  # 765 image and language tokens, a state token, 50 action tokens


class Pi0Masks(torch.nn.Module):
    """pi0's attention masks (make_att_2d_masks) and position ids over one sequence.

    The attention pattern is a constant: prefix tokens see each other, the state
    token and the first action token each start a new block.
    """

    def __init__(self, cumsum_dtype):
        super().__init__()
        self.cumsum_dtype = cumsum_dtype

    def forward(self, pad_masks):
        pattern = [0] * PREFIX + [1, 1] + [0] * (TOKENS - PREFIX - 2)
        att_masks = torch.tensor(pattern, dtype=torch.bool)[None, :]
        blocks = torch.cumsum(att_masks, dim=1, dtype=self.cumsum_dtype)
        att_2d = blocks[:, None, :] <= blocks[:, :, None]
        pad_2d = pad_masks[:, None, :] & pad_masks[:, :, None]
        positions = torch.cumsum(pad_masks, dim=1) - 1
        return att_2d & pad_2d, positions


def pad_masks(valid_prefix_tokens):
    masks = torch.zeros(1, TOKENS, dtype=torch.bool)
    masks[:, :valid_prefix_tokens] = True
    masks[:, PREFIX:] = True
    return masks


@pytest.mark.parametrize("cumsum_dtype", [None, torch.int32], ids=["int64", "int32"])
def test_pi0_masks_and_positions_over_816_tokens(cumsum_dtype, tmp_path):
    # More valid tokens on the second call: a mask that keeps what the first call allowed is wrong.
    inputs = [(pad_masks(300),), (pad_masks(700),)]
    check_against_eager(
        Pi0Masks(cumsum_dtype), inputs, tmp_path, expect_delegated=["aten.bitwise_and.Tensor", "aten.cumsum.default"]
    )


# OpenVINO's CPU plugin sums integers in float32, exact only below 2**24: the sums are
# computed as a cumsum instead (passes/exact_integer_sum.py).


def test_sum_of_int32_values_past_2_pow_24_is_exact(tmp_path):
    inputs = [(2**24 + torch.randint(0, 1000, (3, 4, 5), dtype=torch.int32),) for _ in range(2)]
    model = Fn(lambda x: (x.sum(-1), x.sum(), x.sum((0, 2), keepdim=True)))
    check_against_eager(model, inputs, tmp_path, expect_delegated=["aten.sum.dim_IntList"])


def test_sum_over_a_uint8_image_is_exact(tmp_path):
    # 3 x 160 x 160 pixels: a sum past 2**24 once the pixels average above 218.
    inputs = [(torch.randint(200, 256, (1, 3, 160, 160), dtype=torch.uint8),) for _ in range(2)]
    check_against_eager(
        Fn(lambda image: image.sum((1, 2, 3))), inputs, tmp_path, expect_delegated=["aten.sum.dim_IntList"]
    )


def test_sum_of_int32_values_past_2_pow_24_is_exact_for_a_dynamic_batch(tmp_path):
    def big(rows):
        return (2**24 + torch.randint(0, 1000, (rows, 5), dtype=torch.int32),)

    batch = torch.export.Dim("batch", min=1, max=8)
    check_against_eager(
        Fn(lambda x: (x.sum(-1), x.sum(1, keepdim=True))),
        [big(3), big(6), big(1)],
        tmp_path,
        dynamic_shapes=(({0: batch},),),  # Fn takes *inputs
        expect_delegated=["aten.sum.dim_IntList"],
    )


def test_sum_over_several_dims_of_a_dynamic_batch_is_exact(tmp_path):
    def big(rows):
        return (2**24 + torch.randint(0, 1000, (rows, 4, 5), dtype=torch.int32),)

    batch = torch.export.Dim("batch", min=1, max=8)
    check_against_eager(
        Fn(lambda x: (x.sum(), x.sum((0, 2)), x.sum((1, 2), keepdim=True))),
        [big(3), big(6), big(1)],
        tmp_path,
        dynamic_shapes=(({0: batch},),),  # Fn takes *inputs
        expect_delegated=["aten.sum.dim_IntList"],
    )


class IntegerReductionsAndProducts(torch.nn.Module):
    def forward(self, x, m):
        return torch.max(x, dim=1).values, torch.relu(x), m @ m


def test_int32_max_over_a_dim_relu_and_products_run_on_the_cpu_exactly(tmp_path):
    # OpenVINO computes these in float32: max of 2**31 - 1 came back -2**31.
    model = IntegerReductionsAndProducts()
    big = torch.tensor([[2**31 - 1, 2**31 - 2, 0, -5], [16777217, 16777216, 3, 1]], dtype=torch.int32)
    square = torch.tensor([[4097, 4097], [4097, 4097]], dtype=torch.int32)
    inputs = [(big, square), (big.flip(1), square + 1)]
    lowered = lower(model, inputs[0], tmp_path)
    assert {"aten::max.dim_max", "aten::relu.out", "aten::mm.out"} <= set(lowered.cpu_ops())
    assert_runs_like_eager(model, lowered, inputs)


class ClampIntoFloats(torch.nn.Module):
    def forward(self, x):
        return torch.clamp(x, 2.5, 100.7) * 2


def test_an_integer_clamp_to_float_bounds_runs_on_the_cpu(tmp_path):
    model = ClampIntoFloats()
    inputs = [(torch.tensor([0, 5, 200, 255], dtype=torch.uint8),), (torch.tensor([3, 1, 101, 7], dtype=torch.uint8),)]
    lowered = lower(model, inputs[0], tmp_path)
    assert "aten::clamp.out" in lowered.cpu_ops()
    assert_runs_like_eager(model, lowered, inputs)


class ClampBetween(torch.nn.Module):
    def __init__(self, low, high):
        super().__init__()
        self.low, self.high = low, high

    def forward(self, x):
        return torch.clamp(x, self.low, self.high)


def _extremes(dtype):
    values = [-(2**31), -16777217, -16777216, -5, 0, 7, 15, 16, 16777215, 16777216, 16777217, 2**31 - 1]
    return torch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("low, high", [(0, 15), (-(2**24), 2**24)], ids=["index_range", "widest_exact"])
def test_an_integer_clamp_between_bounds_of_at_most_2_pow_24_runs_in_openvino_exactly(dtype, low, high, tmp_path):
    # Replicate padding clamps int64 indices this way (arange(-1, 17).clamp(0, 15)).
    inputs = [(_extremes(dtype),), (_extremes(dtype).flip(0) // 3,)]
    check_against_eager(ClampBetween(low, high), inputs, tmp_path, expect_delegated=["aten.clamp.default"])


def test_an_integer_clamp_with_one_bound_runs_on_the_cpu(tmp_path):
    model = ClampBetween(0, None)
    inputs = [(_extremes(torch.int32),), (_extremes(torch.int32).flip(0),)]
    lowered = lower(model, inputs[0], tmp_path)
    assert "aten::clamp.out" in lowered.cpu_ops()
    assert_runs_like_eager(model, lowered, inputs)
