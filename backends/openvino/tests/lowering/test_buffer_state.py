"""Buffers the program writes (an LLM's KV cache) live inside the delegate as OpenVINO
state: nothing of them crosses the delegate boundary, and they keep their values
from call to call as ExecuTorch's own buffers do."""

import copy

import pytest
import torch
from executorch_openvino import OpenvinoPartitioner
from harness import assert_close, eager, lower, lower_whole_program, run


class WritesRows(torch.nn.Module):
    """A cache written at given rows, read whole: a KV cache in small."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 8, 4))

    def forward(self, rows, positions):
        self.cache[:, positions] = rows
        return self.cache.sum(dim=1) * 2


class RunningTotal(torch.nn.Module):
    """A buffer that starts from a value other than zero."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.arange(4.0))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 1.0


class WritesOneHeadRows(torch.nn.Module):
    """A KV cache of one head: export hands the written rows over without their dims of size 1."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 1, 8, 4))

    def forward(self, row, position):
        self.cache[:, :, position] = row
        return self.cache.sum(dim=2) * 2


class WritesSecondBufferFirst(torch.nn.Module):
    """Writes its buffers in the other order than it registers them (values before keys)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("first", torch.zeros(4))
        self.register_buffer("second", torch.zeros(4))

    def forward(self, x):
        self.second.add_(x)
        self.first.add_(2 * x)
        return self.first - self.second


def assert_each_call_matches_eager(method, reference: torch.nn.Module, calls) -> None:
    """Runs each call's inputs through the loaded method and the eager reference, in order."""
    for inputs in calls:
        assert_close(run(method, inputs), eager(reference, inputs))


def rows_at(call: int):
    return torch.full((1, 2, 4), float(call + 1)), torch.tensor([2 * call, 2 * call + 1])


def test_written_buffer_stays_inside_the_delegate(tmp_path):
    model = WritesRows()
    program = lower(model, rows_at(0), tmp_path)
    assert program.delegate_input_counts() == [2]  # rows and positions, no cache
    assert program.cpu_ops() == []
    method = program.load_method()
    for call in range(3):  # each result depends on every earlier call's write
        assert_close(run(method, rows_at(call)), eager(model, rows_at(call)))


def test_rows_written_without_their_unit_dims_convert_and_stay_inside(tmp_path):
    model = WritesOneHeadRows()
    row_at = lambda call: (torch.full((1, 1, 1, 4), float(call + 1)), torch.tensor([call]))  # noqa: E731
    program = lower(model, row_at(0), tmp_path)
    assert program.delegate_input_counts() == [2]
    method = program.load_method()
    for call in range(3):
        assert_close(run(method, row_at(call)), eager(model, row_at(call)))


def test_buffer_starts_from_its_value_at_export(tmp_path):
    model = RunningTotal()
    inputs = (torch.ones(4),)
    method = lower(copy.deepcopy(model), inputs, tmp_path).load_method()
    for _ in range(2):
        assert_close(run(method, inputs), eager(model, inputs))


def test_each_loaded_method_keeps_its_own_state(tmp_path):
    program = lower(WritesRows(), rows_at(0), tmp_path)
    first, second = program.load_method(), program.load_method()
    first_eager, second_eager = WritesRows(), WritesRows()
    for call in range(3):
        assert_close(run(first, rows_at(call)), eager(first_eager, rows_at(call)))
        if call != 1:  # the second method skips a call: its state must not follow the first's
            assert_close(run(second, rows_at(call)), eager(second_eager, rows_at(call)))


def test_buffer_read_on_the_cpu_stays_with_executorch(tmp_path):
    model = WritesRows()
    partitioner = OpenvinoPartitioner(op_types_to_skip=["aten.sum.dim_IntList"])
    program = lower(model, rows_at(0), tmp_path, partitioner=partitioner)
    assert "aten::sum.IntList_out" in program.cpu_ops()
    method = program.load_method()
    for call in range(3):
        assert_close(run(method, rows_at(call)), eager(model, rows_at(call)))


def test_whole_program_lowered_with_to_backend_keeps_its_buffer(tmp_path):
    model = WritesRows()
    program = lower_whole_program(model, rows_at(0), tmp_path)
    assert program.delegate_input_counts() == [2]
    method = program.load_method()
    for call in range(3):
        assert_close(run(method, rows_at(call)), eager(model, rows_at(call)))


