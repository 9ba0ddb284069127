"""Lowering compiles each delegate once to check it, unless that would not fit in memory."""

import executorch_openvino.preprocess as preprocess
import openvino as ov
import torch
from harness import assert_close, eager, lower, run


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 32)

    def forward(self, x):
        return self.linear(x)


def _count_compiles(monkeypatch) -> list:
    compiled = []
    compile_model = ov.Core.compile_model

    def counting(core, model, *args, **kwargs):
        compiled.append(model)
        return compile_model(core, model, *args, **kwargs)

    monkeypatch.setattr(ov.Core, "compile_model", counting)
    return compiled


def test_lowering_compiles_the_model_once_to_check_it(tmp_path, monkeypatch):
    compiled = _count_compiles(monkeypatch)
    lower(Linear(), (torch.randn(2, 64),), tmp_path)
    assert len(compiled) == 1


def test_a_compile_that_would_not_fit_in_memory_is_left_to_the_load(tmp_path, monkeypatch, caplog):
    model = Linear()
    # The linear's weights alone are 8 KB: compiling them may take twice that.
    monkeypatch.setattr(preprocess, "available_memory_bytes", lambda: 4096)
    compiled = _count_compiles(monkeypatch)
    lowered = lower(model, (torch.randn(2, 64),), tmp_path)
    assert compiled == []
    assert "Not compiling the OpenVINO model to check it at lowering" in caplog.text
    method = lowered.load_method()
    for _ in range(2):
        inputs = (torch.randn(2, 64),)
        assert_close(run(method, inputs), eager(model, inputs))


def test_compile_memory_estimate_widens_16_bit_float_weights():
    import numpy as np

    def model_with(weights: np.ndarray) -> ov.Model:
        x = ov.op.Parameter(ov.Type.f32, ov.Shape([1, 16]))
        y = ov.opset13.matmul(x, ov.opset13.convert(ov.op.Constant(weights), ov.Type.f32), False, True)
        return ov.Model([y], [x])

    # 16x16 weights: 1 KB in f32, 512 bytes in f16, twice each for the repacked copy.
    assert preprocess.compile_memory_estimate(model_with(np.ones((16, 16), np.float32))) == 2 * 1024
    assert preprocess.compile_memory_estimate(model_with(np.ones((16, 16), np.float16))) == 2 * 1024
