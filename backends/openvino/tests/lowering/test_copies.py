"""Copies that OpenVINO would alias: where each runs, and that every one comes back right.

The rules are in partition/copy_placement.py; each test here is one of their triggers.
"""

import copy

import executorch_openvino.conversion.rewrites
import executorch_openvino.conversion.rewrites.outputs as model_outputs
import executorch_openvino.preprocess
import pytest
import torch
from executorch.exir import EdgeCompileConfig, to_edge
from executorch.exir.backend.backend_api import to_backend
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs
from executorch_openvino.serialization.blob import read_blob
from harness import assert_close, assert_runs_like_eager, eager, lower, lower_whole_program, run

CLONE = "dim_order_ops._clone_dim_order.default"


def _runs_like_eager(model, lowered, make_inputs, copies=(0,), calls=2):
    """The outputs at `copies` must come back bit for bit; the rest within float32 tolerance."""
    input_sets = [make_inputs() for _ in range(calls)]
    for inputs, got in zip(input_sets, assert_runs_like_eager(model, lowered, input_sets)):
        want = eager(model, inputs)
        for index in copies:
            assert torch.equal(got[index], want[index]), f"copy {index} is not exact"


def _copy_ran_on_cpu(lowered):
    return any("clone" in op or "copy" in op for op in lowered.cpu_ops())


# Copies of inputs


class CloneOfInput(torch.nn.Module):
    def forward(self, x):
        return x.clone(), x * 2


class FullSliceOfInput(torch.nn.Module):
    def forward(self, x):
        return x[:, 0:3], x * 2  # reaches the edge graph as alias_copy


class ChainOfCopiesOfInput(torch.nn.Module):
    def forward(self, x):
        return x.clone().clone(), x * 2


@pytest.mark.parametrize(
    "model_class", [CloneOfInput, FullSliceOfInput, ChainOfCopiesOfInput], ids=["clone", "full_slice", "chain"]
)
def test_copy_of_input_returned_runs_on_the_cpu(model_class, tmp_path):
    model = model_class()
    lowered = lower(model, (torch.randn(4, 3),), tmp_path)
    assert _copy_ran_on_cpu(lowered), f"the copy ran in OpenVINO; CPU ran {lowered.cpu_ops()}"
    assert "aten.mul.Tensor" in lowered.delegated_ops()
    _runs_like_eager(model, lowered, lambda: (torch.randn(4, 3),))


def test_copy_of_input_with_dim_order_off_runs_on_the_cpu(tmp_path):
    model = CloneOfInput()
    lowered = lower(model, (torch.randn(4, 3),), tmp_path, edge_compile_config=EdgeCompileConfig(_skip_dim_order=True))
    assert "aten::clone.out" in lowered.cpu_ops()
    _runs_like_eager(model, lowered, lambda: (torch.randn(4, 3),))


class WritesIntoACopyOfItsInput(torch.nn.Module):
    def __init__(self, accumulate: bool):
        super().__init__()
        self.accumulate = accumulate

    def forward(self, x, index, values):
        result = x.clone()
        result.index_put_((index,), values, self.accumulate)
        return result


@pytest.mark.parametrize("accumulate", [False, True], ids=["put", "accumulate"])
def test_copy_of_input_read_only_in_the_delegate_runs_there_and_leaves_the_input_alone(accumulate, tmp_path):
    model = WritesIntoACopyOfItsInput(accumulate)
    lowered = lower(model, (torch.randn(5, 2), torch.tensor([0, 2]), torch.randn(2, 2)), tmp_path)
    assert lowered.cpu_ops() == [], f"the CPU ran {lowered.cpu_ops()}"
    method = lowered.load_method()
    for index in ([0, 2], [4, 1]):
        inputs = (torch.randn(5, 2), torch.tensor(index), torch.randn(2, 2))
        kept = [tensor.clone() for tensor in inputs]
        assert_close(run(method, inputs), eager(model, inputs))
        assert all(torch.equal(tensor, before) for tensor, before in zip(inputs, kept)), "an input was written"


# Copies of constants


class CopyOfBuffer(torch.nn.Module):
    def __init__(self, values):
        super().__init__()
        self.register_buffer("buf", values)

    def forward(self, x):
        return self.buf.clone(), x + 1


def _buffer_values(dtype):
    if dtype == torch.bool:
        return torch.rand(64) > 0.5
    if dtype.is_floating_point:
        return torch.randn(64).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), (64,)).to(dtype)


@pytest.mark.parametrize(
    "dtype",
    [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.float16, torch.bfloat16, torch.float32],
    ids=str,
)
def test_copy_of_constant_returned_stays_in_openvino_and_is_exact(dtype, tmp_path):
    model = CopyOfBuffer(_buffer_values(dtype))
    lowered = lower(model, (torch.randn(3),), tmp_path)
    assert CLONE in lowered.delegated_ops()
    assert not _copy_ran_on_cpu(lowered)
    _runs_like_eager(model, lowered, lambda: (torch.randn(3),))


