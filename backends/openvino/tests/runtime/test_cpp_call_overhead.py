"""The C++ runner behind benchmarks/compare.py's per-call overhead table (benchmarks/cpp/call_overhead.cpp).

It times Method::execute of a .pte against OpenVINO alone running the same delegate's
IR, in one C++ process; or, with --steps, a decoder method's steps with its KV cache kept
as state. These tests check what its figures rest on, not the figures: both engines ran,
and they computed the same outputs from the same inputs.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import torch
from cpp_build import cpp_programs
from executorch_openvino import openvino_compile_specs
from harness import lower
from small_models import LinearRelu


def run_call_overhead(*args: str) -> subprocess.CompletedProcess:
    command = [str(cpp_programs().call_overhead), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_both_engines_run_and_compute_the_same_outputs(tmp_path):
    torch.manual_seed(0)
    program = lower(
        LinearRelu().eval(),
        (torch.randn(8, 64),),
        tmp_path,
        compile_specs=openvino_compile_specs(inference_precision="f32"),
    )
    result = run_call_overhead(str(program.path), "--precision", "f32", "--rounds", "2", "--round-ms", "20")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    for engine in ("ours", "openvino"):
        assert figures[engine]["calls"] >= 20, engine
        assert len(figures[engine]["round_medians_us"]) == 2, engine
        assert figures[engine]["median_us"] > 0, engine
    assert figures["outputs_compared"] == 8 * 64
    assert figures["max_rel_diff"] <= 1e-6


def test_a_program_without_our_delegate_is_refused_by_name(tmp_path):
    class Add(torch.nn.Module):
        def forward(self, x):
            return x + 1

    from executorch.exir import to_edge

    path = tmp_path / "portable.pte"
    path.write_bytes(to_edge(torch.export.export(Add(), (torch.randn(4),))).to_executorch().buffer)
    result = run_call_overhead(str(path))
    assert result.returncode == 2
    assert "must hold exactly one executorch_openvino delegate" in result.stderr


@pytest.fixture(scope="module")
def whisper_program(tmp_path_factory):
    """A small Whisper as export_encoder_decoder lays it out: an encoder and a text_decoder
    method, each in its own delegate, the decoder's self-attention cache kept as state."""
    transformers = pytest.importorskip("transformers", reason="the huggingface extra installs transformers")
    from executorch_openvino.llm.encoder_decoder import export_encoder_decoder

    config = transformers.WhisperConfig(
        vocab_size=96,  # the runner's token ids are below 64
        d_model=64,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        num_mel_bins=80,
        max_source_positions=50,
        max_target_positions=32,
        decoder_start_token_id=1,
        eos_token_id=0,
        pad_token_id=0,
        bos_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.WhisperForConditionalGeneration(config).eval()
    manager = export_encoder_decoder(
        model, max_seq_len=16, compile_specs=openvino_compile_specs(inference_precision="f32")
    )
    path = tmp_path_factory.mktemp("whisper") / "whisper.pte"
    path.write_bytes(manager.buffer)
    return path


def test_decoder_steps_of_both_engines_give_the_same_logits(whisper_program):
    # Three rounds and a warm-up sequence each: OpenVINO alone agrees only when its state
    # is reset where ours starts a fresh sequence, and when the decoder's own delegate
    # was picked from the two in the program.
    result = run_call_overhead(
        str(whisper_program), "--method", "text_decoder", "--steps", "5", "--start", "3", "--rounds", "3"
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    for engine in ("ours", "openvino"):
        assert figures[engine]["calls"] == 3 * 5, engine
        assert len(figures[engine]["round_medians_us"]) == 3, engine
    assert figures["outputs_compared"] == 96
    assert figures["max_rel_diff"] <= 1e-5


def test_steps_of_a_method_without_token_and_position_inputs_are_refused(whisper_program):
    result = run_call_overhead(str(whisper_program), "--method", "encoder", "--steps", "4")
    assert result.returncode == 2
    assert "no int64 token input [1, 1] and position input [1]" in result.stderr
