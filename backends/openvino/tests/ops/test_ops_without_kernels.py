"""Issue 40: ops that ran nowhere, and ops ExecuTorch's operator suite left on the CPU, run in OpenVINO.

- ``fmax``, ``fmin``, ``addmv``, ``nn.Bilinear``, ``cumprod``, ``cummax``, ``cummin``,
  ``logcumsumexp``, ``round(decimals=)``, antialiased bicubic and bilinear ``interpolate`` and
  ``scatter_reduce`` lower with the default ``EdgeCompileConfig`` (as users call
  ``to_edge_transform_and_lower``), leave nothing on the CPU and give eager's values on
  inputs with NaN, infinities, -0.0 and ties;
- ``trunc``, int32/int64 floor and truncating division past 2**24 and ceil-mode average
  pools with a window past the padding (the suite's CPU leftovers) run in the delegate;
- an integer division by zero fails the call, as eager raises;
- lowering warns, naming the op, when it leaves an op on the CPU that
  ``executorch.runtime``'s portable kernels lack (``matrix_norm(ord=2)``).

The exactness of each form over many random inputs is in test_exact_decompositions.py.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from executorch.exir import EdgeCompileConfig
from harness import bitwise_equal, check_against_eager, eager, lower, run
from torch import nn

NAN, INF = float("nan"), float("inf")
MISSING_KERNELS_LOGGER = "executorch_openvino.partition.missing_kernels"


def special_values(shape, generator: torch.Generator) -> torch.Tensor:
    """Normal values with ties, NaN, infinities and signed zeros scattered in."""
    pool = torch.tensor([0.0, -0.0, 1.0, -1.0, NAN, INF, -INF, 0.5])
    picks = pool[torch.randint(0, len(pool), shape, generator=generator)]
    return torch.where(torch.rand(shape, generator=generator) < 0.5, picks, torch.randn(shape, generator=generator))


def finite(x: torch.Tensor) -> torch.Tensor:
    return torch.nan_to_num(x, nan=0.0, posinf=2.0, neginf=-2.0)


class OpsWithoutKernels(nn.Module):
    """Each op of the issue's second half once; outputs that PyTorch computes exactly come first."""

    EXACT_OUTPUTS = 8

    def __init__(self) -> None:
        super().__init__()
        self.bilinear = nn.Bilinear(3, 4, 5)

    def forward(self, x, y, grid, image, index, source, matrix, vector, added):
        return (
            torch.fmax(x, y),
            torch.fmin(x, y),
            *torch.cummax(grid, 1),
            *torch.cummin(grid, 0),
            torch.scatter_reduce(x, 1, index, source, "amax", include_self=False),
            torch.scatter_reduce(x.round(), 1, index, source.round(), "sum"),
            # rounded in float32 from here on
            torch.addmv(added, matrix, vector, beta=0),  # NaN in `added` is ignored
            self.bilinear(finite(x[:, :3]), finite(y[:, :4])),
            torch.cumprod(finite(grid), 1),
            torch.logcumsumexp(grid, 1),
            F.interpolate(image, size=(3, 4), mode="bicubic", antialias=True),
            F.interpolate(image, scale_factor=0.5, mode="bilinear", align_corners=True, antialias=True),
            torch.scatter_reduce(finite(x), 1, index, source, "mean"),
            torch.round(x * 7, decimals=2),  # the last step divides by 100
        )


def ops_without_kernels_inputs(seed: int):
    generator = torch.Generator().manual_seed(seed)
    grid = special_values((4, 6), generator)
    grid[:, 2] = grid[:, 1]  # ties
    return (
        special_values((3, 5), generator),
        special_values((3, 5), generator),
        grid,
        torch.randn(1, 2, 8, 9, generator=generator),
        torch.randint(0, 5, (3, 4), generator=generator),
        torch.randn(3, 4, generator=generator),
        torch.randn(5, 3, generator=generator),
        torch.randn(3, generator=generator),
        torch.full((5,), NAN),
    )