@pytest.mark.parametrize(
    "values",
    [torch.tensor([2**40, -(2**40), 5]), torch.tensor([1, 40000, 65535], dtype=torch.uint16)],
    ids=["int64_past_int32", "uint16"],
)
def test_copy_of_constant_openvino_would_change_runs_on_the_cpu(values, tmp_path):
    model = CopyOfBuffer(values)
    lowered = lower(model, (torch.randn(3),), tmp_path)
    assert CLONE not in lowered.delegated_ops()
    assert _copy_ran_on_cpu(lowered)
    _runs_like_eager(model, lowered, lambda: (torch.randn(3),))


def test_channels_last_copy_of_constant_runs_on_the_cpu(tmp_path):
    class ChannelsLast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.randn(1, 3, 4, 5))

        def forward(self, x):
            return self.buf.clone(memory_format=torch.channels_last), x + self.buf

    model = ChannelsLast()
    lowered = lower(model, (torch.randn(1, 3, 4, 5),), tmp_path)
    assert _copy_ran_on_cpu(lowered)
    method = lowered.load_method()
    for _ in range(2):
        inputs = (torch.randn(1, 3, 4, 5),)
        got = run(method, inputs)
        assert torch.equal(got[0].contiguous(), model.buf) and torch.allclose(got[1], inputs[0] + model.buf)


def test_chain_ending_in_channels_last_copy_of_constant_lowers_and_runs(tmp_path):
    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.randn(1, 3, 4, 5))

        def forward(self, x):
            y = self.buf.clone().clone(memory_format=torch.channels_last)
            return y, torch.sin(y), x + 1

    model = Chain()
    lowered = lower(model, (torch.randn(1, 3, 4, 5),), tmp_path)
    assert _copy_ran_on_cpu(lowered)
    method = lowered.load_method()
    inputs = (torch.randn(1, 3, 4, 5),)
    got, want = run(method, inputs), eager(model, inputs)
    assert torch.equal(got[0].contiguous(), want[0].contiguous())
    torch.testing.assert_close(got[1].contiguous(), want[1].contiguous())
    torch.testing.assert_close(got[2], want[2])


def test_two_copies_of_one_constant_run_on_the_cpu(tmp_path):
    class TwoCopies(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.randn(8))

        def forward(self, x):
            return self.buf.clone(), self.buf.clone(), x + 1

    model = TwoCopies()
    lowered = lower(model, (torch.randn(8),), tmp_path)
    assert CLONE not in lowered.delegated_ops()
    _runs_like_eager(model, lowered, lambda: (torch.randn(8),), copies=(0, 1))


def test_copy_of_constant_also_read_on_the_cpu_runs_on_the_cpu(tmp_path):
    class AlsoReadOutside(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.randn(8))

        def forward(self, x):
            return self.buf.clone(), torch.sin(self.buf) + x

    model = AlsoReadOutside()
    partitioner = OpenvinoPartitioner(openvino_compile_specs(), op_types_to_skip={"aten.sin"})
    lowered = lower(model, (torch.randn(8),), tmp_path, partitioner=partitioner)
    assert "aten::sin.out" in lowered.cpu_ops(), "precondition: sin must run on the CPU"
    assert CLONE not in lowered.delegated_ops()
    _runs_like_eager(model, lowered, lambda: (torch.randn(8),))


def test_copy_of_constant_at_f16_precision_keeps_only_the_integer_copy(tmp_path):
    class FloatAndInt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weights", torch.full((4,), 3.14159265))
            self.register_buffer("ids", torch.arange(4, dtype=torch.int32))

        def forward(self, x):
            return self.weights.clone(), self.ids.clone(), x + 1

    model = FloatAndInt()
    lowered = lower(model, (torch.randn(4),), tmp_path, compile_specs=openvino_compile_specs(inference_precision="f16"))
    assert lowered.delegated_ops().count(CLONE) == 1, "the int32 copy stays, the float copy leaves"
    assert _copy_ran_on_cpu(lowered)
    method = lowered.load_method()
    got = run(method, (torch.randn(4),))
    assert torch.equal(got[0], model.weights) and torch.equal(got[1], model.ids)


class CopiesItsOldState(torch.nn.Module):
    """Adds its input to a buffer after copying the buffer's old value."""

    def __init__(self, returns_the_copy: bool):
        super().__init__()
        self.returns_the_copy = returns_the_copy
        self.register_buffer("state", torch.zeros(4))

    def forward(self, x):
        before = self.state.clone()
        self.state.add_(x)
        if self.returns_the_copy:
            return before, torch.sin(before)
        return torch.sin(before) * 2 + self.state


