"""Models quantized with torchao in ExecuTorch's LLM modes (8da4w, 8da8w, 4w) lower
to one delegate and give the quantized model's values: torchao's quantize,
dequantize and choose_qparams ops are decomposed for OpenVINO, which ExecuTorch
alone cannot run ("Missing out variants"). OpenVINO keeps the weights integer."""

import pytest
import torch
from executorch_openvino import openvino_compile_specs
from harness import lower, run, runtime_weight_types

# The quantized model's values: without this, OpenVINO quantizes the activations of
# layers with integer weights once more on CPUs with VNNI or AMX.
F32_ACTIVATIONS = openvino_compile_specs(dynamic_quantization_group_size=0)


def quantized_mlp(mode: str) -> torch.nn.Module:
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    mlp = torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32)).eval()
    return quantize(mlp, mode, group_size=32)


@pytest.mark.parametrize("mode", ["8da4w", "8da8w", "4w"])
def test_a_torchao_quantized_model_lowers_whole_and_matches_it(mode, tmp_path):
    model = quantized_mlp(mode)
    calls = [torch.randn(4, 128), 3 * torch.randn(4, 128)]
    program = lower(model, (calls[0],), tmp_path, compile_specs=F32_ACTIVATIONS)
    assert program.cpu_ops() == []
    assert len(program.delegate_ids()) == 1
    method = program.load_method()
    for x in calls:
        with torch.no_grad():
            expected = model(x)
        # Dynamic activation quantization may round a value into the next step: 1e-3 of the range.
        torch.testing.assert_close(run(method, (x,))[0], expected, rtol=1e-3, atol=1e-3 * float(expected.abs().max()))


def test_torchao_weights_reach_openvino_as_integers(tmp_path):
    program = lower(quantized_mlp("4w"), (torch.randn(4, 128),), tmp_path)
    for model in program.openvino_models():
        assert runtime_weight_types(model, "FullyConnected") == {"i8"}  # torchao keeps 4-bit values in int8
