"""A model quantized to INT8 by NNCF runs whole in OpenVINO and computes the quantized model's values.

``nncf.quantize`` on an exported model's module inserts quantize/dequantize pairs
on activations and stores weights in int8. OpenVINO folds each pair into the layer
it guards and runs the layer in 8 bits, which rounds differently from eager
PyTorch's float emulation of it: results are compared with eager at a tolerance of
a few 8-bit steps. On a CPU without VNNI or AMX, OpenVINO's 8-bit kernels saturate
and the delegate runs these layers on float kernels (runtime/quantized_layers.h).
"""

from __future__ import annotations

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
    """Nothing on ExecuTorch's CPU kernels, and each of `layer_types` compiled with 8-bit
    weights by OpenVINO alone (the delegate does the same where the CPU has VNNI or AMX)."""
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


def assert_quantized_values(ours: torch.Tensor, expected: torch.Tensor) -> None:
    # A few 8-bit steps of the output, not float32 agreement; saturated sums are 10-25% off.
    assert_close([ours], [expected], rtol=0.0, atol=0.02 * float(expected.abs().max()))


def test_int8_model_gives_the_quantized_models_values(tmp_path, quantized):
    program = lower(quantized, (_images(0),), tmp_path, compile_specs=F32)
    method = program.load_method()
    for seed in (1, 2):
        images = _images(seed)
        [ours] = run(method, (images,))
        [expected] = eager(quantized, (images,))
        assert_quantized_values(ours, expected)


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = torch.nn.Linear(64, 128), torch.nn.Linear(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.relu(self.first(x)))


def test_int8_layers_with_weights_past_7_bits_give_the_quantized_models_values(tmp_path):
    # NNCF's defaults keep 7-bit weights in the first layer only; the second holds
    # weights up to +-127, whose products saturate 8-bit kernels without VNNI or AMX.
    torch.manual_seed(0)
    inputs = [torch.randn(1, 64, generator=torch.Generator().manual_seed(seed)) for seed in range(12)]
    exported = torch.export.export(Mlp().eval(), (inputs[0],))
    quantized = nncf.quantize(exported.module(), nncf.Dataset(inputs[4:]), subset_size=8)
    method = lower(quantized, (inputs[0],), tmp_path, compile_specs=F32).load_method()
    for x in inputs[1:3]:
        [ours] = run(method, (x,))
        [expected] = eager(quantized, (x,))
        assert_quantized_values(ours, expected)


def test_int8_attention_block_runs_whole_on_int8_kernels_with_the_quantized_models_values(tmp_path):
    torch.manual_seed(0)
    tokens = [torch.randn(1, 16, 64, generator=torch.Generator().manual_seed(seed)) for seed in range(6)]
    exported = torch.export.export(AttentionBlock().eval(), (tokens[0],))
    quantized = nncf.quantize(
        exported.module(), nncf.Dataset(tokens[2:]), subset_size=4, model_type=nncf.ModelType.TRANSFORMER
    )
    program = lower(quantized, (tokens[0],), tmp_path, compile_specs=F32)

    assert_runs_whole_on_int8_kernels(program, ("FullyConnected",))
    method = program.load_method()
    for x in tokens[:2]:
        [ours] = run(method, (x,))
        [expected] = eager(quantized, (x,))
        assert_close([ours], [expected], rtol=0.0, atol=0.05 * float(expected.abs().max()))


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
        [ours] = run(method, (images,))
        assert_quantized_values(ours, expected)
