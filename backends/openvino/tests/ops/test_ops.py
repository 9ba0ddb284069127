"""Single ops through the delegate: each runs in OpenVINO and matches eager PyTorch
on two inputs through one loaded method."""

import pytest
import torch
from harness import check_against_eager


class Binary(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x, y):
        return self.op(x, y)


class Unary(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return self.op(x)


def floats(*shape):
    return torch.randn(*shape)


def ints(*shape, dtype=torch.int32):
    return torch.randint(-50, 50, shape, dtype=dtype)


def nonzero_ints(*shape, dtype=torch.int32):
    values = torch.randint(1, 20, shape, dtype=dtype)
    return values * (torch.randint(0, 2, shape, dtype=dtype) * 2 - 1)


BINARY_CASES = {
    "add_f32": (torch.add, floats, "aten.add.Tensor"),
    "sub_f32": (torch.sub, floats, "aten.sub.Tensor"),
    "mul_f32": (torch.mul, floats, "aten.mul.Tensor"),
    "div_f32": (torch.div, floats, "aten.div.Tensor"),
    "add_i32": (torch.add, lambda *s: ints(*s), "aten.add.Tensor"),
    "sub_i64": (torch.sub, lambda *s: ints(*s, dtype=torch.int64), "aten.sub.Tensor"),
    "mul_i32": (torch.mul, lambda *s: ints(*s), "aten.mul.Tensor"),
    # Integer division of int32 and int64 runs on the CPU (test_integers_past_2_pow_24_...).
    "floor_div_i16": (
        lambda x, y: torch.div(x, y, rounding_mode="floor"),
        lambda *s: nonzero_ints(*s, dtype=torch.int16),
        "aten.div.Tensor_mode",
    ),
    "floor_div_i8": (
        lambda x, y: torch.div(x, y, rounding_mode="floor"),
        lambda *s: nonzero_ints(*s, dtype=torch.int8),
        "aten.div.Tensor_mode",
    ),
    "trunc_div_i16": (
        lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        lambda *s: nonzero_ints(*s, dtype=torch.int16),
        "aten.div.Tensor_mode",
    ),
    "remainder_i16": (torch.remainder, lambda *s: nonzero_ints(*s, dtype=torch.int16), "aten.remainder.Tensor"),
    "eq_i64_to_bool": (torch.eq, lambda *s: torch.randint(0, 3, s), "aten.eq.Tensor"),
}


@pytest.mark.parametrize("case", BINARY_CASES, ids=str)
def test_binary_op_matches_eager(case, tmp_path):
    op, make, name = BINARY_CASES[case]
    inputs = [(make(3, 5), make(3, 5)) for _ in range(2)]
    check_against_eager(Binary(op), inputs, tmp_path, expect_delegated=[name])


UNARY_CASES = {
    "relu": (torch.relu, "aten.relu.default"),
    "gelu": (torch.nn.functional.gelu, "aten.gelu.default"),
    "sigmoid": (torch.sigmoid, "aten.sigmoid.default"),
    "tanh": (torch.tanh, "aten.tanh.default"),
    # Edge decomposes silu into x * sigmoid(x).
    "silu": (torch.nn.functional.silu, "aten.sigmoid.default"),
    "softmax": (lambda x: torch.softmax(x, dim=-1), "aten._softmax.default"),
    "mean": (lambda x: x.mean(dim=1), "aten.mean.dim"),
    "sum": (lambda x: x.sum(dim=0), "aten.sum.dim_IntList"),
    "view": (lambda x: x.view(2, 3, 6) * 2, "aten.view_copy.default"),
    "reshape": (lambda x: x.reshape(9, 4) + 1, "aten.view_copy.default"),
    "permute": (lambda x: x.view(3, 4, 3).permute(2, 0, 1) + 1, "aten.permute_copy.default"),
    "transpose": (lambda x: x.transpose(0, 1) + 1, "aten.permute_copy.default"),
    "slice": (lambda x: x[1:4, ::2] + 1, "aten.slice_copy.Tensor"),
    "cat": (lambda x: torch.cat([x, x * 2], dim=1), "aten.cat.default"),
}


@pytest.mark.parametrize("case", UNARY_CASES, ids=str)
def test_unary_op_matches_eager(case, tmp_path):
    op, name = UNARY_CASES[case]
    inputs = [(floats(6, 6),) for _ in range(2)]
    check_against_eager(Unary(op), inputs, tmp_path, expect_delegated=[name])


INT_CASES = {
    "sum_i32": (lambda x: x.sum(dim=1), "aten.sum.dim_IntList"),
    "view_i64": (lambda x: x.view(3, 12) + 1, "aten.view_copy.default"),
    "permute_i32": (lambda x: x.permute(1, 0) * 3, "aten.permute_copy.default"),
    "cat_i64": (lambda x: torch.cat([x, x + 1]), "aten.cat.default"),
    "slice_i32": (lambda x: x[:, 1:5] - 2, "aten.slice_copy.Tensor"),
}


@pytest.mark.parametrize("case", INT_CASES, ids=str)
def test_integer_op_matches_eager(case, tmp_path):
    op, name = INT_CASES[case]
    dtype = torch.int64 if "i64" in case else torch.int32
    inputs = [(ints(6, 6, dtype=dtype),) for _ in range(2)]
    check_against_eager(Unary(op), inputs, tmp_path, expect_delegated=[name])


def test_bool_mask_select_matches_eager(tmp_path):
    module = Binary(lambda x, mask: torch.where(mask, x, -x))
    inputs = [(floats(4, 5), torch.rand(4, 5) > 0.5) for _ in range(2)]
    check_against_eager(module, inputs, tmp_path, expect_delegated=["aten.where.self"])


class WithWeights(torch.nn.Module):
    def __init__(self, make):
        super().__init__()
        self.layer = make()

    def forward(self, x):
        return self.layer(x)


def test_linear_matches_eager(tmp_path):
    inputs = [(floats(4, 16),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.Linear(16, 8)), inputs, tmp_path, expect_delegated=["aten.addmm.default"]
    )


def test_addmm_matches_eager(tmp_path):
    module = Binary(lambda x, y: torch.addmm(torch.ones(5), x, y))
    inputs = [(floats(3, 4), floats(4, 5)) for _ in range(2)]
    check_against_eager(module, inputs, tmp_path, expect_delegated=["aten.addmm.default"])


def test_mm_matches_eager(tmp_path):
    inputs = [(floats(3, 4), floats(4, 5)) for _ in range(2)]
    check_against_eager(Binary(torch.mm), inputs, tmp_path, expect_delegated=["aten.mm.default"])


def test_bmm_matches_eager(tmp_path):
    inputs = [(floats(2, 3, 4), floats(2, 4, 5)) for _ in range(2)]
    check_against_eager(Binary(torch.bmm), inputs, tmp_path, expect_delegated=["aten.bmm.default"])


def test_conv2d_matches_eager(tmp_path):
    inputs = [(floats(1, 3, 8, 8),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.Conv2d(3, 4, 3, padding=1)),
        inputs,
        tmp_path,
        expect_delegated=["aten.convolution.default"],
    )


@pytest.mark.parametrize("mode", ["replicate", "circular", "reflect"])
def test_conv2d_padding_mode_runs_wholly_in_openvino(mode, tmp_path):
    # replicate clamps int64 indices into range; circular fills an empty tensor.
    inputs = [(floats(2, 3, 8, 8),) for _ in range(2)]
    lowered = check_against_eager(
        WithWeights(lambda: torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode=mode)),
        inputs,
        tmp_path,
        expect_delegated=["aten.convolution.default"],
    )
    assert lowered.cpu_ops() == [], f"the CPU ran {lowered.cpu_ops()}"


