"""0-d tensors as delegate inputs and outputs, in every dtype the runtime binds."""

import pytest
import torch
from harness import check_against_eager


class SumTimesTwo(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum()


class AddScalarTensor(torch.nn.Module):
    def forward(self, x, s):
        return x + s


class ScalarPlusScalar(torch.nn.Module):
    def forward(self, a, b):
        return a * b + a


def _values(dtype, *shape):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(0, 5, shape, dtype=dtype)


FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=str)
def test_zero_dim_output(dtype, tmp_path):
    inputs = [(_values(dtype, 3, 4),) for _ in range(2)]
    check_against_eager(SumTimesTwo(), inputs, tmp_path, expect_delegated=["aten.sum.dim_IntList"])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=str)
def test_zero_dim_input(dtype, tmp_path):
    inputs = [(_values(dtype, 3, 4), _values(dtype)) for _ in range(2)]
    check_against_eager(AddScalarTensor(), inputs, tmp_path, expect_delegated=["aten.add.Tensor"])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=str)
def test_zero_dim_input_and_output(dtype, tmp_path):
    inputs = [(_values(dtype), _values(dtype)) for _ in range(2)]
    check_against_eager(ScalarPlusScalar(), inputs, tmp_path, expect_delegated=["aten.mul.Tensor"])


def test_zero_dim_bool_input_and_output(tmp_path):
    class Where(torch.nn.Module):
        def forward(self, flag, x):
            return torch.where(flag, x, -x), flag == (x > 0)

    inputs = [(torch.tensor(value), torch.tensor(1.5)) for value in (True, False)]
    check_against_eager(Where(), inputs, tmp_path, expect_delegated=["aten.where.self"])
