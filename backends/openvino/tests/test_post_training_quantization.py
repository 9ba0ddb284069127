"""A model quantized to INT8 by NNCF runs whole in OpenVINO, on its INT8 kernels.

``nncf.quantize`` on an exported model's module inserts quantize/dequantize pairs
on activations and stores weights in int8. OpenVINO folds each pair into the layer
it guards and runs the layer in 8 bits. INT8 arithmetic rounds differently from
eager PyTorch's float emulation of it, so the results are compared with eager at a
quantization tolerance and with OpenVINO running the same program alone, exactly.
"""

from __future__ import annotations

import openvino as ov
import pytest
import torch
from executorch_openvino import openvino_compile_specs
from harness import assert_close, eager, lower, run, runtime_weight_types

nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")

F32 = openvino_compile_specs(inference_precision="f32")


class AttentionBlock(torch.nn.Module):
    """A ViT-like block: a permuted qkv projection, attention, an MLP."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(), torch.nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        attended = torch.nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.out(attended.transpose(1, 2).reshape(batch, tokens, dim))
        return x + self.mlp(x)


class SmallCnn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.second = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = torch.relu(self.second(torch.relu(self.first(x))))
        return self.classifier(features.mean((2, 3)))


def assert_runs_whole_on_int8_kernels(program, layer_types) -> None:
    """Nothing on ExecuTorch's CPU kernels, and each of `layer_types` compiled with 8-bit weights."""
    assert program.cpu_ops() == []
    [model] = program.openvino_models()
    for layer_type in layer_types:
        weight_types = runtime_weight_types(model, layer_type)
        assert weight_types and weight_types <= {"u8", "i8"}, f"{layer_type} runs with {weight_types} weights"


def _images(seed: int) -> torch.Tensor:
    return torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def quantized() -> torch.nn.Module:
    torch.manual_seed(0)
    exported = torch.export.export(SmallCnn().eval(), (_images(0),))
    calibration = nncf.Dataset([_images(seed) for seed in range(10, 14)])
    return nncf.quantize(exported.module(), calibration, subset_size=4)


def test_int8_model_runs_whole_in_openvino_on_int8_kernels(tmp_path, quantized):
    program = lower(quantized, (_images(0),), tmp_path, compile_specs=F32)

    assert_runs_whole_on_int8_kernels(program, ("Convolution", "FullyConnected"))


def test_int8_model_gives_openvinos_results_and_eagers_within_quantization_error(tmp_path, quantized):
    program = lower(quantized, (_images(0),), tmp_path, compile_specs=F32)
    alone = ov.Core().compile_model(
        ov.convert_model(torch.export.export(quantized, (_images(0),))), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
    )
    method = program.load_method()
    for seed in (1, 2):
        images = _images(seed)
        [ours] = run(method, (images,))
        assert_close([ours], [torch.from_numpy(alone(images.numpy())[0])], rtol=1e-5, atol=1e-5)
        # A few 8-bit steps of the output, not float32 agreement.
        [expected] = eager(quantized, (images,))
        assert_close([ours], [expected], rtol=0.0, atol=0.1 * float(expected.abs().max()))


def test_int8_attention_block_runs_whole_on_int8_kernels_with_openvinos_results(tmp_path):
    torch.manual_seed(0)
    tokens = [torch.randn(1, 16, 64, generator=torch.Generator().manual_seed(seed)) for seed in range(6)]
    exported = torch.export.export(AttentionBlock().eval(), (tokens[0],))
    quantized = nncf.quantize(
        exported.module(), nncf.Dataset(tokens[2:]), subset_size=4, model_type=nncf.ModelType.TRANSFORMER
    )
    program = lower(quantized, (tokens[0],), tmp_path, compile_specs=F32)

    assert_runs_whole_on_int8_kernels(program, ("FullyConnected",))
    alone = ov.Core().compile_model(
        ov.convert_model(torch.export.export(quantized, (tokens[0],))), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
    )
    method = program.load_method()
    for x in tokens[:2]:
        assert_close(run(method, (x,)), [torch.from_numpy(alone(x.numpy())[0])], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_int8_model_from_nncfs_pt2e_flow_with_folded_weights_runs_whole_on_int8_kernels(tmp_path, per_channel):
    # NNCF's quantize_pt2e folds each weight into an int8 constant read by a lone
    # dequantize (fold_quantize=True), which OpenVINO's frontend cannot convert as is.
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from nncf.experimental.torch.fx import quantize_pt2e

    torch.manual_seed(0)
    exported = torch.export.export(SmallCnn().eval(), (_images(0),))
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=per_channel))
    calibration = nncf.Dataset([_images(seed) for seed in range(10, 14)])
    quantized = quantize_pt2e(exported.module(), quantizer, calibration, subset_size=4)
    program = lower(quantized, (_images(0),), tmp_path, compile_specs=F32)

    assert_runs_whole_on_int8_kernels(program, ("Convolution", "FullyConnected"))
    method = program.load_method()
    for seed in (1, 2):
        images = _images(seed)
        [expected] = eager(quantized, (images,))
        # A few 8-bit steps of the output, not float32 agreement.
        assert_close(run(method, (images,)), [expected], rtol=0.0, atol=0.1 * float(expected.abs().max()))