@pytest.fixture(scope="module")
def ops_without_kernels_program(tmp_path_factory):
    module = OpsWithoutKernels().eval()
    logger = logging.getLogger(MISSING_KERNELS_LOGGER)
    warnings = []
    handler = logging.Handler()
    handler.emit = warnings.append
    logger.addHandler(handler)
    try:
        # No compile_config: the default EdgeCompileConfig, as users lower.
        lowered = lower(module, ops_without_kernels_inputs(1), tmp_path_factory.mktemp("no_kernels"))
    finally:
        logger.removeHandler(handler)
    return module, lowered, warnings


def test_ops_without_kernels_lower_with_the_default_config_and_leave_nothing_on_the_cpu(
    ops_without_kernels_program,
):
    _, lowered, _ = ops_without_kernels_program
    assert lowered.cpu_ops() == [], f"left on ExecuTorch's CPU kernels: {lowered.cpu_ops()}"


def test_ops_without_kernels_give_eager_values_with_nan_infinities_and_ties(ops_without_kernels_program):
    module, lowered, _ = ops_without_kernels_program
    method = lowered.load_method()
    for seed in (1, 2):
        inputs = ops_without_kernels_inputs(seed)
        got, want = run(method, inputs), eager(module, inputs)
        for position, (actual, expected) in enumerate(zip(got, want)):
            if position < OpsWithoutKernels.EXACT_OUTPUTS:
                assert bitwise_equal(actual, expected), f"output {position} (seed {seed}): {actual} != {expected}"
            else:
                torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_lowering_does_not_warn_when_every_op_left_on_the_cpu_has_a_kernel(ops_without_kernels_program):
    _, _, warnings = ops_without_kernels_program
    assert [record.getMessage() for record in warnings] == []


class SuiteLeftovers(nn.Module):
    """Variants ExecuTorch's operator suite saw leave the delegate."""

    def __init__(self) -> None:
        super().__init__()
        self.pool2d = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.pool3d = nn.AvgPool3d(2, stride=2, ceil_mode=True, divisor_override=3)

    def forward(self, x, volume, dividend, divisor, wide_dividend, wide_divisor):
        return (
            torch.trunc(x),
            torch.div(dividend, divisor, rounding_mode="floor"),
            torch.div(dividend, divisor, rounding_mode="trunc"),
            wide_dividend // wide_divisor,
            self.pool2d(x.unsqueeze(0)),
            self.pool3d(volume),
        )


def suite_leftover_inputs(seed: int):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 7, 8, generator=generator) * 4
    x[0, 0, :4] = torch.tensor([-0.5, -0.0, 2.5e9, -INF])
    dividend = torch.randint(-(2**31) + 1, 2**31 - 1, (32,), generator=generator, dtype=torch.int32)
    divisor = torch.randint(1, 100, (32,), generator=generator, dtype=torch.int32) * (1 - 2 * (torch.arange(32) % 2))
    divisor[:2] = torch.tensor([2**30 + 7, -(2**31) + 1], dtype=torch.int32)
    return (
        x,
        torch.randn(1, 2, 5, 6, 7, generator=generator),
        dividend,
        divisor,
        dividend.to(torch.int64),
        divisor.to(torch.int64),
    )


@pytest.fixture(scope="module")
def suite_leftovers_program(tmp_path_factory):
    module = SuiteLeftovers().eval()
    return module, lower(module, suite_leftover_inputs(1), tmp_path_factory.mktemp("suite_leftovers"))


def test_trunc_integer_division_and_ceil_mode_pools_leave_nothing_on_the_cpu(suite_leftovers_program):
    _, lowered = suite_leftovers_program
    assert lowered.cpu_ops() == [], f"left on ExecuTorch's CPU kernels: {lowered.cpu_ops()}"


