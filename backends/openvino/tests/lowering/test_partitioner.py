"""What the partitioner hands to OpenVINO and what it keeps on the CPU."""

import re

import pytest
import torch
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs
from harness import assert_close, eager, lower, run


class MulThenAdd(torch.nn.Module):
    def forward(self, x):
        return (x * 3) + 1


def _check_runs(model, lowered):
    method = lowered.load_method()
    for _ in range(2):
        inputs = (torch.randn(4, 4),)
        assert_close(run(method, inputs), eager(model, inputs))


def test_op_type_to_skip_keeps_a_supported_op_on_the_cpu(tmp_path):
    model = MulThenAdd()
    partitioner = OpenvinoPartitioner(openvino_compile_specs(), op_types_to_skip={"aten.mul.Tensor"})
    lowered = lower(model, (torch.randn(4, 4),), tmp_path, partitioner=partitioner)
    assert "aten.mul.Tensor" not in lowered.delegated_ops()
    assert "aten.add.Tensor" in lowered.delegated_ops()
    assert "aten::mul.out" in lowered.cpu_ops()
    _check_runs(model, lowered)


def test_op_type_to_skip_accepts_an_overload_packet(tmp_path):
    partitioner = OpenvinoPartitioner(openvino_compile_specs(), op_types_to_skip={"aten.add"})
    lowered = lower(MulThenAdd(), (torch.randn(4, 4),), tmp_path, partitioner=partitioner)
    assert "aten.add.Tensor" not in lowered.delegated_ops()
    assert "aten.mul.Tensor" in lowered.delegated_ops()


def test_op_name_to_skip_keeps_that_node_on_the_cpu(tmp_path):
    model = MulThenAdd()
    partitioner = OpenvinoPartitioner(openvino_compile_specs(), op_names_to_skip={"aten_add_tensor"})
    lowered = lower(model, (torch.randn(4, 4),), tmp_path, partitioner=partitioner)
    assert "aten.add.Tensor" not in lowered.delegated_ops()
    assert "aten.mul.Tensor" in lowered.delegated_ops()
    assert "aten::add.out" in lowered.cpu_ops()
    _check_runs(model, lowered)


class WithUnsupportedOp(torch.nn.Module):
    def forward(self, x):
        mask = torch.logical_and(x > 0, x < 1)  # the PyTorch frontend does not convert logical_and
        return torch.where(mask, x * 2, x)


def test_op_openvino_does_not_convert_runs_on_the_cpu(tmp_path):
    model = WithUnsupportedOp()
    lowered = lower(model, (torch.randn(4, 4),), tmp_path)
    assert "aten.logical_and.default" not in lowered.delegated_ops()
    assert "aten::logical_and.out" in lowered.cpu_ops()
    assert "aten.where.self" in lowered.delegated_ops()
    _check_runs(model, lowered)


def test_device_defaults_to_cpu_in_the_delegation_spec():
    partitioner = OpenvinoPartitioner()
    assert partitioner.options.device == "CPU"
    assert [(spec.key, spec.value) for spec in partitioner.delegation_spec.compile_specs] == [("device", b"CPU")]


def test_lowering_for_a_device_missing_here_warns_and_the_load_fails_clearly(tmp_path, caplog, capfd):
    import openvino as ov

    if any(device.startswith("NPU") for device in ov.Core().available_devices):
        pytest.skip("this machine has an NPU: the missing-device path cannot be shown with it")
    lowered = lower(MulThenAdd(), (torch.randn(4, 4),), tmp_path, compile_specs=openvino_compile_specs(device="NPU"))
    assert "OpenVINO device NPU is not on this machine" in caplog.text
    with pytest.raises(RuntimeError):
        lowered.load_method()
    # OpenVINO's reason, not the "Exception from <file>:<line>:" lines before it,
    # which would fill ExecuTorch's log line.
    assert re.search(r"compiling for device NPU failed: (?!Exception from)\S", capfd.readouterr().err)


class WritesTwoOneHeadCaches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 1, 8, 4))
        self.register_buffer("values", torch.zeros(1, 1, 8, 4))

    def forward(self, row, position):
        self.keys[:, :, position] = row
        self.values[:, :, position] = row * 2
        # The cast is a dim-order op, whose revert retraces the partition and renames its nodes.
        return (self.keys.sum(dim=2) + self.values.sum(dim=2)).to(torch.int32)


