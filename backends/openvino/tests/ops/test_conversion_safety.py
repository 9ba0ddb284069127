"""Op variants OpenVINO converts wrong or not at all: each either runs right in
OpenVINO (after a pass) or stays on ExecuTorch's CPU kernels, never computes
silently wrong values, and never fails the export."""

import logging

import torch
import torch.nn.functional as F
from harness import check_against_eager


def images(*shape):
    return [(torch.randn(*shape),) for _ in range(2)]


def test_conv2d_with_reflect_padding_runs_in_openvino_and_matches_eager(tmp_path):
    model = torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")
    lowered = check_against_eager(model, images(1, 3, 8, 8), tmp_path, expect_delegated=["aten.convolution.default"])
    assert lowered.cpu_ops() == []


def test_conv1d_with_reflect_padding_matches_eager(tmp_path):
    model = torch.nn.Conv1d(3, 4, 3, padding=2, padding_mode="reflect")
    check_against_eager(model, images(1, 3, 9), tmp_path, expect_delegated=["aten.convolution.default"])


def test_abs_of_a_constant_range_matches_eager(tmp_path):
    class ShiftedDistance(torch.nn.Module):
        def forward(self, x):
            return x + (torch.arange(-3, 5) - 1).abs()

    check_against_eager(ShiftedDistance(), images(2, 8), tmp_path, expect_delegated=["aten.add.Tensor"])


def test_avg_pool_with_ceil_mode_counting_padding_runs_in_openvino(tmp_path):
    # Its last window reaches past the padding (passes/exact_ceil_mode_avg_pool.py).
    model = torch.nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True)
    lowered = check_against_eager(torch.nn.Sequential(torch.nn.ReLU(), model), images(1, 3, 8), tmp_path)
    assert lowered.cpu_ops() == []


def test_avg_pool_with_ceil_mode_and_only_whole_windows_stays_in_openvino(tmp_path):
    # 9 = 1 + 2 * 4: the ceil-mode windows all end inside the padding.
    model = torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)
    lowered = check_against_eager(model, images(1, 2, 9, 9), tmp_path, expect_delegated=["aten.avg_pool2d.default"])
    assert lowered.cpu_ops() == []


def test_avg_pool3d_with_a_divisor_override_runs_in_openvino(tmp_path):
    model = torch.nn.AvgPool3d(2, divisor_override=3)
    check_against_eager(model, images(1, 2, 4, 4, 4), tmp_path, expect_delegated=["aten.avg_pool3d.default"])


def test_embedding_bag_with_include_last_offset_runs_in_openvino(tmp_path):
    model = torch.nn.EmbeddingBag(10, 4, mode="sum", include_last_offset=True)
    inputs = [
        (torch.randint(0, 10, (7,)), torch.tensor([0, 2, 2, 7])),
        (torch.randint(0, 10, (7,)), torch.tensor([0, 5, 6, 7])),
    ]
    check_against_eager(model, inputs, tmp_path, expect_delegated=["aten._embedding_bag.default"])


class Atan2BetweenRelus(torch.nn.Module):
    """OpenVINO's frontend does not convert atan2 (2026.4.1), and no pass rewrites it."""

    def forward(self, x):
        angles = torch.atan2(x.relu(), x - 0.5)
        return (angles * 2).tanh()


def test_a_node_the_frontend_refuses_runs_on_the_cpu_and_the_rest_in_openvino(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="executorch_openvino"):
        lowered = check_against_eager(
            Atan2BetweenRelus(),
            images(1, 2, 8, 8),
            tmp_path,
            expect_delegated=["aten.relu.default", "aten.tanh.default"],
        )
    assert lowered.cpu_ops() == ["aten::atan2.out"]
    assert "atan2" in caplog.text


def test_a_node_downstream_of_a_refused_one_stays_in_openvino(tmp_path):
    # The frontend may also fail on the reshape, whose input it could not type: only
    # the first failure leaves, and the reshape converts once it reads a CPU output.
    class RefusedThenReshaped(torch.nn.Module):
        def forward(self, x):
            angles = torch.atan2(x, x - 0.5)
            return angles.reshape(1, 2, 8, 8, 1) * 2

    lowered = check_against_eager(RefusedThenReshaped(), images(1, 2, 8, 8), tmp_path)
    assert lowered.cpu_ops() == ["aten::atan2.out"]
    assert "aten.view_copy.default" in lowered.delegated_ops()


def test_variance_with_the_default_correction_divides_by_n_minus_1(tmp_path):
    class Variance(torch.nn.Module):
        def forward(self, x):
            return torch.var(x)

    check_against_eager(Variance(), images(5, 6), tmp_path, expect_delegated=["aten.var.correction"])