def test_trunc_integer_division_and_ceil_mode_pools_give_eager_values(suite_leftovers_program):
    module, lowered = suite_leftovers_program
    method = lowered.load_method()
    for seed in (1, 2):
        inputs = suite_leftover_inputs(seed)
        got, want = run(method, inputs), eager(module, inputs)
        for position in range(4):  # trunc and the divisions: exact
            assert bitwise_equal(got[position], want[position]), f"output {position} (seed {seed})"
        for position in (4, 5):
            torch.testing.assert_close(got[position], want[position], rtol=1e-5, atol=1e-5)


class FloorDivide(nn.Module):
    def forward(self, a, b):
        return torch.div(a, b, rounding_mode="floor")


def test_integer_division_by_zero_fails_the_call_and_the_method_still_runs(tmp_path):
    module = FloorDivide()
    good = (torch.tensor([7, -7], dtype=torch.int32), torch.tensor([2, 2], dtype=torch.int32))
    method = lower(module, good, tmp_path).load_method()
    with pytest.raises(RuntimeError, match="execute"):
        run(method, (good[0], torch.tensor([2, 0], dtype=torch.int32)))
    assert torch.equal(run(method, good)[0], torch.tensor([3, -4], dtype=torch.int32))


def test_lowering_warns_naming_an_op_no_kernel_runs(tmp_path, caplog):
    """matrix_norm of order 2 needs singular values: no exact OpenVINO form, and no portable kernel."""

    class SpectralNorm(nn.Module):
        def forward(self, x):
            return torch.linalg.matrix_norm(x, ord=2)

    # _linalg_svd is not core ATen: to_edge needs it listed to lower at all.
    config = EdgeCompileConfig(_core_aten_ops_exception_list=[torch.ops.aten._linalg_svd.default])
    with caplog.at_level(logging.WARNING, logger=MISSING_KERNELS_LOGGER):
        lowered = lower(SpectralNorm(), (torch.randn(3, 3),), tmp_path, edge_compile_config=config)
    warnings = [record.getMessage() for record in caplog.records if record.name == MISSING_KERNELS_LOGGER]
    assert len(warnings) == 1, warnings
    assert "aten._linalg_svd.default" in warnings[0] and "aten::_linalg_svd.U" in warnings[0]
    assert "Missing operator" in warnings[0]
    assert "aten::_linalg_svd.U" in lowered.cpu_ops()


def test_rounding_to_tens_stays_on_the_cpu_and_lowering_warns(tmp_path, caplog):
    """round(x, decimals=-1) rounds a quotient, which OpenVINO divides up to an ulp off (a tie
    would move by ten): it is not written in core ATen ops, and no portable kernel runs it."""

    class RoundToTens(nn.Module):
        def forward(self, x):
            return torch.round(x, decimals=-1)

    config = EdgeCompileConfig(_core_aten_ops_exception_list=[torch.ops.aten.round.decimals])
    with caplog.at_level(logging.WARNING, logger=MISSING_KERNELS_LOGGER):
        lowered = lower(RoundToTens(), (torch.randn(4, 5),), tmp_path, edge_compile_config=config)
    warnings = [record.getMessage() for record in caplog.records if record.name == MISSING_KERNELS_LOGGER]
    assert len(warnings) == 1 and "aten.round.decimals" in warnings[0], warnings
    assert lowered.cpu_ops() == ["aten::round.decimals_out"]


class TransposeIdentity(nn.Module):
    """ExecuTorch's operator suite's test_transpose_identity: a lone alias_copy of the input."""

    def forward(self, x):
        return x.transpose(1, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
def test_a_program_that_only_copies_its_input_runs_in_openvino(dtype, tmp_path):
    inputs = [((torch.randn(2, 3, 4) * 100).to(dtype),) for _ in range(2)]
    lowered = check_against_eager(TransposeIdentity(), inputs, tmp_path)
    assert lowered.cpu_ops() == []