def test_nodes_a_frontend_rewrite_throws_on_run_on_the_cpu(tmp_path, monkeypatch):
    # Without the pass that gives their values their full rank, OpenVINO's index_put
    # rewrite throws on these nodes (2026.4.1); the rest must still be delegated.
    import executorch_openvino.passes as passes

    monkeypatch.setattr(passes, "PASSES", [p for p in passes.PASSES if p is not passes.full_rank_index_put_values])
    model = WritesTwoOneHeadCaches()
    row_at = lambda call: (torch.full((1, 1, 1, 4), float(call + 1)), torch.tensor([call]))  # noqa: E731
    lowered = lower(model, row_at(0), tmp_path)
    assert "aten::index_put.out" in lowered.cpu_ops()
    assert "aten.index_put.default" not in lowered.delegated_ops()
    assert "aten.sum.dim_IntList" in lowered.delegated_ops()
    method = lowered.load_method()
    for call in range(3):
        assert_close(run(method, row_at(call)), eager(model, row_at(call)))


class AboveHalf(torch.nn.Module):
    def forward(self, scores):
        return scores[scores > 0.5], scores.sum()


def test_size_checks_of_a_value_made_on_the_cpu_stay_on_the_cpu(tmp_path):
    # Export checks the size the CPU's data-dependent index makes; the conversion drops
    # such checks, so in a partition they would leave it an input it never reads.
    model = AboveHalf()
    partitioner = OpenvinoPartitioner(op_types_to_skip={"aten.index.Tensor"})
    lowered = lower(model, (torch.rand(2, 10),), tmp_path, partitioner=partitioner)
    assert "aten.sum.dim_IntList" in lowered.delegated_ops()
    assert "aten._assert_scalar.default" not in lowered.delegated_ops()
    method = lowered.load_method()
    for _ in range(2):  # a different count above 0.5 each call
        inputs = (torch.rand(2, 10),)
        assert_close(run(method, inputs), eager(model, inputs))


class SinesOfPositives(torch.nn.Module):
    def forward(self, x):
        positives = x[x > 0]  # a size computed from values: 0 when none is positive
        return (torch.sin(positives) * 2 + positives).cumsum(0)


def test_a_size_computed_from_values_may_be_0_when_it_crosses_partitions(tmp_path):
    model = SinesOfPositives()
    partitioner = OpenvinoPartitioner(op_types_to_skip={"aten.sin.default"})
    lowered = lower(model, (torch.randn(10),), tmp_path, partitioner=partitioner)
    assert "aten::sin.out" in lowered.cpu_ops()
    method = lowered.load_method()
    for inputs in ((torch.randn(10),), (-torch.ones(10),), (torch.randn(10),)):
        assert_close(run(method, inputs), eager(model, inputs))


class ReturnsItsWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 4))
        self.register_buffer("scale", torch.full((4,), 3.0))

    def forward(self, x):
        return self.weight, self.scale, (x @ self.weight) * self.scale


def test_a_weight_the_program_also_returns_enters_the_delegate_as_an_input(tmp_path):
    model = ReturnsItsWeight()
    lowered = lower(model, (torch.randn(4, 4),), tmp_path)
    assert "aten.mm.default" in lowered.delegated_ops()
    method = lowered.load_method()
    for _ in range(2):
        inputs = (torch.randn(4, 4),)
        assert_close(run(method, inputs), eager(model, inputs))


def test_a_skip_list_given_as_one_string_is_refused():
    with pytest.raises(TypeError, match="op_types_to_skip is the string 'aten.sin'; accepted: a list of names"):
        OpenvinoPartitioner(op_types_to_skip="aten.sin")
    with pytest.raises(TypeError, match="op_names_to_skip is the string 'sin'"):
        OpenvinoPartitioner(op_names_to_skip="sin")


def test_a_skipped_aten_op_type_that_names_no_op_is_refused():
    with pytest.raises(ValueError, match="'aten.sine', which is no ATen op"):
        OpenvinoPartitioner(op_types_to_skip=["aten.sine"])
    with pytest.raises(ValueError, match="'aten.add.Tensr'; aten.add's overloads are Tensor, "):
        OpenvinoPartitioner(op_types_to_skip=["aten.add.Tensr"])
    assert OpenvinoPartitioner(op_types_to_skip=["aten.add", "aten.add.Tensor"]).op_types_to_skip == {
        "aten.add",
        "aten.add.Tensor",
    }
