"""The partitioner's node rules on small edge graphs, without lowering anything.

OpenvinoOperatorSupport.refusal says why a node stays on the CPU (None: OpenVINO
takes it); CopyPlacement decides which copies must run on the CPU so that OpenVINO
never returns an input or a rounded constant in their place.
"""

from __future__ import annotations

import torch
from executorch.exir import to_edge
from executorch_openvino.partition.copy_placement import CopyPlacement
from executorch_openvino.partition.op_support import OpenvinoOperatorSupport


def edge_program(module: torch.nn.Module, *inputs: torch.Tensor):
    return to_edge(torch.export.export(module.eval(), inputs)).exported_program()


def node_named(program, fragment: str) -> torch.fx.Node:
    return next(node for node in program.graph.nodes if node.op == "call_function" and fragment in node.name)


class ReluPlusOne(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1


class Atan2(torch.nn.Module):
    def forward(self, y, x):
        return torch.atan2(y, x)


def test_refusal_is_none_for_an_op_openvino_converts():
    program = edge_program(ReluPlusOne(), torch.randn(2, 3))
    assert OpenvinoOperatorSupport().refusal(node_named(program, "relu")) is None


def test_refusal_names_a_skipped_op_type():
    program = edge_program(ReluPlusOne(), torch.randn(2, 3))
    support = OpenvinoOperatorSupport(op_types_to_skip={"aten.relu.default"})
    assert support.refusal(node_named(program, "relu")) == "its op type is in op_types_to_skip"
    assert support.refusal(node_named(program, "add")) is None


def test_refusal_names_a_skipped_node():
    program = edge_program(ReluPlusOne(), torch.randn(2, 3))
    relu = node_named(program, "relu")
    assert OpenvinoOperatorSupport(op_names_to_skip={relu.name}).refusal(relu) == (
        f"node {relu.name!r} is in op_names_to_skip"
    )


def test_refusal_passes_on_the_reason_a_cpu_node_was_placed_there():
    program = edge_program(ReluPlusOne(), torch.randn(2, 3))
    relu = node_named(program, "relu")
    support = OpenvinoOperatorSupport(cpu_nodes={relu.name: "a reason given by the copy rules"})
    assert support.refusal(relu) == f"node {relu.name!r}: a reason given by the copy rules"


def test_refusal_names_an_op_the_frontend_does_not_convert():
    program = edge_program(Atan2(), torch.randn(4, 3), torch.randn(4, 3))
    assert OpenvinoOperatorSupport().refusal(node_named(program, "atan2")) == (
        "OpenVINO's PyTorch frontend does not convert it"
    )


def test_refusal_names_a_tensor_read_in_another_dim_order():
    program = edge_program(ReluPlusOne(), torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last))
    assert OpenvinoOperatorSupport().refusal(node_named(program, "relu")) == (
        "it reads a tensor in dim order (0, 2, 3, 1), not the default"
    )


class ReturnsACopyOfItsInput(torch.nn.Module):
    def forward(self, x):
        return x.clone(), x + 1


class ReturnsACopyOfItsWeight(torch.nn.Module):
    def __init__(self, also_read_outside: bool = False):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3))
        self.also_read_outside = also_read_outside

    def forward(self, x):
        copy = self.weight.clone()
        if self.also_read_outside:
            return copy, x * self.weight
        return copy, x + 1


def compute_nodes(program) -> list:
    return [node for node in program.graph.nodes if node.op == "call_function"]


def test_copy_of_an_input_returned_from_its_partition_leaves_it():
    program = edge_program(ReturnsACopyOfItsInput(), torch.randn(3))
    clone = node_named(program, "clone")
    moved = CopyPlacement(program, "f32").input_copies_to_move_out([compute_nodes(program)])
    assert moved == {clone.name: "it copies an input, which OpenVINO would return as the input itself"}


class WritesIntoACopyOfItsInput(torch.nn.Module):
    def forward(self, x, index, values):
        result = x.clone()
        result.index_put_((index,), values)
        return result


def test_copy_of_an_input_read_only_inside_its_partition_stays_in_it():
    program = edge_program(WritesIntoACopyOfItsInput(), torch.randn(5), torch.tensor([0, 2]), torch.randn(2))
    assert CopyPlacement(program, "f32").input_copies_to_move_out([compute_nodes(program)]) == {}


def test_copy_of_an_input_read_by_a_node_of_another_partition_leaves_its_own():
    program = edge_program(WritesIntoACopyOfItsInput(), torch.randn(5), torch.tensor([0, 2]), torch.randn(2))
    clone = node_named(program, "clone")
    placement = CopyPlacement(program, "f32")
    assert list(placement.input_copies_to_move_out([[clone]])) == [clone.name]


class OnlyCopiesItsInput(torch.nn.Module):
    def forward(self, x):
        return x.transpose(1, 1)


def test_a_program_of_input_copies_only_keeps_them_in_openvino_where_the_cpu_plugin_runs_it():
    program = edge_program(OnlyCopiesItsInput(), torch.randn(2, 3))
    partitions = [compute_nodes(program)]
    assert CopyPlacement(program, "f32").input_copies_to_move_out(partitions) == {}
    # Without the CPU plugin there is no Identity to return the input through.
    placement = CopyPlacement(program, "f32", may_run_on_cpu=False)
    assert list(placement.input_copies_to_move_out(partitions)) == ["aten_alias_copy_default"]
    # A float copy at a lower precision could come back rounded.
    assert list(CopyPlacement(program, "bf16").input_copies_to_move_out(partitions)) == ["aten_alias_copy_default"]


def test_copy_of_a_float_constant_stays_in_the_partition_at_f32():
    program = edge_program(ReturnsACopyOfItsWeight(), torch.randn(3))
    partition = [node for node in compute_nodes(program) if "add" not in node.name]
    assert CopyPlacement(program, "f32").constant_copies_to_move_out([partition]) == {}


def test_copy_of_a_float_constant_leaves_the_partition_below_f32():
    program = edge_program(ReturnsACopyOfItsWeight(), torch.randn(3))
    clone = node_named(program, "clone")
    partition = [node for node in compute_nodes(program) if "add" not in node.name]
    assert CopyPlacement(program, "bf16").constant_copies_to_move_out([partition]) == {
        clone.name: "at inference precision bf16 a float constant may be rounded"
    }


def test_copy_of_a_constant_also_read_outside_the_partition_leaves_it():
    program = edge_program(ReturnsACopyOfItsWeight(also_read_outside=True), torch.randn(3))
    clone = node_named(program, "clone")
    assert CopyPlacement(program, "f32").constant_copies_to_move_out([[clone]]) == {
        clone.name: "its constant is also read outside the partition, which would store it twice"
    }
