"""export_llm compresses an LLM's weights with NNCF: 4-bit weights reach OpenVINO, the
KV cache stays OpenVINO state, and decoding gives the compressed model's logits."""

from __future__ import annotations

import pytest
import torch
from executorch_openvino import openvino_compile_specs
from executorch_openvino.llm import export_llm
from harness import LoweredProgram, assert_close

nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
llama = pytest.importorskip(
    "executorch.examples.models.llama.llama_transformer", reason="the executorch wheel ships the example Llama"
)
from executorch.examples.models.llama.model_args import ModelArgs  # noqa: E402

INT4 = {"mode": "int4_sym", "group_size": 32, "ratio": 1.0, "all_layers": True}


def _small_llama() -> tuple:
    args = ModelArgs(
        dim=64,
        n_layers=2,
        n_heads=4,
        n_kv_heads=2,
        vocab_size=256,
        max_seq_len=32,
        max_context_len=32,
        use_kv_cache=True,
        enable_dynamic_shape=False,
    )
    torch.manual_seed(0)
    return llama.construct_transformer(args).eval(), args


def _compressed_eager(model: torch.nn.Module) -> torch.nn.Module:
    """What export_llm lowers, run by eager PyTorch: the same NNCF call on the same export."""
    example = (torch.tensor([[1]]), {"input_pos": torch.tensor([0])})
    exported = torch.export.export(model, example)
    settings = dict(INT4, mode=nncf.CompressWeightsMode(INT4["mode"]))
    return nncf.compress_weights(exported.module(), **settings)


def test_int4_llm_decodes_like_the_compressed_model(tmp_path):
    model, args = _small_llama()
    expected_model = _compressed_eager(model)
    manager = export_llm(
        model,
        args,
        # f32 activations: the compressed model's values (by default OpenVINO quantizes them to int8).
        compile_specs=openvino_compile_specs(inference_precision="f32", dynamic_quantization_group_size=0),
        weight_compression=INT4,
    )
    path = tmp_path / "llama_int4.pte"
    path.write_bytes(manager.buffer)
    program = LoweredProgram(manager, path)

    assert program.cpu_ops() == []
    assert program.delegate_input_counts() == [2], "the KV cache crossed the delegate boundary"
    [openvino_model] = program.openvino_models()
    assert "i4" in {op.get_output_element_type(0).get_type_name() for op in openvino_model.get_ops()}
    method = program.load_method()
    for position, token in enumerate([1, 17, 42, 99, 5, 200]):
        inputs = (torch.tensor([[token]]), torch.tensor([position]))
        [logits] = method.execute(list(inputs))
        with torch.no_grad():
            expected = expected_model(inputs[0], {"input_pos": inputs[1]})
        assert_close([logits.clone()], [expected], rtol=1e-3, atol=1e-3)