class CountsCalls(torch.nn.Module):
    """A step counter, as streaming models keep one."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.register_buffer("calls", torch.full((1,), 40, dtype=dtype))

    def forward(self, x):
        self.calls.add_(1)
        return x * self.calls, self.calls.clone()


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64, torch.int16], ids=["int64", "float64", "int16"])
def test_a_buffer_of_a_type_openvino_cannot_hold_as_state_is_kept_inside_and_counts_like_eager(dtype, tmp_path):
    model = CountsCalls(dtype)
    inputs = (torch.ones(3, dtype=dtype),)
    program = lower(copy.deepcopy(model), inputs, tmp_path)
    assert program.delegate_input_counts() == [1]
    method = program.load_method()
    for _ in range(3):
        assert_close(run(method, inputs), eager(model, inputs))


def test_buffers_written_in_another_order_than_registered_keep_their_own_values(tmp_path):
    model = WritesSecondBufferFirst()
    reference = copy.deepcopy(model)
    x = torch.arange(4.0)
    program = lower(model, (x,), tmp_path)
    assert program.delegate_input_counts() == [1]
    # From the second call on, each result reads both buffers' earlier writes.
    assert_each_call_matches_eager(program.load_method(), reference, [(x + call,) for call in range(3)])


class OverwritesOneReadsAnother(torch.nn.Module):
    """`last` is written without its old value being read; `total` is read and written."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(6))
        self.register_buffer("last", torch.zeros(6))

    def forward(self, x):
        self.total.add_(x)
        self.last.copy_(x * 2)
        return self.total + self.last


def test_a_buffer_whose_old_value_is_never_read_stays_with_executorch(tmp_path):
    # As state it would be a variable nothing reads, which the saved IR loses.
    model = OverwritesOneReadsAnother()
    reference = copy.deepcopy(model)
    method = lower(model, (torch.randn(6),), tmp_path).load_method()
    calls = [(torch.randn(6, generator=torch.Generator().manual_seed(call)),) for call in range(3)]
    assert_each_call_matches_eager(method, reference, calls)


class ReturnsItsBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(6))

    def forward(self, x):
        self.total.add_(x)
        return self.total


def test_a_written_buffer_the_program_also_returns_stays_with_executorch(tmp_path):
    # ExecuTorch refuses a delegate that owns a buffer whose new value is also an output.
    model = ReturnsItsBuffer()
    reference = copy.deepcopy(model)
    method = lower(model, (torch.randn(6),), tmp_path).load_method()
    calls = [(torch.randn(6, generator=torch.Generator().manual_seed(call)),) for call in range(3)]
    assert_each_call_matches_eager(method, reference, calls)


class WindowOfFrames(torch.nn.Module):
    """The last three frames, shifted along by one each call: a streaming model's history."""

    def __init__(self):
        super().__init__()
        self.register_buffer("frames", torch.zeros(3, 4))

    def forward(self, frame):
        self.frames.copy_(torch.cat([self.frames[1:], frame]))
        return self.frames.mean(dim=0) * frame


def frames(count: int):
    return [(torch.randn(1, 4, generator=torch.Generator().manual_seed(call)),) for call in range(count)]


def test_a_buffer_shifted_along_by_each_input_keeps_every_input(tmp_path):
    model = WindowOfFrames()
    reference = copy.deepcopy(model)
    program = lower(model, frames(1)[0], tmp_path)
    assert program.delegate_input_counts() == [1]  # the frames stay inside as state
    assert_each_call_matches_eager(program.load_method(), reference, frames(4))


class ResetsAfterReading(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pending", torch.zeros(4))

    def forward(self, x):
        total = self.pending + x
        self.pending.fill_(5.0)
        return total


def test_a_buffer_filled_with_a_constant_stays_with_executorch_and_holds_it(tmp_path):
    # OpenVINO's CPU plugin would not store a constant into state (workarounds.py).
    model = ResetsAfterReading()
    reference = copy.deepcopy(model)
    program = lower(model, (torch.ones(4),), tmp_path)
    assert program.delegate_input_counts() == [2]  # x and the buffer
    calls = [(torch.full((4,), float(call)),) for call in range(3)]
    assert_each_call_matches_eager(program.load_method(), reference, calls)


class KeepsScaledInput(torch.nn.Module):
    """A layer scale that starts as ones (as trained models' often do) before the buffer."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(4), requires_grad=False)
        self.register_buffer("last", torch.zeros(4))

    def forward(self, x):
        change = x - self.last
        self.last.copy_(x * self.scale)
        return change


def test_a_buffer_set_to_the_input_times_ones_holds_the_last_calls_input(tmp_path):
    # OpenVINO's CPU plugin drops x * 1, which brings the input to the state unchanged.
    model = KeepsScaledInput()
    reference = copy.deepcopy(model)
    calls = [(torch.full((4,), float(call)),) for call in range(1, 4)]
    program = lower(model, calls[0], tmp_path)
    assert program.delegate_input_counts() == [1]
    assert_each_call_matches_eager(program.load_method(), reference, calls)
