"""A whole program lowered with to_backend, without a partitioner."""

import torch
from executorch_openvino import BACKEND_ID
from harness import assert_close, eager, lower_whole_program, run
from small_models import LinearRelu


def test_whole_program_with_weights_lowered_with_to_backend_matches_eager(tmp_path):
    model = LinearRelu(8).eval()
    lowered = lower_whole_program(model, (torch.randn(3, 8),), tmp_path)
    assert lowered.delegate_ids() == [BACKEND_ID]
    method = lowered.load_method()
    for _ in range(2):
        inputs = (torch.randn(3, 8),)
        assert_close(run(method, inputs), eager(model, inputs))