def test_mean_and_variance_over_an_empty_dim_list_reduce_every_dim(tmp_path):
    class Standardized(torch.nn.Module):
        def forward(self, x):
            return (x - x.mean(dim=[], keepdim=True)) / x.var(dim=[], keepdim=True), x.std(dim=[])

    lowered = check_against_eager(
        Standardized(), images(3, 4), tmp_path, expect_delegated=["aten.mean.dim", "aten.var.correction"]
    )
    assert lowered.cpu_ops() == []


def test_a_mean_over_dim_none_runs_in_openvino_and_matches_eager(tmp_path):
    class Centered(torch.nn.Module):
        def forward(self, x):
            return x - torch.mean(x, dim=None, keepdim=True), torch.mean(x, dim=None)

    check_against_eager(Centered(), images(2, 3, 4), tmp_path, expect_delegated=["aten.mean.dim"])


def test_a_squeeze_of_no_dimension_keeps_every_dimension(tmp_path):
    class SoftmaxOverAUnitDimension(torch.nn.Module):
        def forward(self, x):
            return x.squeeze(dim=()).softmax(1), x.squeeze(dim=()) * 2

    check_against_eager(
        SoftmaxOverAUnitDimension(), images(2, 1, 3), tmp_path, expect_delegated=["aten._softmax.default"]
    )


class IndexByTwo(torch.nn.Module):
    def forward(self, x, rows, columns):
        return x[rows, columns], x[rows, :, columns]


def test_indexing_with_two_tensors_of_negative_indices_matches_eager(tmp_path):
    inputs = [
        (torch.randn(5, 6, 6), torch.tensor([0, -1, 2]), torch.tensor([-1, -6, 3])),
        (torch.randn(5, 6, 6), torch.tensor([-5, 4, 1]), torch.tensor([5, -2, -3])),
    ]
    check_against_eager(IndexByTwo(), inputs, tmp_path, expect_delegated=["aten.index.Tensor"])


class RangeWithFloatStep(torch.nn.Module):
    def forward(self, x):
        return x + torch.arange(0, 1, 0.1)


def test_a_range_with_an_integer_start_and_a_float_step_keeps_its_fractions(tmp_path):
    inputs = [(torch.zeros(10),), (torch.randn(10),)]
    check_against_eager(RangeWithFloatStep(), inputs, tmp_path, expect_delegated=["aten.arange.start_step"])


