"""A weight that matrix multiplications read both as it is and transposed (a tied
autoencoder, ``linear(x) @ linear.weight``) gives eager's values: OpenVINO's CPU
plugin prepares a square weight once per address and would use one way for both."""

import pytest
import torch
from harness import assert_close, eager, lower, run


class TransposedThenAsItIs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8), requires_grad=False)

    def forward(self, x):
        return (x @ self.w.t()) @ self.w


class LinearThenItsWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8, bias=False)

    def forward(self, x):
        return self.linear(x) @ self.linear.weight


class SameLinearTwice(torch.nn.Module):
    """Reads its weight the same way twice: one constant serves both."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8, bias=False)

    def forward(self, x):
        return self.linear(torch.relu(self.linear(x)))


class VectorTimesInput(torch.nn.Module):
    """A vector weight, and the vector times an input, read by products on either side: no
    weight read both ways (a vector has no transpose)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(8), requires_grad=False)

    def forward(self, x):
        scaled = self.w * x
        return scaled @ x + x @ scaled + self.w @ x + x @ self.w


class ReshapedThenReadBothWays(torch.nn.Module):
    """A weight stored flat, reshaped to a square in the graph, then read both ways."""

    def __init__(self):
        super().__init__()
        self.flat = torch.nn.Parameter(torch.randn(64), requires_grad=False)

    def forward(self, x):
        w = self.flat.reshape(8, 8)
        return (x @ w.t()) @ w


def assert_two_calls_match_eager(model: torch.nn.Module, dtype: torch.dtype, tmp_path) -> None:
    model = model.to(dtype).eval()
    calls = [(torch.randn(3, 8, dtype=dtype),), (torch.randn(3, 8, dtype=dtype),)]
    program = lower(model, calls[0], tmp_path)
    assert program.cpu_ops() == []
    method = program.load_method()
    for inputs in calls:
        assert_close(run(method, inputs), eager(model, inputs))


def test_a_square_weight_read_transposed_and_as_it_is_matches_eager(tmp_path):
    assert_two_calls_match_eager(TransposedThenAsItIs(), torch.float32, tmp_path)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_a_linear_layers_weight_read_again_as_it_is_matches_eager(dtype, tmp_path):
    assert_two_calls_match_eager(LinearThenItsWeight(), dtype, tmp_path)


def test_a_flat_weight_reshaped_and_read_both_ways_is_refused_naming_it(tmp_path):
    with pytest.raises(RuntimeError, match=r"weight .*\(f32, \[64\]\) is read by .* both as it is and transposed"):
        lower(ReshapedThenReadBothWays(), (torch.randn(3, 8),), tmp_path)


def test_a_weight_read_the_same_way_twice_matches_eager(tmp_path):
    assert_two_calls_match_eager(SameLinearTwice(), torch.float32, tmp_path)


def test_a_vector_weight_times_an_input_read_on_both_sides_lowers_and_matches_eager(tmp_path):
    model = VectorTimesInput().eval()
    calls = [(torch.rand(8, 8),), (torch.rand(8, 8),)]
    method = lower(model, calls[0], tmp_path).load_method()
    for inputs in calls:
        assert_close(run(method, inputs), eager(model, inputs))


@pytest.mark.parametrize("mode, group_size", [("int8_asym", None), ("int4_sym", 4)])
def test_a_compressed_weight_read_both_ways_is_refused_naming_it(mode, group_size, tmp_path):
    """A copy in other bytes does not help there (the plugin shares the scales too): refused, not wrong."""
    nncf = pytest.importorskip("nncf", reason="needs the quantization extra")
    example = (torch.randn(3, 8),)
    settings = {} if group_size is None else {"group_size": group_size}
    compressed = nncf.compress_weights(
        torch.export.export(LinearThenItsWeight().eval(), example).module(),
        mode=nncf.CompressWeightsMode(mode),
        **settings,
    )
    with pytest.raises(RuntimeError, match="weight .* both as it is and transposed"):
        lower(compressed, example, tmp_path)
