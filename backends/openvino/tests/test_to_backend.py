"""A whole program lowered with to_backend, without a partitioner."""

import torch
from executorch.exir import to_edge
from executorch.exir.backend.backend_api import to_backend

from executorch_openvino import BACKEND_ID, openvino_compile_specs
from harness import assert_close, eager, run


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


class CallsLowered(torch.nn.Module):
    def __init__(self, lowered):
        super().__init__()
        self.lowered = lowered

    def forward(self, x):
        return self.lowered(x)


def test_whole_program_with_weights_lowered_with_to_backend_matches_eager(tmp_path):
    model = LinearRelu().eval()
    example = (torch.randn(3, 8),)
    edge_program = to_edge(torch.export.export(model, example)).exported_program()
    lowered = to_backend(BACKEND_ID, edge_program, openvino_compile_specs())
    program = to_edge(torch.export.export(CallsLowered(lowered), example)).to_executorch()
    assert [d.id for d in program.executorch_program.execution_plan[0].delegates] == [BACKEND_ID]

    path = tmp_path / "whole.pte"
    path.write_bytes(program.buffer)
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(path).load_method("forward")
    for _ in range(2):
        inputs = (torch.randn(3, 8),)
        assert_close(run(method, inputs), eager(model, inputs))
