"""Weights compressed by NNCF reach OpenVINO compressed, and run as the compressed model does.

``nncf.compress_weights`` on an exported model stores INT8 weights as int8/uint8
constants and INT4 weights packed two to a byte, unpacked in the graph. The
partitioner keeps that unpacking whole, so OpenVINO receives 4-bit constants and
runs its compressed-weight kernels; lowering works with the default
``EdgeCompileConfig``. Results are compared with the compressed model run by
eager PyTorch (not with the float model: compression changes the numbers).
"""

from __future__ import annotations

import logging
from typing import Optional

import pytest
import torch
from executorch.exir import EdgeCompileConfig, to_edge
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs
from harness import (
    NO_8_BIT_DOT_PRODUCTS_REASON,
    assert_runs_like_eager,
    cpu_has_8_bit_dot_products,
    eager,
    lower,
    run,
    runtime_weight_types,
)
from models import TransformerBlock

nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")

# Compared in f32 with f32 activations: on CPUs with bf16 units OpenVINO's default would
# round activations, and with VNNI or AMX it quantizes the activations of compressed layers.
F32 = openvino_compile_specs(inference_precision="f32", dynamic_quantization_group_size=0)


class ThreeLinears(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(128, 256)
        self.second = torch.nn.Linear(256, 128)
        self.last = torch.nn.Linear(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.last(torch.relu(self.second(torch.relu(self.first(x)))))


def _compressed(mode: str, model: Optional[torch.nn.Module] = None, example: tuple = (), **options) -> torch.nn.Module:
    """`model` (ThreeLinears by default) exported on `example` and compressed by NNCF."""
    model = (model or ThreeLinears()).eval()
    exported = torch.export.export(model, example or (torch.randn(2, 128),))
    if mode.startswith("INT4"):
        options.update(ratio=1.0, all_layers=True)  # every layer in 4 bits, the last one too
    return nncf.compress_weights(exported.module(), mode=getattr(nncf.CompressWeightsMode, mode), **options)


def _weight_types(model) -> set:
    return {op.get_output_element_type(0).get_type_name() for op in model.get_ops() if op.get_type_name() == "Constant"}


def _constant_bytes(model) -> int:
    return sum(op.get_byte_size() for op in model.get_ops() if op.get_type_name() == "Constant")


# ThreeLinears' weight matrices in float32: 69,632 values, 272 KiB.
FLOAT_WEIGHT_BYTES = 4 * (128 * 256 + 256 * 128 + 128 * 32)


def _runs_like_compressed_eager(program, compressed: torch.nn.Module) -> None:
    input_sets = [(torch.randn(2, 128, generator=torch.Generator().manual_seed(seed)),) for seed in (1, 2)]
    # The compressed model dequantizes through float16 scales, as OpenVINO does in f32.
    assert_runs_like_eager(compressed, program, input_sets, rtol=1e-3, atol=1e-3)


FOUR_BIT = [
    pytest.param("INT4_SYM", 32, "i4", id="int4_sym_group32"),
    pytest.param("INT4_SYM", 64, "i4", id="int4_sym_group64"),
    pytest.param("INT4_SYM", 128, "i4", id="int4_sym_group128"),
    pytest.param("INT4_SYM", -1, "i4", id="int4_sym_per_channel"),
    pytest.param("INT4_ASYM", 64, "u4", id="int4_asym_group64"),
    pytest.param("INT4_ASYM", -1, "u4", id="int4_asym_per_channel"),
]


@pytest.mark.parametrize("mode, group_size, four_bit_type", FOUR_BIT)
def test_int4_weights_reach_openvino_in_four_bits(tmp_path, mode, group_size, four_bit_type):
    compressed = _compressed(mode, group_size=group_size)
    program = lower(compressed, (torch.randn(2, 128),), tmp_path, compile_specs=F32)

    assert program.cpu_ops() == []
    [model] = program.openvino_models()
    assert four_bit_type in _weight_types(model)
    assert "u8" not in _weight_types(model), "a packed byte weight reached OpenVINO unpacked"
    assert runtime_weight_types(model, "FullyConnected") == {four_bit_type}
    # Half a byte per weight, plus scales, zero points and biases.
    assert _constant_bytes(model) < 0.2 * FLOAT_WEIGHT_BYTES
    _runs_like_compressed_eager(program, compressed)


@pytest.mark.parametrize("mode, eight_bit_type", [("INT8_SYM", "i8"), ("INT8_ASYM", "u8")])
def test_int8_weights_reach_openvino_in_eight_bits(tmp_path, mode, eight_bit_type):
    compressed = _compressed(mode)
    program = lower(compressed, (torch.randn(2, 128),), tmp_path, compile_specs=F32)

    assert program.cpu_ops() == []
    [model] = program.openvino_models()
    assert runtime_weight_types(model, "FullyConnected") == {eight_bit_type}
    assert _constant_bytes(model) < 0.3 * FLOAT_WEIGHT_BYTES
    _runs_like_compressed_eager(program, compressed)


@pytest.mark.skipif(not cpu_has_8_bit_dot_products(), reason=NO_8_BIT_DOT_PRODUCTS_REASON)
@pytest.mark.parametrize("mode", ["INT8_ASYM", "INT4_SYM"])
def test_compressed_layers_quantize_their_activations_by_default(tmp_path, mode):
    # A user who compressed weights chose approximate numbers: by default OpenVINO runs
    # those layers as it runs them alone, with int8 activations on CPUs with VNNI or
    # AMX, which moves the outputs by 5e-3 to 9e-3 of their range (f32 activations:
    # 2e-4 to 4e-4, from the float16 scales; Intel Xeon with AMX).
    compressed = _compressed(mode, group_size=32) if mode.startswith("INT4") else _compressed(mode)
    method = lower(compressed, (torch.randn(2, 128),), tmp_path).load_method()
    for seed in (1, 2):
        x = torch.randn(2, 128, generator=torch.Generator().manual_seed(seed))
        [ours], [expected] = run(method, (x,)), eager(compressed, (x,))
        relative_error = float((ours - expected).abs().max() / expected.abs().max())
        assert 2e-3 < relative_error < 3e-2, f"relative error {relative_error}"


def test_a_dynamic_quantization_group_size_of_zero_gives_the_compressed_models_values(tmp_path):
    compressed = _compressed("INT8_ASYM")
    specs = openvino_compile_specs(dynamic_quantization_group_size=0)
    _runs_like_compressed_eager(lower(compressed, (torch.randn(2, 128),), tmp_path, compile_specs=specs), compressed)


def test_unpacking_left_on_the_cpu_is_named_in_a_warning(caplog):
    # to_edge decomposes the unpacking before the partitioner sees it.
    compressed = _compressed("INT4_SYM", group_size=32)
    edge = to_edge(
        torch.export.export(compressed, (torch.randn(2, 128),)),
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )
    with caplog.at_level(logging.WARNING, logger="executorch_openvino"):
        edge.to_backend(OpenvinoPartitioner(F32))

    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any("4-bit weight unpacking" in message and "bitwise_right_shift" in message for message in warnings)


def test_skipping_the_unpacking_stack_is_respected(tmp_path):
    # The stack is then decomposed, the shift has no conversion of its own, and
    # ExecuTorch's verifier refuses it, as it does without this backend.
    compressed = _compressed("INT4_SYM", group_size=32)
    partitioner = OpenvinoPartitioner(F32, op_types_to_skip=["aten.stack"])
    with pytest.raises(Exception, match="bitwise_right_shift.Tensor_Scalar is not in Core ATen"):
        lower(compressed, (torch.randn(2, 128),), tmp_path, partitioner=partitioner)


@pytest.mark.parametrize("mode, weight_type", [("INT4_SYM", "i4"), ("INT8_ASYM", "u8")], ids=["int4_sym", "int8_asym"])
def test_compressed_transformer_block_runs_whole_on_compressed_weights(tmp_path, mode, weight_type):
    torch.manual_seed(0)
    tokens = [torch.randn(1, 16, 64, generator=torch.Generator().manual_seed(seed)) for seed in (1, 2)]
    options = {"group_size": 32} if mode.startswith("INT4") else {}
    compressed = _compressed(mode, TransformerBlock(), (tokens[0],), **options)
    program = lower(compressed, (tokens[0],), tmp_path, compile_specs=F32)

    assert program.cpu_ops() == []
    [model] = program.openvino_models()
    # Every projection of attention and the MLP runs on compressed weights.
    assert runtime_weight_types(model, "FullyConnected") == {weight_type}
    assert_runs_like_eager(compressed, program, [(x,) for x in tokens], rtol=1e-3, atol=1e-3)
