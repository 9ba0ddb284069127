"""Models that compute with their dynamic sizes lower to one delegate: the sizes
(``x.size(1)``, ``.item()``, arithmetic on them) are made and used inside it."""

import pytest
import torch
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner
from harness import assert_close, check_against_eager, eager, lower, run

LENGTH = torch.export.Dim("length", min=2, max=64)
# The slice's length, size - 1, must not be 1 either: torch specializes sizes 0 and 1.
LONGER = torch.export.Dim("longer", min=3, max=64)


class ReshapeBySize(torch.nn.Module):
    def forward(self, x):
        heads = x.view(x.size(0), x.size(1), 2, -1)
        return heads.transpose(1, 2).reshape(x.size(0), -1) * 2


class AddArangeOfLength(torch.nn.Module):
    def forward(self, x):
        return x + torch.arange(x.size(0))[:, None]


class SliceByComputedLength(torch.nn.Module):
    def forward(self, x):
        return x.narrow(1, 1, x.size(1) - 1) * 3


class ExpandToLength(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.row = torch.nn.Parameter(torch.randn(1, 8))

    def forward(self, x):
        return x * self.row.expand(x.size(0), -1)


CASES = {
    "reshape_by_size": (ReshapeBySize(), lambda n: (torch.randn(3, n, 8),), ({1: LENGTH},)),
    "arange_of_length": (AddArangeOfLength(), lambda n: (torch.randn(n, 4),), ({0: LENGTH},)),
    "slice_by_computed_length": (SliceByComputedLength(), lambda n: (torch.randn(2, n),), ({1: LONGER},)),
    "expand_to_length": (ExpandToLength(), lambda n: (torch.randn(n, 8),), ({0: LENGTH},)),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_model_computing_with_its_sizes_lowers_whole_and_matches_eager(case, tmp_path):
    model, make_inputs, dynamic_shapes = CASES[case]
    lowered = check_against_eager(
        model, [make_inputs(5), make_inputs(12), make_inputs(5)], tmp_path, dynamic_shapes=dynamic_shapes
    )
    assert lowered.delegate_ids() == [BACKEND_ID]
    assert lowered.cpu_ops() == []


class FlattenBySizes(torch.nn.Module):
    def forward(self, x):
        return (x.relu().view(x.size(0) * x.size(1), -1) + 1).tanh()


def _lower_flatten_by_sizes(tmp_path, op_types_to_skip, lengths):
    """FlattenBySizes lowered with one op type left on the CPU; the program and eager-checked method."""
    model = FlattenBySizes().eval()
    inputs = [(torch.randn(3, n, 4),) for n in lengths]
    partitioner = OpenvinoPartitioner(op_types_to_skip=op_types_to_skip)
    lowered = lower(model, inputs[0], tmp_path, dynamic_shapes=({1: LENGTH},), partitioner=partitioner)
    method = lowered.load_method()
    for each in inputs:
        assert_close(run(method, each), eager(model, each))
    return lowered


def test_a_size_read_on_the_cpu_is_made_on_the_cpu(tmp_path):
    # The view stays on the CPU and reads x.size(1): that size must not be a delegate output.
    lowered = _lower_flatten_by_sizes(tmp_path, ["aten.view_copy"], (5, 12))
    assert "aten::sym_size.int" in lowered.cpu_ops()


def test_a_size_made_on_the_cpu_enters_the_delegate_as_a_0d_int64(tmp_path):
    # x.size(1) is read on the CPU; the view stays in OpenVINO and takes that size as an input.
    lowered = _lower_flatten_by_sizes(tmp_path, ["aten.sym_size"], (5, 12, 7))
    assert lowered.delegate_ids() == [BACKEND_ID]
    assert lowered.cpu_ops() == ["aten::sym_size.int"]
    scalar_inputs = [port for port in lowered.openvino_models()[0].inputs if port.get_partial_shape().rank == 0]
    assert [port.get_element_type().get_type_name() for port in scalar_inputs] == ["i64"]


class PadToMultipleOf8(torch.nn.Module):
    def __init__(self, mode: str):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        return torch.nn.functional.pad(x, (0, (-x.shape[-1]) % 8), mode=self.mode)


@pytest.mark.parametrize("mode", ["constant", "replicate"])
def test_padding_to_a_multiple_of_a_dynamic_length_matches_eager(mode, tmp_path):
    # (-n) % 8 is a remainder of symbolic ints, computed on the CPU: ExecuTorch's prim op
    # gives C's -7 for n = 7 where Python gives 1, and the pad cropped instead.
    lengths = (7, 3, 64, 63, 1, 7)
    check_against_eager(
        PadToMultipleOf8(mode),
        [(torch.randn(2, 3, n),) for n in lengths],
        tmp_path,
        dynamic_shapes=({2: torch.export.Dim("n", min=1, max=64)},),
    )


class PadUpToMultipleOf8ThroughNegativeQuotient(torch.nn.Module):
    def forward(self, x):
        n = x.shape[-1]
        # ((n - 9) // 8 + 2) * 8 is n rounded up to a multiple of 8; n - 9 < 0 for n < 9.
        return torch.nn.functional.pad(x, (0, ((n - 9) // 8 + 2) * 8 - n))


def test_floor_division_of_a_negative_size_expression_rounds_down(tmp_path):
    # The size arithmetic runs inside the delegate: OpenVINO's CPU plugin truncated
    # (n - 9) // 8 towards zero, and the pad came out 8 too long.
    lowered = check_against_eager(
        PadUpToMultipleOf8ThroughNegativeQuotient(),
        [(torch.randn(2, n),) for n in (7, 1, 9, 64, 8, 7)],
        tmp_path,
        dynamic_shapes=({1: torch.export.Dim("n", min=1, max=64)},),
    )
    assert not [op for op in lowered.cpu_ops() if "floordiv" in op], lowered.cpu_ops()
