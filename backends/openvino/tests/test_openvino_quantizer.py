"""Models quantized as ExecuTorch's documentation for OpenVINO does it, with the
``OpenVINOQuantizer`` and ``quantize_model`` the executorch wheel ships
(``executorch.backends.openvino.quantizer``, on NNCF's PT2E API), lower whole through
our partitioner, run their layers in 8 bits and give the quantized module's values
within a few 8-bit steps. The quantizer is only used, as a user would: our backend does
not build on the wheel's older OpenVINO backend."""

from __future__ import annotations

import pytest
import torch
from executorch_openvino import openvino_compile_specs
from harness import assert_close, eager, lower, run, runtime_weight_types

pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
quantizer = pytest.importorskip("executorch.backends.openvino.quantizer", reason="the executorch wheel ships it")

F32 = openvino_compile_specs(inference_precision="f32")


def tokens(seed: int) -> torch.Tensor:
    return torch.randn(2, 6, 64, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("mode", ["INT8_SYM", "INT8_MIXED", "INT8_TRANSFORMER"])
def test_a_transformer_encoder_layer_quantized_with_8_bit_activations_lowers_whole(mode, tmp_path):
    """Its attention result is quantized and dequantized before it is permuted and viewed,
    which failed to lower ("Cannot view a tensor with shape ... and strides ...")."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True).eval()
    exported = torch.export.export(layer, (tokens(0),))
    calibration = torch.utils.data.DataLoader([tokens(seed) for seed in range(10, 18)], batch_size=None)
    quantized = quantizer.quantize_model(
        exported.module(), calibration, mode=quantizer.QuantizationMode[mode], subset_size=8
    )
    program = lower(quantized, (tokens(0),), tmp_path, compile_specs=F32)

    assert program.cpu_ops() == []
    [model] = program.openvino_models()
    weight_types = runtime_weight_types(model, "FullyConnected")
    assert weight_types and weight_types <= {"u8", "i8"}, weight_types
    method = program.load_method()
    for seed in (1, 2):
        [ours] = run(method, (tokens(seed),))
        [expected] = eager(quantized, (tokens(seed),))
        # A few 8-bit steps of the output, as OpenVINO's 8-bit layers round otherwise than eager's emulation.
        assert_close([ours], [expected], rtol=0.0, atol=0.03 * float(expected.abs().max()))
