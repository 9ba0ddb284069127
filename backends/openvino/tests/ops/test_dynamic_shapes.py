"""Outputs whose size changes from call to call, and dynamic input sizes."""

import openvino.opset13 as ov_ops
import pytest
import torch
from executorch.exir import to_edge
from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary
from executorch.exir.backend.backend_api import to_backend
from executorch.runtime import Runtime
from executorch_openvino import BACKEND_ID, openvino_compile_specs
from executorch_openvino.serialization.blob import write_blob
from harness import assert_close, eager, lower, model_in_blob, program_with_blob, run
from small_models import TwiceXPlusOne


class FirstRowsDoubled(torch.nn.Module):
    """x[:n].view(n, -1) * 2: the output has n rows, n read from a tensor."""

    def forward(self, x, n):
        rows = n.item()
        torch._check(rows >= 1)
        torch._check(rows <= x.shape[0])
        return x[:rows].view(rows, -1) * 2


def test_data_dependent_output_takes_the_size_of_each_call(tmp_path):
    model = FirstRowsDoubled()
    x = torch.randn(4, 8)
    lowered = lower(model, (x, torch.tensor(3)), tmp_path)
    assert "aten.mul.Tensor" in lowered.delegated_ops()
    method = lowered.load_method()
    for rows in (3, 4, 1, 3):
        inputs = (torch.randn(4, 8), torch.tensor(rows))
        outputs = run(method, inputs)
        assert outputs[0].shape == (rows, 8)
        assert_close(outputs, eager(model, inputs))


class RowsAndColumnSums(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1, x.sum(dim=0)


def test_dynamic_input_runs_at_smallest_largest_and_middle_size(tmp_path):
    model = RowsAndColumnSums()
    rows = torch.export.Dim("rows", min=1, max=64)
    lowered = lower(model, (torch.randn(5, 8),), tmp_path, dynamic_shapes=({0: rows},))
    method = lowered.load_method()
    for size in (1, 64, 17, 2):
        inputs = (torch.randn(size, 8),)
        assert_close(run(method, inputs), eager(model, inputs))


def test_a_dimension_without_an_upper_bound_lowers_and_runs_up_to_the_example_size(tmp_path):
    # ExecuTorch plans an unbounded dimension's memory for the example's size.
    model = RowsAndColumnSums()
    lowered = lower(model, (torch.randn(5, 8),), tmp_path, dynamic_shapes=({0: torch.export.Dim("rows")},))
    assert "aten.mul.Tensor" in lowered.delegated_ops()
    method = lowered.load_method()
    for size in (5, 2, 4):
        inputs = (torch.randn(size, 8),)
        assert_close(run(method, inputs), eager(model, inputs))


class StaticNextToDynamic(torch.nn.Module):
    """A dynamic output next to a static one computed from the same data-dependent view."""

    def forward(self, x, n):
        rows = n.item()
        torch._check(rows >= 1)
        torch._check(rows <= x.shape[0])
        first = x[:rows] + 1
        return first, first.sum(dim=0)


def test_static_output_from_a_data_dependent_view_stays_right(tmp_path):
    model = StaticNextToDynamic()
    lowered = lower(model, (torch.randn(6, 4), torch.tensor(2)), tmp_path)
    method = lowered.load_method()
    for rows in (2, 6, 5):
        inputs = (torch.randn(6, 4), torch.tensor(rows))
        assert_close(run(method, inputs), eager(model, inputs))


class CallsTwice(torch.nn.Module):
    def __init__(self, lowered):
        super().__init__()
        self.lowered = lowered

    def forward(self, a, b):
        return self.lowered(a), self.lowered(b)


def _share_first_delegate(buffer: bytes) -> bytes:
    """Points every delegate call at delegate 0, as ExecuTorch 0.7 and earlier emitted
    a module lowered once and called from several places: one handle, many call sites."""
    pte = deserialize_pte_binary(buffer)
    for chain in pte.program.execution_plan[0].chains:
        for instruction in chain.instructions:
            if hasattr(instruction.instr_args, "delegate_index"):
                instruction.instr_args.delegate_index = 0
    return bytes(serialize_pte_binary(pte))


def test_one_delegate_handle_serves_calls_with_different_output_sizes(tmp_path):
    rows = torch.export.Dim("rows", min=2, max=16)
    edge = to_edge(torch.export.export(TwiceXPlusOne(), (torch.randn(4, 3),), dynamic_shapes=({0: rows},)))
    lowered = to_backend(BACKEND_ID, edge.exported_program(), openvino_compile_specs())
    dims = ({0: torch.export.Dim("a", min=2, max=16)}, {0: torch.export.Dim("b", min=2, max=16)})
    program = to_edge(
        torch.export.export(CallsTwice(lowered), (torch.randn(3, 3), torch.randn(9, 3)), dynamic_shapes=dims)
    ).to_executorch()
    path = tmp_path / "shared.pte"
    path.write_bytes(_share_first_delegate(program.buffer))

    method = Runtime.get().load_program(path).load_method("forward")
    for first, second in ((3, 9), (12, 2), (16, 16)):  # the second call grows past the first
        a, b = torch.randn(first, 3), torch.randn(second, 3)
        out_a, out_b = run(method, (a, b))
        assert_close([out_a, out_b], [a * 2 + 1, b * 2 + 1])


def _doubled_rows(blob: bytes) -> bytes:
    # Simulates OpenVINO producing more than ExecuTorch planned for.
    model = model_in_blob(blob)
    result = model.get_results()[0]
    source = result.input_value(0)
    result.input(0).replace_source_output(ov_ops.concat([source, source], 0).output(0))
    model.validate_nodes_and_infer_types()
    return write_blob(model)


def test_output_larger_than_its_planned_bound_fails_naming_both_shapes(tmp_path, capfd):
    rows = torch.export.Dim("rows", min=2, max=8)
    lowered = lower(TwiceXPlusOne(), (torch.randn(4, 3),), tmp_path, dynamic_shapes=({0: rows},))
    doubled = tmp_path / "doubled.pte"
    doubled.write_bytes(program_with_blob(lowered.path, _doubled_rows))
    method = Runtime.get().load_program(doubled).load_method("forward")
    with pytest.raises(RuntimeError):
        method.execute([torch.randn(8, 3)])
    err = capfd.readouterr().err
    assert "output 0" in err and "[16, 3]" in err and "[8, 3]" in err, err


class GatherColumns(torch.nn.Module):
    def forward(self, x, index):
        return x.gather(1, index) * 2


def test_a_gather_whose_index_is_narrower_than_its_input_runs_on_the_cpu(tmp_path):
    # OpenVINO's GatherElements needs the index as wide as the input; torch.gather does not.
    # With a dynamic index count, that failed lowering in OpenVINO's shape inference.
    rows = torch.export.Dim("rows", min=1, max=33)
    x = torch.randn(40, 5)
    lowered = lower(GatherColumns(), (x, torch.randint(0, 5, (7, 3))), tmp_path, dynamic_shapes=(None, {0: rows}))
    assert "aten::gather.out" in lowered.cpu_ops()
    method = lowered.load_method()
    for count in (7, 1, 33):
        inputs = (x, torch.randint(0, 5, (count, 3), generator=torch.Generator().manual_seed(count)))
        assert_close(run(method, inputs), eager(GatherColumns(), inputs))
