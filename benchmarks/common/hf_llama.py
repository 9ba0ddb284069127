"""The Hugging Face Llama configuration hf_llm.py and llm_genai.py build their random-weight
model from: dim 1024, 8 layers, 16 heads, 4 KV heads, MLP 2816, vocab 32000 (156M
parameters, 623 MB in f32)."""

from __future__ import annotations

from typing import Dict

LLAMA_1024: Dict[str, int] = dict(
    vocab_size=32000,
    hidden_size=1024,
    intermediate_size=2816,
    num_hidden_layers=8,
    num_attention_heads=16,
    num_key_value_heads=4,
    max_position_embeddings=2048,
    bos_token_id=1,
    eos_token_id=2,
)