class RangeToALength(torch.nn.Module):
    def forward(self, x):
        return x + torch.arange(0, x.shape[0] // 2, 0.5)


def test_a_range_with_a_float_step_to_a_dynamic_end_keeps_its_fractions(tmp_path):
    inputs = [(torch.zeros(10),), (torch.randn(6),)]
    length = torch.export.Dim("half", min=1, max=32) * 2
    check_against_eager(RangeToALength(), inputs, tmp_path, dynamic_shapes=({0: length},))


def with_nans(length):
    values = torch.randn(length)
    values[::3] = float("nan")
    return values


class GreaterThan(torch.nn.Module):
    def forward(self, x, y):
        return x > 0, x >= 0.5, x > y, x >= y


def test_a_greater_than_comparison_with_nan_is_false(tmp_path):
    inputs = [(with_nans(9), with_nans(9).flip(0)) for _ in range(2)]
    check_against_eager(GreaterThan(), inputs, tmp_path, expect_delegated=["aten.gt.Scalar", "aten.ge.Tensor"])


class KeepPositive(torch.nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x, torch.full_like(x, 7.0)), (x > 0.5).sum()


def test_a_nan_does_not_pass_a_greater_than_condition(tmp_path):
    inputs = [(with_nans(12),), (with_nans(12),)]
    check_against_eager(KeepPositive(), inputs, tmp_path, expect_delegated=["aten.where.self", "aten.sum.dim_IntList"])


class FloorDivide(torch.nn.Module):
    def forward(self, x, y):
        return x // y, x // 7


def test_float_floor_division_of_exact_multiples_is_not_one_below(tmp_path):
    inputs = [
        (torch.tensor([-84.0, -168.0, 84.0, -21.0]), torch.tensor([7.0, 14.0, 7.0, 7.0])),
        (torch.tensor([-180.0, 35.0, -7.0, 0.0]), torch.tensor([15.0, -7.0, 7.0, 3.0])),
    ]
    check_against_eager(FloorDivide(), inputs, tmp_path, expect_delegated=["aten.div.Tensor_mode"])


def test_float_floor_division_with_an_infinite_operand_matches_eager(tmp_path):
    inf = float("inf")
    inputs = [
        (torch.tensor([inf, -inf, -7.0, 7.0, 0.0]), torch.tensor([2.0, 3.0, inf, inf, -inf])),
        (torch.tensor([5.0, -7.0, 7.0, -inf, -0.0]), torch.tensor([-inf, -inf, -inf, -4.0, inf])),
    ]
    check_against_eager(FloorDivide(), inputs, tmp_path, expect_delegated=["aten.div.Tensor_mode"])


class IntegerFloorDivide(torch.nn.Module):
    def forward(self, a8, b8, a16, b16):
        return a8 // b8, torch.div(a16, b16, rounding_mode="floor")


def _every_int8_pair():
    """Every int8 dividend with every nonzero divisor but -128 // -1, whose quotient overflows."""
    values = torch.arange(-128, 128)
    dividends, divisors = (grid.flatten() for grid in torch.meshgrid(values, values, indexing="ij"))
    kept = (divisors != 0) & ~((dividends == -128) & (divisors == -1))
    return dividends[kept].to(torch.int8), divisors[kept].to(torch.int8)


def test_integer_floor_division_matches_eager_for_every_int8_pair_and_negative_int16(tmp_path):
    dividends, divisors = _every_int8_pair()
    generator = torch.Generator().manual_seed(0)
    int16_dividends = torch.randint(-32767, 32768, dividends.shape, generator=generator, dtype=torch.int16)
    int16_divisors = torch.randint(1, 300, dividends.shape, generator=generator, dtype=torch.int16)
    int16_divisors *= torch.where(torch.rand(dividends.shape, generator=generator) < 0.5, -1, 1).to(torch.int16)
    inputs = [
        (dividends, divisors, int16_dividends, int16_divisors),
        (dividends.flip(0), divisors.flip(0), int16_dividends.flip(0), int16_divisors),
    ]
    check_against_eager(IntegerFloorDivide(), inputs, tmp_path, expect_delegated=["aten.div.Tensor_mode"])


class FloorDivideByThree(torch.nn.Module):
    def forward(self, x):
        return x // 3


def test_float16_floor_division_by_a_constant_is_exact(tmp_path):
    inputs = [
        (torch.tensor([3.0, 6.0, 9.0, 36.0], dtype=torch.float16),),
        (torch.tensor([-36.0, 45.0, 60.0, -3.0], dtype=torch.float16),),
    ]
    check_against_eager(FloorDivideByThree(), inputs, tmp_path, rtol=0, atol=0)


class TruncDivide(torch.nn.Module):
    def forward(self, x, y):
        return torch.div(x, y, rounding_mode="trunc")


def test_float_truncating_division_past_2_pow_31_keeps_its_quotient(tmp_path):
    inputs = [
        (torch.tensor([1e10, -3e9, 7.5, 1.0]), torch.tensor([1.0, 1.0, -2.0, 0.0])),
        (torch.tensor([2.0**31, 1e20, -9.0, -1.0]), torch.tensor([1.0, 3.0, 2.0, 0.0])),
    ]
    check_against_eager(TruncDivide(), inputs, tmp_path, expect_delegated=["aten.div.Tensor_mode"])


def test_float_truncating_division_of_exact_multiples_is_not_one_toward_zero(tmp_path):
    # OpenVINO's quotient 481.99997 for 22654 / 47 truncated to 481.
    inputs = [
        (torch.tensor([-22654.0, 45449.0, 1457.0, -36859.0, 0.0]), torch.tensor([47.0, 47.0, 47.0, 41.0, 5.0])),
        (torch.tensor([9225.0, -35793.0, 23312.0, 40549.0, -7.0]), torch.tensor([41.0, 41.0, 47.0, 41.0, 2.0])),
    ]
    check_against_eager(TruncDivide(), inputs, tmp_path, rtol=0, atol=0, expect_delegated=["aten.div.Tensor_mode"])


class LogOnePlus(torch.nn.Module):
    def forward(self, x, y):
        return torch.log1p(x), F.softplus(y)


def test_log1p_and_softplus_keep_their_precision_near_zero(tmp_path):
    small = torch.tensor([1e-9, 3e-8, 1e-7, -1e-5, 0.05, -0.09, 0.5, 3.0])
    inputs = [
        (small, torch.tensor([-20.0, -16.0, -14.0, -25.0, 0.0, 1.0, 19.0, 30.0])),
        (small.flip(0) * 0.7, torch.linspace(-30.0, 0.9, 8)),
    ]
    check_against_eager(LogOnePlus(), inputs, tmp_path, rtol=1e-5, atol=0, expect_delegated=["aten.log1p.default"])


class Dot(torch.nn.Module):
    def forward(self, a, b):
        return torch.einsum("i,i->", a, b)


def test_a_product_reshaped_to_0_d_compiles(tmp_path):
    # A matrix product reshaped to [] crashed OpenVINO's CPU plugin while compiling.
    inputs = [(torch.randn(5), torch.randn(5)) for _ in range(2)]
    check_against_eager(Dot(), inputs, tmp_path, expect_delegated=["aten.bmm.default"])


class ToBool(torch.nn.Module):
    def forward(self, ints, floats):
        return ints.bool(), torch.logical_not(ints), floats.bool()


def test_every_nonzero_value_casts_to_true(tmp_path):
    # The CPU plugin made False of an int32 -2**31 and of a NaN.
    low = -(2**31)
    inputs = [
        (torch.tensor([low, low + 1, 0, 5], dtype=torch.int32), torch.tensor([float("nan"), 0.0, -0.0, 1e-30])),
        (torch.tensor([1, 0, low, -2], dtype=torch.int32), torch.tensor([0.0, float("nan"), 2.0, float("inf")])),
    ]
    check_against_eager(ToBool(), inputs, tmp_path, expect_delegated=["aten.logical_not.default"])


class CompareIntegers(torch.nn.Module):
    def forward(self, a, b):
        return a == b, a != b, a < b, a <= b, a > b, a >= b, a == 16777216


def test_integers_past_2_pow_24_compare_exactly(tmp_path):
    # The CPU plugin compared int32 and int64 in float32: 16777217 == 16777216 was True.
    top = 2**31 - 1
    for dtype in (torch.int32, torch.int64):
        (tmp_path / str(dtype)).mkdir()
        a = torch.tensor([16777217, top, -top - 1, top, 5, -7], dtype=dtype)
        b = torch.tensor([16777216, top - 1, top, -top - 1, 5, 7], dtype=dtype)
        check_against_eager(
            CompareIntegers(),
            [(a, b), (b, a)],
            tmp_path / str(dtype),
            expect_delegated=["aten.eq.Tensor", "aten.lt.Tensor"],
        )


class Extremes(torch.nn.Module):
    def forward(self, x):
        pooled = F.max_pool2d(x[None, None], kernel_size=(1, 2), stride=(1, 2))
        return x.amax(dim=1), torch.max(x, dim=1).values, x.min(dim=1).values, x.max(), pooled


def test_the_max_of_values_that_are_all_minus_infinity_is_minus_infinity(tmp_path):
    # The CPU plugin started maxima from -3.4e38 (and minima from +3.4e38), not from -inf.
    inf = float("inf")
    rows = [[-inf, -inf, -inf, -inf], [inf, inf, inf, inf], [-inf, -inf, 2.0, -1.0]]
    inputs = [(torch.tensor(rows),), (-torch.tensor(rows).flip(0),), (torch.full((3, 4), -inf),)]
    check_against_eager(Extremes(), inputs, tmp_path, expect_delegated=["aten.amax.default", "aten.max.default"])


class Exponentials(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x), torch.exp(x * 2) - 1


def test_the_exp_of_nan_is_nan(tmp_path):
    # The CPU plugin's Exp gave inf for NaN.
    nan, inf = float("nan"), float("inf")
    inputs = [(torch.tensor([nan, 0.0, -inf, inf, 1.5]),), (torch.tensor([2.0, nan, nan, -3.0, 0.25]),)]
    check_against_eager(Exponentials(), inputs, tmp_path, expect_delegated=["aten.exp.default"])


class PadIntegers(torch.nn.Module):
    def forward(self, x):
        return F.pad(x, (1, 2), value=2**31 - 1), F.pad(x, (0, 1), value=16777217), F.pad(x * 2, (1, 0), value=-7)


def test_an_integer_pad_value_past_2_pow_24_is_written_exactly(tmp_path):
    # The frontend made the fill a float32 constant: 2**31 - 1 was written as -2**31.
    inputs = [(torch.arange(4, dtype=torch.int32),), (torch.tensor([-5, 0, 2**30, 9], dtype=torch.int32),)]
    check_against_eager(PadIntegers(), inputs, tmp_path, expect_delegated=["aten.constant_pad_nd.default"])


class ResizeToOnePixel(torch.nn.Module):
    def forward(self, x):
        return (
            F.interpolate(x, size=(1, 6), mode="bilinear", align_corners=False),
            F.interpolate(x, size=(3, 1), mode="bicubic", align_corners=False),
            F.interpolate(x, scale_factor=0.3, mode="bilinear"),
        )


def test_a_resize_to_one_pixel_samples_the_centre_as_pytorch_does(tmp_path):
    # The frontend's pytorch_half_pixel mode sampled coordinate 0: 4x4 to 1x16 gave 0, not 6.
    inputs = [(torch.arange(16.0).reshape(1, 1, 4, 4),), (torch.randn(1, 1, 4, 4),)]
    check_against_eager(
        ResizeToOnePixel(), inputs, tmp_path, expect_delegated=["aten.upsample_bilinear2d.vec"], atol=1e-5, rtol=1e-5
    )
