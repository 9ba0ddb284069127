"""The decoder families the executorch wheel's Llama code builds (its ``ModelArgs``
switches for Llama 3, Qwen 2/3, Phi, Gemma-like and multi-query attention) lower to
one delegate and decode like eager, for one token per call and for a dynamic length."""

import copy

import pytest
import torch
from harness import lower, run

# Each a switch of ModelArgs as a model family sets it; the rest is a small Llama.
VARIANTS = {
    "multi_head": dict(n_kv_heads=4),
    "multi_query": dict(n_kv_heads=1),
    "llama3_scaled_rope": dict(use_scaled_rope=True, rope_freq_base=500000.0),
    "qwen2_qkv_bias": dict(attention_qkv_bias=True, use_hf_rope=True),
    "qwen3_qk_norm": dict(use_qk_norm=True, qk_norm_before_rope=True, use_hf_rope=True, head_dim=48),
    "phi_partial_rotary": dict(use_hf_rope=True, partial_rotary_factor=0.75),
    "gemma_like": dict(
        n_kv_heads=1,
        rms_norm_add_unit_offset=True,
        embedding_scale_factor=11.3,
        post_attention_norm=True,
        post_ffn_norm=True,
    ),
    "no_rope_every_second_layer": dict(no_rope_layer_interval=2),
    "output_bias": dict(output_bias=True, hidden_dim=200),
}
# A dynamic length takes another cache rewrite; these cover what differs before attention.
DYNAMIC = ("multi_query", "qwen3_qk_norm", "phi_partial_rotary", "gemma_like")
CONTEXT = 32


def decoder(variant: str, dynamic: bool) -> torch.nn.Module:
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(0)
    small = dict(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=256, max_seq_len=CONTEXT)
    args = ModelArgs(
        **{**small, **VARIANTS[variant]}, max_context_len=CONTEXT, use_kv_cache=True, enable_dynamic_shape=dynamic
    )
    model = construct_transformer(args).eval()
    with torch.no_grad():
        for parameter in model.parameters():  # biases and norm weights away from 0 and 1 too
            parameter.add_(torch.randn_like(parameter) * 0.05)
    return model


CASES = [(variant, False) for variant in VARIANTS] + [(variant, True) for variant in DYNAMIC]


@pytest.mark.parametrize(
    "variant, dynamic", CASES, ids=[f"{variant}-{'dynamic' if dynamic else 'static'}" for variant, dynamic in CASES]
)
def test_decoder_variant_lowers_whole_and_decodes_like_eager(variant, dynamic, tmp_path):
    model = decoder(variant, dynamic)
    eager = copy.deepcopy(model)
    tokens = torch.tensor([[1, 2]] if dynamic else [[1]])
    shapes = ({1: torch.export.Dim("sequence", min=1, max=CONTEXT - 1)}, {"input_pos": None}) if dynamic else None
    with torch.no_grad():
        program = lower(model, (tokens, {"input_pos": torch.tensor([0])}), tmp_path, dynamic_shapes=shapes)
    assert len(program.delegate_ids()) == 1
    assert program.cpu_ops() == []
    # A prompt (in one call when the length is dynamic), then single tokens.
    prompt = [5, 9, 33, 2, 7]
    calls = [(prompt, 0)] if dynamic else [([token], position) for position, token in enumerate(prompt)]
    calls += [([11], 5), ([40], 6), ([3], 7)]
    method = program.load_method()
    for tokens, position in calls:
        inputs = (torch.tensor([tokens]), torch.tensor([position]))
        with torch.no_grad():
            expected = eager(inputs[0], {"input_pos": inputs[1]})
        torch.testing.assert_close(run(method, inputs)[0], expected, rtol=1e-4, atol=1e-4)


def test_sliding_window_ring_cache_decodes_past_its_window_like_eager(tmp_path):
    # The examples' ring cache (local attention over 8 positions on layer 0) writes
    # its position buffer before its keys and values.
    from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
        replace_kv_cache_with_ring_kv_cache,
    )

    model = decoder("multi_head", dynamic=False)
    replace_kv_cache_with_ring_kv_cache(model, [8, 0])
    eager = copy.deepcopy(model)
    with torch.no_grad():
        program = lower(model, (torch.tensor([[1]]), {"input_pos": torch.tensor([0])}), tmp_path)
    assert len(program.delegate_ids()) == 1
    method = program.load_method()
    for position, token in enumerate(torch.randint(0, 256, (20,)).tolist()):  # the ring wraps after 16
        inputs = (torch.tensor([[token]]), torch.tensor([position]))
        with torch.no_grad():
            expected = eager(inputs[0], {"input_pos": inputs[1]})
        torch.testing.assert_close(run(method, inputs)[0], expected, rtol=1e-4, atol=1e-4)
