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


def _constant_types(program: LoweredProgram) -> dict:
    """How many of the OpenVINO model's constants hold each element type."""
    [openvino_model] = program.openvino_models()
    counts: dict = {}
    for op in openvino_model.get_ops():
        if op.get_type_name() == "Constant":
            name = op.get_output_element_type(0).get_type_name()
            counts[name] = counts.get(name, 0) + 1
    return counts


def _llama_of_one_int4_group() -> tuple:
    """A one-layer Llama of dim 128: the int4 form's group size."""
    args = ModelArgs(
        dim=128,
        n_layers=1,
        n_heads=4,
        n_kv_heads=2,
        vocab_size=256,
        max_seq_len=16,
        max_context_len=16,
        use_kv_cache=True,
        enable_dynamic_shape=False,
    )
    torch.manual_seed(0)
    return llama.construct_transformer(args).eval(), args


def _delegate_compile_specs(manager) -> dict:
    [forward] = [plan for plan in manager.executorch_program.execution_plan if plan.name == "forward"]
    [delegate] = forward.delegates
    return {spec.key: spec.value for spec in delegate.compile_specs}


def test_named_int4_form_compresses_every_layer_to_4_bits_and_decodes_like_nncf(tmp_path):
    """weight_compression="int4" is NNCF's INT4_SYM in groups of 128 with all_layers: the
    embedding and the output projection get 4-bit weights too (NNCF's default keeps them
    8-bit), and decoding gives that compressed model's logits."""
    model, args = _llama_of_one_int4_group()
    example = (torch.tensor([[1]]), {"input_pos": torch.tensor([0])})
    expected_model = nncf.compress_weights(
        torch.export.export(model, example).module(),
        mode=nncf.CompressWeightsMode.INT4_SYM,
        group_size=128,
        ratio=1.0,
        all_layers=True,
    )
    manager = export_llm(
        model,
        args,
        compile_specs=openvino_compile_specs(inference_precision="f32", dynamic_quantization_group_size=0),
        weight_compression="int4",
    )
    path = tmp_path / "llama_int4.pte"
    path.write_bytes(manager.buffer)
    program = LoweredProgram(manager, path)

    weights = _constant_types(program)
    # The embedding, the layer's 7 projections as 4 constants (queries, keys and values
    # joined, gate and up joined: conversion/rewrites/sibling_products.py), the output projection.
    assert weights.get("i4", 0) == 6, weights
    assert "u8" not in weights and "i8" not in weights, weights
    method = program.load_method()
    for position, token in enumerate([1, 17, 42, 99]):
        inputs = (torch.tensor([[token]]), torch.tensor([position]))
        [logits] = method.execute(list(inputs))
        with torch.no_grad():
            expected = expected_model(inputs[0], {"input_pos": inputs[1]})
        assert_close([logits.clone()], [expected], rtol=1e-3, atol=1e-3)


def test_unknown_weight_compression_name_is_refused_before_exporting():
    model, args = _small_llama()
    with pytest.raises(ValueError, match=r"'int3' is not a named form; use one of \['int4', 'int8'\]"):
        export_llm(model, args, weight_compression="int3")


def test_int4_weights_leave_the_activation_groups_to_openvino():
    # OpenVINO's own groups (32), as OpenVINO GenAI runs them: which length decodes faster
    # depends on the CPU kind (docs/llm.md#quantized-llms), and 32 is the closer to the
    # compressed model's values.
    model, args = _llama_of_one_int4_group()
    manager = export_llm(model, args, weight_compression="int4")
    assert "dynamic_quantization_group_size" not in _delegate_compile_specs(manager)


def test_a_dynamic_quantization_group_size_the_caller_set_is_kept():
    model, args = _llama_of_one_int4_group()
    specs = openvino_compile_specs(dynamic_quantization_group_size=0)
    given = list(specs)
    manager = export_llm(model, args, compile_specs=specs, weight_compression=INT4)
    assert _delegate_compile_specs(manager)["dynamic_quantization_group_size"] == b"0"
    assert specs == given, "the caller's compile specs were modified"