def _lowered_and_right_over_calls(model, tmp_path, calls: int):
    reference = copy.deepcopy(model)
    lowered = lower(model, (torch.randn(4),), tmp_path)
    method = lowered.load_method()
    for _ in range(calls):
        inputs = (torch.randn(4),)
        assert_close(run(method, inputs), eager(reference, inputs))
    return lowered


def test_copy_of_mutated_buffer_is_right_over_two_calls(tmp_path):
    _lowered_and_right_over_calls(CopiesItsOldState(returns_the_copy=True), tmp_path, calls=2)


def test_copy_of_mutated_buffer_read_only_in_the_delegate_runs_there_and_is_right_over_calls(tmp_path):
    lowered = _lowered_and_right_over_calls(CopiesItsOldState(returns_the_copy=False), tmp_path, calls=3)
    assert CLONE in lowered.delegated_ops() and lowered.cpu_ops() == [], f"the CPU ran {lowered.cpu_ops()}"


def test_program_stores_a_copied_constant_once(tmp_path):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.randn(256 * 1024))  # 1 MiB

        def forward(self, x):
            return self.buf.clone(), x + self.buf

    lowered = lower(M(), (torch.randn(256 * 1024),), tmp_path)
    size = lowered.path.stat().st_size
    assert size < 1.5 * 2**20, f"the program takes {size} bytes for a 1 MiB buffer"


# Whole programs, lowered without a partitioner


class ReturnsCopyOfInput(torch.nn.Module):
    def forward(self, x):
        return x.clone()


def _whole_program(example, dynamic_shapes, tmp_path):
    return lower_whole_program(ReturnsCopyOfInput(), example, tmp_path, dynamic_shapes=dynamic_shapes).load_method()


def _make(dtype, rows):
    if dtype == torch.bool:
        return torch.rand(rows, 3) > 0.5
    if dtype == torch.int64:
        return torch.randint(-(2**31), 2**31 - 1, (rows, 3))
    return torch.randn(rows, 3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_whole_program_returning_copy_of_input_is_right(dtype, dynamic, tmp_path):
    dims = ({0: torch.export.Dim("rows", min=2, max=8)},) if dynamic else None
    method = _whole_program((_make(dtype, 4),), dims, tmp_path)
    for rows in (4, 4) if not dynamic else (4, 8):
        x = _make(dtype, rows)
        kept = x.clone()
        got = run(method, (x,))
        assert torch.equal(got[0], kept)
        assert torch.equal(x, kept), "the inference wrote into its input"


def test_whole_program_returning_input_needs_openvino_2025_4_on_cpu(monkeypatch):
    monkeypatch.setattr(model_outputs, "openvino_version", lambda: (2025, 3))
    edge = to_edge(torch.export.export(ReturnsCopyOfInput(), (torch.randn(2, 3),)))
    with pytest.raises(RuntimeError, match=r"needs OpenVINO 2025\.4 or newer"):
        to_backend(BACKEND_ID, edge.exported_program(), openvino_compile_specs())


def test_partition_returning_a_value_and_its_copy_lowers_and_runs(tmp_path):
    class ValueAndCopy(torch.nn.Module):
        def forward(self, x):
            y = x + 1
            return y, y.clone()

    model = ValueAndCopy()
    lowered = lower(model, (torch.randn(4),), tmp_path)
    assert "aten.add.Tensor" in lowered.delegated_ops()
    _runs_like_eager(model, lowered, lambda: (torch.randn(4),), copies=(1,))


def test_whole_program_returning_input_gets_an_identity_on_cpu(tmp_path, monkeypatch):
    blobs = []
    write_blob = executorch_openvino.preprocess.write_blob
    monkeypatch.setattr(
        executorch_openvino.preprocess, "write_blob", lambda model: blobs.append(write_blob(model)) or blobs[-1]
    )
    _whole_program((torch.randn(4, 3),), None, tmp_path)
    assert b'type="Identity"' in read_blob(blobs[0]).ir_xml


def test_runtime_binds_outputs_first_so_a_returned_input_is_right_without_identity(tmp_path, monkeypatch):
    # Without the Identity, OpenVINO returns the input buffer itself; binding the
    # output after the input made it read the output's stale contents as the input.
    monkeypatch.setattr(executorch_openvino.conversion.rewrites, "separate_returned_inputs", lambda model, cpu: None)
    method = _whole_program((torch.randn(4, 3),), None, tmp_path)
    for _ in range(3):
        x = torch.randn(4, 3)
        kept = x.clone()
        assert torch.equal(run(method, (x,))[0], kept)
        assert torch.equal(x, kept), "the inference wrote into its input"