def test_layer_norm_matches_eager(tmp_path):
    inputs = [(floats(2, 5, 8),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.LayerNorm(8)),
        inputs,
        tmp_path,
        expect_delegated=["aten.native_layer_norm.default"],
    )


def test_batch_norm_matches_eager(tmp_path):
    def make():
        norm = torch.nn.BatchNorm2d(3)
        norm.running_mean.uniform_(-1, 1)
        norm.running_var.uniform_(0.5, 2)
        return norm.eval()

    inputs = [(floats(2, 3, 4, 4),) for _ in range(2)]
    check_against_eager(
        WithWeights(make), inputs, tmp_path, expect_delegated=["aten._native_batch_norm_legit_no_training.default"]
    )


def test_avg_pool_matches_eager(tmp_path):
    inputs = [(floats(1, 3, 8, 8),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.AvgPool2d(2)), inputs, tmp_path, expect_delegated=["aten.avg_pool2d.default"]
    )


def test_max_pool_matches_eager(tmp_path):
    inputs = [(floats(1, 3, 8, 8),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.MaxPool2d(2)),
        inputs,
        tmp_path,
        expect_delegated=["aten.max_pool2d_with_indices.default"],
    )


def test_embedding_matches_eager(tmp_path):
    inputs = [(torch.randint(0, 10, (2, 6)),) for _ in range(2)]
    check_against_eager(
        WithWeights(lambda: torch.nn.Embedding(10, 4)), inputs, tmp_path, expect_delegated=["aten.embedding.default"]
    )


BIG_INTEGERS = {
    "max": (lambda x, y: x.max().reshape(1), "aten::max.unary_out"),
    "amax": (lambda x, y: x.amax(dim=1), "aten::amax.out"),
}


def big_integer_inputs(dtype: torch.dtype):
    big = [torch.tensor([[100000001, -3, 77777777, 5]], dtype=dtype), torch.randint(2**24, 2**30, (1, 4), dtype=dtype)]
    return [(x, torch.tensor([[3, 7, -10, 2]], dtype=dtype)) for x in big]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("case", BIG_INTEGERS, ids=str)
def test_integer_extremes_past_2_pow_24_run_on_the_cpu(case, dtype, tmp_path):
    # OpenVINO's CPU plugin computes these in float32: 100000001 would come back 100000000.
    op, cpu_op = BIG_INTEGERS[case]
    lowered = check_against_eager(Binary(lambda x, y: op(x, y) + 1), big_integer_inputs(dtype), tmp_path)
    assert cpu_op in lowered.cpu_ops()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_integer_division_past_2_pow_24_runs_in_openvino_exactly(dtype, tmp_path):
    # Divided in float32 by the plugin, rebuilt exactly (conversion/rewrites/exact_integer_division.py).
    def divisions(x, y):
        return torch.div(x, y, rounding_mode="floor") + 1, torch.div(x, y, rounding_mode="trunc") + 1

    lowered = check_against_eager(Binary(divisions), big_integer_inputs(dtype), tmp_path)
    assert lowered.cpu_ops() == []
