"""Encoder-decoders (Whisper, T5) exported by ``export_encoder_decoder``: our delegate
against XNNPACK on the same layout, OpenVINO alone on the same IR and OpenVINO GenAI's
WhisperPipeline, in one process and alternating rounds.

    bash benchmarks/genai_env.sh                         # once: the venv whose optimum-cli GenAI's model needs
    pip install openvino-genai==2026.4.1.0 openvino-tokenizers==2026.4.1.0   # once, into this venv
    python benchmarks/seq2seq.py --quick                 # tiny shapes, 1 round: checks the whole script (~4 min)
    python benchmarks/seq2seq.py --models whisper-tiny whisper-base t5-small [--rounds 5] [--steps 32]

Models, random weights (``torch.manual_seed(0)``), nothing downloaded:
- whisper-tiny: d_model 384, 4 + 4 layers, 6 heads, FFN 1536; whisper-base: d_model
  512, 6 + 6 layers, 8 heads, FFN 2048; both with 80 mel bins, 1500 encoder positions
  (3000 frames, 30 s) and Whisper's 51865-token vocabulary, with a byte-level BPE
  tokenizer trained here on random words plus Whisper's special and timestamp tokens
  (the same ids as the real one's layout);
- t5-small: d_model 512, d_kv 64, d_ff 2048, 6 + 6 layers, 8 heads, vocabulary 32128,
  ``--source-len`` source tokens (random ids).
``--quick`` keeps the names but makes every model tiny (d_model 64, 2 + 2 layers; Whisper
keeps its 3000 frames, which optimum-cli's export assumes).

Measured per model, medians over ``--rounds`` alternating rounds:
- encoder: one call on a synthesized 10-second sound's log-mel features (Whisper) or the
  source tokens (T5), the median of ``--encoder-calls`` calls a round;
- decoder step: the decoder fed one token a call, the prompt (Whisper's start, language,
  task and no-timestamps tokens; T5's start token and greedy tokens) up to position
  ``START`` = 4 untimed, then ``--steps`` greedy steps each timed on its own, their
  median; the column "first call" is the call at position 0, which computes the
  cross-attention keys and values of the sequence in ours, OpenVINO alone, GenAI (whose
  first call takes the 4-token prompt at once) and XNNPACK tuned (its third method).
Engines:
- ours f32 / ours bf16: ``export_encoder_decoder`` with ``openvino_compile_specs(
  inference_precision=...)``, the .pte run through ``executorch.runtime``;
- XNNPACK: transformers' own exportable modules (``Seq2SeqLMEncoderExportableModule``
  for T5, the encoder called with Whisper's features for Whisper;
  ``Seq2SeqLMDecoderExportableModuleWithStaticCache`` with a static cache of
  ``--max-seq-len`` positions, its ``lm_head`` pointed at Whisper's ``proj_out`` as
  optimum-executorch does), exported with ``strict=True`` and lowered with
  ``XnnpackPartitioner``. This layout computes the cross-attention keys and values
  from the encoder's output again at every decoder step;
- XNNPACK tuned: the same with two changes that are not transformers' layout, to see
  what XNNPACK takes on the work our decoder and GenAI's do: transformers' eager
  attention instead of sdpa (torch's sdpa decomposition guards against fully masked
  rows with eq/any/logical_not/where over the whole attention matrix, which XNNPACK does
  not take and ExecuTorch's portable kernels run: more than half of XNNPACK's Whisper
  encoder time), and the
  decoder taking the cross-attention keys and values as inputs, computed once a
  sequence by a third method, instead of from the encoder's output at every step;
- OpenVINO alone f32 / bf16: the IR in our .pte's delegate blobs, compiled by
  ``openvino.Core`` with the configuration our runtime uses, run by infer requests
  (``reset_state`` at position 0);
- GenAI / GenAI f32 (Whisper): ``openvino_genai.WhisperPipeline`` on the same weights
  exported by optimum-intel's ``optimum-cli export openvino --task
  automatic-speech-recognition-with-past --weight-format fp32`` (run from the venv
  ``benchmarks/genai_env.sh`` makes, ``--optimum-cli``), at its default precision (bf16
  on CPUs with it) and with ``INFERENCE_PRECISION_HINT=f32``. Its times are its own
  perf metrics: ``whisper_raw_metrics.encode_inference_durations`` and
  ``decode_inference_durations`` after the prompt's (inference alone; the intervals
  between tokens that ``get_tpot`` averages, which add sampling, are printed too), with
  ``ignore_eos`` and ``max_new_tokens`` so that every round generates ``--steps`` + 1
  tokens.
Correctness: each engine's encoder output and first-step logits against eager
transformers (max |difference| / max |eager|), and its greedy tokens after the prompt
against ours f32's, up to ours' first end of sequence (GenAI's through a streamer in a
call of its own, untimed; GenAI computes its own features from the audio).
Memory: a fresh process per engine loads it (ours and XNNPACK from the .pte's path,
mapped) and runs the encoder and 8 decoder steps; its resident growth (and the
anonymous part of it) over its weight bytes (ours and XNNPACK: the .pte's size;
OpenVINO alone and GenAI: their IRs' .bin files); ours also with the load option
``give_back_memory`` (docs/runtime.md, "Memory after loading").
The machine's other load is printed per engine, and medians over the rounds it left
quiet: on a shared machine, rounds run beside other work are slower (``OthersLoad``).
Targets: decoder step <= 0.8x XNNPACK's time and <= 1.0x GenAI's (at the same
precision); encoder <= 1.0x OpenVINO alone on the same IR; resident growth <= 1.2x the
.pte's weight bytes.
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from common.bench import (  # noqa: E402
    OthersLoad,
    environment,
    growth_in_fresh_process,
    max_rel_err,
    package_version,
    print_header,
    print_table,
    round_order,
    setup_logging,
)
from common.delegate_ir import cpu_ops_of, ir_of  # noqa: E402
from common.optimum import OPTIMUM_CLI, optimum_export  # noqa: E402
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import openvino_compile_specs  # noqa: E402
from executorch_openvino.compile_specs import parse_compile_specs, with_defaults  # noqa: E402
from executorch_openvino.llm import speed_preset  # noqa: E402
from executorch_openvino.llm.encoder_decoder import DECODER_METHOD, ENCODER_METHOD, export_encoder_decoder  # noqa: E402

logger = logging.getLogger("benchmarks.seq2seq")

#: Decoder positions fed before the timed steps: Whisper's 4-token prompt.
START = 4
SAMPLING_RATE = 16000
CROSS_KV_METHOD = "cross_kv"
XNNPACK_TUNED = "XNNPACK tuned"

WHISPER_SPECIALS = ["<|endoftext|>", "<|startoftranscript|>"]
WHISPER_TASKS = ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>"]
WHISPER_NO_TIMESTAMPS = "<|notimestamps|>"
#: Whisper's 99 languages: <|en|> first, then stand-ins (only <|en|> is used).
WHISPER_LANGUAGES = 99
WHISPER_COMMON = dict(num_mel_bins=80, max_source_positions=1500, max_target_positions=448, vocab_size=51865)
SHAPES: Dict[str, Dict[str, Any]] = {
    "whisper-tiny": dict(
        WHISPER_COMMON,
        d_model=384,
        encoder_layers=4,
        decoder_layers=4,
        encoder_attention_heads=6,
        decoder_attention_heads=6,
        encoder_ffn_dim=1536,
        decoder_ffn_dim=1536,
    ),
    "whisper-base": dict(
        WHISPER_COMMON,
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
    ),
    "t5-small": dict(
        d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8, vocab_size=32128
    ),
}
# --quick: tiny layers, the same kinds of model. Whisper keeps 1500 positions (3000
# frames): optimum-cli's Whisper export traces with a 30-second window.
QUICK_SHAPES: Dict[str, Dict[str, Any]] = {
    "whisper-tiny": dict(
        WHISPER_COMMON,
        vocab_size=2000,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
    ),
    "t5-small": dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=1000),
}
QUICK_SHAPES["whisper-base"] = QUICK_SHAPES["whisper-tiny"]


def is_whisper(name: str) -> bool:
    return name.startswith("whisper")


# ---------------------------------------------------------------------------------------
# Models, tokenizers, inputs


def random_words(lines: int, seed: int = 0):
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(lines):
        yield " ".join("".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(12))


def whisper_tokenizer(vocab_size: int, max_source_positions: int, folder: Path) -> Dict[str, int]:
    """A byte-level BPE tokenizer trained here, then Whisper's special tokens and as many
    timestamp tokens as make `vocab_size` (the real layout: 50257 BPE tokens, 107 special
    ones, 1501 timestamps for 51865). Writes tokenizer.json; returns the special ids."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    languages = ["<|en|>"] + [f"<|l{index:02d}|>" for index in range(1, WHISPER_LANGUAGES)]
    specials = WHISPER_SPECIALS + languages + WHISPER_TASKS + [WHISPER_NO_TIMESTAMPS]
    timestamps = max_source_positions + 1
    bpe_size = vocab_size - len(specials) - timestamps
    if bpe_size < 300:  # a tiny vocabulary: fewer languages and timestamps
        specials = WHISPER_SPECIALS + ["<|en|>"] + WHISPER_TASKS + [WHISPER_NO_TIMESTAMPS]
        bpe_size = max(300, vocab_size // 2)
        timestamps = vocab_size - bpe_size - len(specials)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=bpe_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(random_words(max(2000, bpe_size)), trainer)
    if tokenizer.get_vocab_size() != bpe_size:
        raise RuntimeError(f"the BPE tokenizer has {tokenizer.get_vocab_size()} tokens, not {bpe_size}")
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in specials])
    stamps = [f"<|{index * 0.02:.2f}|>" for index in range(timestamps)]
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in stamps])
    if tokenizer.get_vocab_size() != vocab_size:
        raise RuntimeError(f"the tokenizer has {tokenizer.get_vocab_size()} tokens, not {vocab_size}")
    tokenizer.save(str(folder / "tokenizer.json"))
    return {token: tokenizer.token_to_id(token) for token in specials}


def save_whisper(shape: Dict[str, Any], folder: Path) -> Tuple[torch.nn.Module, List[int]]:
    """A Whisper folder as the hub gives one (model, generation config with Whisper's
    fields, tokenizer, feature extractor); returns the model and the decoder's prompt."""
    import transformers

    folder.mkdir(parents=True, exist_ok=True)
    ids = whisper_tokenizer(shape["vocab_size"], shape["max_source_positions"], folder)
    eos, start = ids["<|endoftext|>"], ids["<|startoftranscript|>"]
    tokenizer = transformers.WhisperTokenizer(
        tokenizer_file=str(folder / "tokenizer.json"),
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
    )
    frames = 2 * shape["max_source_positions"]
    features = transformers.WhisperFeatureExtractor(
        feature_size=shape["num_mel_bins"], sampling_rate=SAMPLING_RATE, chunk_length=frames * 160 // SAMPLING_RATE
    )
    transformers.WhisperProcessor(feature_extractor=features, tokenizer=tokenizer).save_pretrained(folder)
    config = transformers.WhisperConfig(
        **shape, decoder_start_token_id=start, eos_token_id=eos, pad_token_id=eos, bos_token_id=eos
    )
    torch.manual_seed(0)
    model = transformers.WhisperForConditionalGeneration(config).eval()
    model.generation_config = transformers.GenerationConfig(
        decoder_start_token_id=start,
        eos_token_id=eos,
        pad_token_id=eos,
        bos_token_id=eos,
        no_timestamps_token_id=ids[WHISPER_NO_TIMESTAMPS],
        prev_sot_token_id=ids["<|startofprev|>"],
        lang_to_id={"<|en|>": ids["<|en|>"]},
        task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        is_multilingual=True,
        max_initial_timestamp_index=50,
        max_length=shape["max_target_positions"],
        # No logit processing, so that GenAI's greedy tokens can be compared with ours.
        begin_suppress_tokens=[],
        suppress_tokens=[],
    )
    model.save_pretrained(folder)
    prompt = [start, ids["<|en|>"], ids["<|transcribe|>"], ids[WHISPER_NO_TIMESTAMPS]]
    return model, prompt


def t5_model(shape: Dict[str, Any]) -> Tuple[torch.nn.Module, List[int]]:
    import transformers

    config = transformers.T5Config(**shape, decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    # sdpa, as export_encoder_decoder loads a folder (T5 runs its own attention either way).
    model.config._attn_implementation = "sdpa"
    return model, [0]


def synthesized_audio(seconds: float = 10.0) -> np.ndarray:
    """A voiced sound: harmonics of a gliding pitch under a syllable-rate envelope, and noise."""
    rng = np.random.default_rng(0)
    time_s = np.arange(int(seconds * SAMPLING_RATE)) / SAMPLING_RATE
    pitch = 120 + 40 * np.sin(2 * np.pi * 0.3 * time_s)
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLING_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = 0.5 * (1 + np.sin(2 * np.pi * 4 * time_s)) ** 2
    return (0.1 * voiced * envelope + 0.005 * rng.standard_normal(time_s.size)).astype(np.float32)


@dataclass
class Workload:
    name: str
    model: torch.nn.Module
    inputs: torch.Tensor  # the encoder's: Whisper's features or T5's token ids
    prompt: List[int]
    folder: Optional[Path] = None  # the saved Whisper folder (optimum-cli's input)
    audio: Optional[List[float]] = None  # GenAI's input, the audio the features come from

    @property
    def whisper(self) -> bool:
        return is_whisper(self.name)

    @property
    def weight_bytes(self) -> int:
        return sum(p.numel() * p.element_size() for p in self.model.parameters())


def make_workload(name: str, quick: bool, source_len: int, work: Path) -> Workload:
    import transformers

    shape = (QUICK_SHAPES if quick else SHAPES)[name]
    if is_whisper(name):
        folder = work / name
        model, prompt = save_whisper(shape, folder)
        audio = synthesized_audio()
        extractor = transformers.WhisperFeatureExtractor.from_pretrained(folder)
        features = extractor(audio, sampling_rate=SAMPLING_RATE, return_tensors="pt").input_features
        return Workload(name, model, features, prompt, folder, audio.tolist())
    model, prompt = t5_model(shape)
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randint(3, shape["vocab_size"], (1, source_len), generator=generator)
    tokens[0, -1] = 1  # T5's end of sequence closes the source
    return Workload(name, model, tokens, prompt)


# ---------------------------------------------------------------------------------------
# Programs


def compile_specs_of(precision: str) -> list:
    """Our compile specs for a --precisions entry: an inference precision, or "speed",
    the LLM export's --speed preset for float weights (GenAI's CPU defaults for them: bf16
    and an f16 KV cache)."""
    if precision == "speed":
        return openvino_compile_specs(**speed_preset(compressed_weights=False))
    return openvino_compile_specs(inference_precision=precision)


def ours(load: Workload, precision: str, max_seq_len: int, max_source_len: int) -> ExecutorchProgramManager:
    begin = time.perf_counter()
    manager = export_encoder_decoder(
        load.model,
        max_seq_len=max_seq_len,
        max_source_len=None if load.whisper else max_source_len,
        compile_specs=compile_specs_of(precision),
    )
    manager.buffer  # noqa: B018 - serializes now
    for method in (ENCODER_METHOD, DECODER_METHOD):
        left = cpu_ops_of(manager, method)
        if left:
            logger.warning("%s ours %s: %s left to ExecuTorch's CPU kernels: %s", load.name, precision, method, left)
    logger.info("%s: ours %s exported in %.1f s", load.name, precision, time.perf_counter() - begin)
    return manager


class WhisperEncoder(torch.nn.Module):
    """Whisper's encoder called with its features (transformers' encoder wrapper passes
    ``input_ids=``, which Whisper's encoder does not take)."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_features).last_hidden_state


def transformers_decoder(model: torch.nn.Module, max_seq_len: int) -> torch.nn.Module:
    """transformers' Seq2SeqLMDecoderExportableModuleWithStaticCache, its lm_head Whisper's
    proj_out for Whisper (as optimum-executorch's), and for T5 the scaling by
    d_model ** -0.5 that T5ForConditionalGeneration applies before its tied lm_head and
    transformers' module leaves out (its logits are otherwise d_model ** 0.5 times eager's)."""
    from transformers.integrations.executorch import Seq2SeqLMDecoderExportableModuleWithStaticCache

    if not hasattr(model, "lm_head"):
        model.lm_head = model.proj_out  # `model` is the benchmark's own copy
    decoder = Seq2SeqLMDecoderExportableModuleWithStaticCache(model, max_static_cache_length=max_seq_len, batch_size=1)
    if getattr(model.config, "scale_decoder_outputs", False):
        decoder.lm_head = ScaledHead(model.lm_head, model.model_dim**-0.5)
    return decoder.eval()


class ScaledHead(torch.nn.Module):
    def __init__(self, head: torch.nn.Module, scale: float) -> None:
        super().__init__()
        self.head = head
        self.scale = scale

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head(hidden * self.scale)


class CrossKeysValues(torch.nn.Module):
    """The cross-attention keys and values of every decoder layer, [1, heads, positions,
    head size] each, from the encoder's output: the layers' own key and value projections
    (Whisper's ``encoder_attn.k_proj``/``v_proj``, T5's ``EncDecAttention.k``/``v``)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        decoder = model.get_decoder()
        if hasattr(decoder, "layers"):  # Whisper
            attentions = [layer.encoder_attn for layer in decoder.layers]
            self.projections = torch.nn.ModuleList(
                torch.nn.ModuleList([attention.k_proj, attention.v_proj]) for attention in attentions
            )
            self.head_size = attentions[0].head_dim
        else:  # T5
            attentions = [block.layer[1].EncDecAttention for block in decoder.block]
            self.projections = torch.nn.ModuleList(
                torch.nn.ModuleList([attention.k, attention.v]) for attention in attentions
            )
            self.head_size = attentions[0].key_value_proj_dim

    def forward(self, encoder_hidden_states: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        batch, positions = encoder_hidden_states.shape[:2]
        outputs = []
        for keys, values in self.projections:
            for projection in (keys, values):
                projected = projection(encoder_hidden_states).view(batch, positions, -1, self.head_size)
                outputs.append(projected.transpose(1, 2).contiguous())
        return tuple(outputs)


class DecoderWithCrossKeysValues(torch.nn.Module):
    """transformers' decoder module with the cross-attention keys and values given as
    inputs (computed once a sequence by CrossKeysValues) instead of computed from the
    encoder's output at every step."""

    def __init__(self, decoder: torch.nn.Module) -> None:
        super().__init__()
        self.inner = decoder

    def forward(self, decoder_input_ids, encoder_hidden_states, cache_position, *cross: torch.Tensor):
        inner = self.inner
        cache = inner.cache
        for layer in inner.static_cache.layers:
            layer.cumulative_length.copy_(cache_position[0])
        for index, layer in enumerate(cache.cross_attention_cache.layers):
            layer.keys, layer.values = cross[2 * index], cross[2 * index + 1]
            layer.is_initialized = True
            cache.is_updated[index] = True
        try:
            outputs = inner.decoder(
                input_ids=decoder_input_ids,
                encoder_hidden_states=encoder_hidden_states,
                past_key_values=cache,
                use_cache=True,
            )
        finally:
            for index, layer in enumerate(cache.cross_attention_cache.layers):
                layer.keys = layer.values = None
                layer.is_initialized = False
                cache.is_updated[index] = False
        return inner.lm_head(outputs[0])


def xnnpack(load: Workload, max_seq_len: int, max_source_len: int, tuned: bool) -> ExecutorchProgramManager:
    """transformers' layout lowered with XnnpackPartitioner; `tuned`: with eager attention,
    and a third method computing the cross-attention keys and values that the decoder
    then takes as inputs."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from transformers.integrations.executorch import Seq2SeqLMEncoderExportableModule

    begin = time.perf_counter()
    model = copy.deepcopy(load.model)
    if tuned:
        model.set_attn_implementation("eager")
    decoder = transformers_decoder(model, max_seq_len)
    with torch.no_grad():
        if load.whisper:
            encoder = WhisperEncoder(model.get_encoder()).eval()
            encoder_dims: Any = None
            decoder_dims: Any = None
        else:
            encoder = Seq2SeqLMEncoderExportableModule(model.get_encoder()).eval()
            source = torch.export.Dim("encoder_seq_length", max=max_source_len)
            encoder_dims = {"input_ids": {1: source}}
            hidden_dim = torch.export.Dim("encoder_hidden_seq_length", max=max_source_len)
            decoder_dims = {"decoder_input_ids": None, "encoder_hidden_states": {1: hidden_dim}, "cache_position": None}
        programs = {
            ENCODER_METHOD: torch.export.export(encoder, (load.inputs,), dynamic_shapes=encoder_dims, strict=True)
        }
        hidden = encoder(load.inputs)
        step = (torch.tensor([[load.prompt[0]]]), hidden, torch.tensor([0]))
        if tuned:
            cross_module = CrossKeysValues(model).eval()
            cross = cross_module(hidden)
            cross_dims = None if decoder_dims is None else ({1: hidden_dim},)
            programs[CROSS_KV_METHOD] = torch.export.export(
                cross_module, (hidden,), dynamic_shapes=cross_dims, strict=True
            )
            wrapped = DecoderWithCrossKeysValues(decoder).eval()
            dims = None
            if decoder_dims is not None:
                dims = (None, {1: hidden_dim}, None, tuple({2: hidden_dim} for _ in cross))
            programs[DECODER_METHOD] = torch.export.export(wrapped, (*step, *cross), dynamic_shapes=dims, strict=True)
        else:
            dims = None if decoder_dims is None else tuple(decoder_dims.values())
            programs[DECODER_METHOD] = torch.export.export(decoder, step, dynamic_shapes=dims, strict=True)
    manager = to_edge_transform_and_lower(programs, partitioner=[XnnpackPartitioner()]).to_executorch()
    manager.buffer  # noqa: B018
    for method in programs:
        logger.info(
            "%s XNNPACK%s %s: CPU ops %s", load.name, " tuned" if tuned else "", method, cpu_ops_of(manager, method)
        )
    logger.info("%s: XNNPACK%s lowered in %.1f s", load.name, " tuned" if tuned else "", time.perf_counter() - begin)
    return manager


def genai_model(load: Workload, out: Path, optimum_cli: str) -> Path:
    """optimum-intel's export of the saved Whisper folder (f32 weights), with the
    tokenizer and detokenizer IRs GenAI needs."""
    if (out / "openvino_decoder_model.xml").is_file():
        return out
    return optimum_export(optimum_cli, load.folder, "automatic-speech-recognition-with-past", out)


# ---------------------------------------------------------------------------------------
# Engines: encode(inputs) -> hidden states; step(token, hidden, position) -> logits


def as_torch(tensor: ov.Tensor) -> torch.Tensor:
    if tensor.element_type == ov.Type.bf16:
        return torch.from_numpy(tensor.data.view("int16").copy()).view(torch.bfloat16).float()
    return torch.from_numpy(tensor.data.copy())


class ExecutorchEngine:
    def __init__(self, path: Path) -> None:
        self.program = Runtime.get().load_program(path)
        self.encoder = self.program.load_method(ENCODER_METHOD)
        self.decoder = self.program.load_method(DECODER_METHOD)
        self.cross = self.program.load_method(CROSS_KV_METHOD) if CROSS_KV_METHOD in self.program.method_names else None
        self.cross_values: List[torch.Tensor] = []

    def encode(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.encoder.execute([inputs])[0]

    def step(self, token: int, hidden: torch.Tensor, position: int) -> torch.Tensor:
        if self.cross is not None and position == 0:
            self.cross_values = list(self.cross.execute([hidden]))
        extra = self.cross_values if self.cross is not None else []
        return self.decoder.execute([torch.tensor([[token]]), hidden, torch.tensor([position]), *extra])[0]


class OpenvinoAloneEngine:
    """The IRs of our .pte's two methods compiled by openvino.Core with our runtime's
    configuration; the decoder's state emptied at position 0, as our runtime does."""

    def __init__(self, manager: ExecutorchProgramManager, precision: str) -> None:
        config = parse_compile_specs(with_defaults(compile_specs_of(precision)))
        self.config = config.compile_config()
        core = ov.Core()
        self.models = {method: ir_of(manager, method) for method in (ENCODER_METHOD, DECODER_METHOD)}
        self.encoder = core.compile_model(self.models[ENCODER_METHOD], "CPU", self.config).create_infer_request()
        compiled = core.compile_model(self.models[DECODER_METHOD], "CPU", self.config)
        self.decoder = compiled.create_infer_request()
        self.decoder_inputs = [port.get_names() for port in compiled.inputs]

    def encode(self, inputs: torch.Tensor) -> np.ndarray:
        self.encoder.infer([inputs.numpy()], share_inputs=True)
        return self.encoder.get_output_tensor(0).data.copy()

    def step(self, token: int, hidden: np.ndarray, position: int) -> torch.Tensor:
        if position == 0:
            self.decoder.reset_state()
        values = {
            "decoder_input_ids": np.array([[token]], dtype=np.int64),
            "encoder_hidden_states": hidden,
            "cache_position": np.array([position], dtype=np.int64),
        }
        feed = []
        for names in self.decoder_inputs:
            [name] = [name for name in names if name in values]
            feed.append(values[name])
        self.decoder.infer(feed, share_inputs=True)
        return as_torch(self.decoder.get_output_tensor(0))

    def save(self, folder: Path) -> Dict[str, Path]:
        """The two IRs as files, for a fresh process to read."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = {}
        for method, model in self.models.items():
            paths[method] = folder / f"{method}.xml"
            ov.save_model(model, paths[method], compress_to_fp16=False)
        return paths


class GenaiEngine:
    """openvino_genai.WhisperPipeline: one generate a round, its own per-call times."""

    def __init__(self, folder: Path, properties: Dict[str, str]) -> None:
        import openvino_genai

        self.pipeline = openvino_genai.WhisperPipeline(str(folder), "CPU", **properties)
        self.config = self.pipeline.get_generation_config()
        self.config.language = "<|en|>"
        self.config.task = "transcribe"
        self.config.return_timestamps = False
        self.config.ignore_eos = True

    def generate(self, audio: List[float], steps: int) -> Tuple[float, List[float], float, float]:
        """(encoder ms, decoder call ms from the prompt's on, features ms, median ms between
        tokens) of `steps` + 1 new tokens."""
        self.config.max_new_tokens = steps + 1
        result = self.pipeline.generate(audio, self.config)
        raw = result.perf_metrics.whisper_raw_metrics
        encoder_ms = raw.encode_inference_durations[0] / 1e3
        decoder_ms = [duration / 1e3 for duration in raw.decode_inference_durations]
        if len(decoder_ms) != steps + 1:
            raise RuntimeError(f"GenAI made {len(decoder_ms)} decoder calls, not {steps + 1}")
        interval_ms = statistics.median(result.perf_metrics.raw_metrics.m_durations) / 1e3
        return encoder_ms, decoder_ms, raw.features_extraction_durations[0] / 1e3, interval_ms

    def tokens(self, audio: List[float], count: int) -> List[int]:
        """The ids of `count` new tokens, through a streamer (untimed: it runs Python a token)."""
        import openvino_genai

        received: List[int] = []

        class Collect(openvino_genai.StreamerBase):
            def write(self, token):
                received.extend([token] if isinstance(token, int) else list(token))
                return openvino_genai.StreamingStatus.RUNNING

            def end(self):
                pass

        self.config.max_new_tokens = count
        self.pipeline.generate(audio, self.config, Collect())
        return received


# ---------------------------------------------------------------------------------------
# Timing


@dataclass
class Samples:
    encoder_ms: List[float] = field(default_factory=list)  # one value a round
    step_ms: List[float] = field(default_factory=list)  # one median a round
    first_ms: List[float] = field(default_factory=list)
    features_ms: List[float] = field(default_factory=list)
    interval_ms: List[float] = field(default_factory=list)  # GenAI's time between tokens
    others_load: List[float] = field(default_factory=list)  # share of the cores others kept busy, a round
    tokens: List[int] = field(default_factory=list)


def next_token(logits: torch.Tensor) -> int:
    return int(logits.reshape(-1, logits.shape[-1])[-1].float().argmax())


def run_round(engine: Any, load: Workload, steps: int, encoder_calls: int) -> Tuple[float, float, float, List[int]]:
    """(encoder ms, median step ms, first call ms, tokens) of one round of an engine
    driven step by step."""
    encoder = []
    for _ in range(encoder_calls):
        begin = time.perf_counter_ns()
        hidden = engine.encode(load.inputs)
        encoder.append((time.perf_counter_ns() - begin) / 1e6)
    tokens = [load.prompt[0]]
    times = []
    for position in range(START + steps):
        begin = time.perf_counter_ns()
        logits = engine.step(tokens[position], hidden, position)
        times.append((time.perf_counter_ns() - begin) / 1e6)
        tokens.append(load.prompt[position + 1] if position + 1 < len(load.prompt) else next_token(logits))
    return statistics.median(encoder), statistics.median(times[START:]), times[0], tokens


def measure(engines: Dict[str, Any], load: Workload, options: argparse.Namespace) -> Dict[str, Samples]:
    samples = {name: Samples() for name in engines}
    for engine in engines.values():  # warm-up: one short sequence each
        if isinstance(engine, GenaiEngine):
            engine.generate(load.audio, 4)
        else:
            run_round(engine, load, 4, 1)
    others = OthersLoad()
    for round_index in range(options.rounds):
        for name in round_order(list(engines), round_index):
            engine, sample = engines[name], samples[name]
            others.since_last()
            if isinstance(engine, GenaiEngine):
                encoder_ms, decoder_ms, features_ms, interval_ms = engine.generate(load.audio, options.steps)
                sample.encoder_ms.append(encoder_ms)
                sample.first_ms.append(decoder_ms[0])
                sample.step_ms.append(statistics.median(decoder_ms[1:]))
                sample.features_ms.append(features_ms)
                sample.interval_ms.append(interval_ms)
            else:
                encoder_ms, step_ms, first_ms, tokens = run_round(engine, load, options.steps, options.encoder_calls)
                sample.encoder_ms.append(encoder_ms)
                sample.step_ms.append(step_ms)
                sample.first_ms.append(first_ms)
                sample.tokens = tokens
            sample.others_load.append(others.since_last())
        logger.info("%s: round %d of %d done", load.name, round_index + 1, options.rounds)
    return samples


def errors_against_eager(engine: Any, load: Workload, eager_hidden: torch.Tensor, eager_logits: torch.Tensor):
    hidden = engine.encode(load.inputs)
    logits = engine.step(load.prompt[0], hidden, 0)
    hidden = torch.from_numpy(hidden) if isinstance(hidden, np.ndarray) else hidden
    return max_rel_err(hidden, eager_hidden), max_rel_err(logits.reshape(-1), eager_logits)


def eager_reference(load: Workload) -> Tuple[torch.Tensor, torch.Tensor]:
    with torch.no_grad():
        encoder = load.model.get_encoder()
        hidden = encoder(load.inputs).last_hidden_state
        from transformers.modeling_outputs import BaseModelOutput

        logits = load.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
            decoder_input_ids=torch.tensor([[load.prompt[0]]]),
        ).logits[0, -1]
    return hidden, logits


# ---------------------------------------------------------------------------------------
# Memory in fresh processes

_SETUP = (
    "import os; os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE'); import torch, numpy as np;"
    "import executorch_openvino; from executorch.runtime import Runtime"
)


def executorch_growth(
    path: Path, inputs_code: str, prompt: int, cross: bool, give_back: bool = False
) -> Tuple[float, float]:
    work = (
        f"executorch_openvino.set_load_options(give_back_memory={give_back});"
        f"p = Runtime.get().load_program({str(path)!r});"
        "e = p.load_method('encoder'); d = p.load_method('text_decoder');"
        f"c = p.load_method({CROSS_KV_METHOD!r}) if {cross} else None;"
        f"h = e.execute([{inputs_code}])[0]; extra = list(c.execute([h])) if c else [];"
        f"[d.execute([torch.tensor([[{prompt}]]), h, torch.tensor([q]), *extra]) for q in range(8)]"
    )
    resident, anonymous, _ = growth_in_fresh_process(_SETUP, work)
    return resident, anonymous


def openvino_growth(
    paths: Dict[str, Path], config: Dict[str, Any], inputs_code: str, prompt: int
) -> Tuple[float, float]:
    work = (
        f"import openvino as ov; core = ov.Core(); config = {config!r};"
        f"e = core.compile_model(core.read_model({str(paths[ENCODER_METHOD])!r}), 'CPU', config);"
        "e = e.create_infer_request();"
        f"dc = core.compile_model(core.read_model({str(paths[DECODER_METHOD])!r}), 'CPU', config);"
        "d = dc.create_infer_request();"
        f"e.infer([({inputs_code}).numpy()]); h = e.get_output_tensor(0).data.copy();"
        "names = [port.get_names() for port in dc.inputs];"
        f"feed = lambda q: [{{'decoder_input_ids': np.array([[{prompt}]]), 'encoder_hidden_states': h,"
        "'cache_position': np.array([q])}[[n for n in ns if n in ('decoder_input_ids', 'encoder_hidden_states',"
        "'cache_position')][0]] for ns in names];"
        "[d.infer(feed(q)) for q in range(8)]"
    )
    resident, anonymous, _ = growth_in_fresh_process(_SETUP, work)
    return resident, anonymous


def genai_growth(folder: Path, properties: Dict[str, str]) -> Tuple[float, float]:
    work = (
        f"import openvino_genai; pipe = openvino_genai.WhisperPipeline({str(folder)!r}, 'CPU', **{properties!r});"
        "config = pipe.get_generation_config(); config.max_new_tokens = 8; config.ignore_eos = True;"
        "config.language = '<|en|>'; config.task = 'transcribe';"
        "pipe.generate(np.zeros(16000, dtype=np.float32), config)"
    )
    resident, anonymous, _ = growth_in_fresh_process(_SETUP, work)
    return resident, anonymous


def bin_bytes(folder: Path, names: Sequence[str]) -> int:
    return sum((folder / name).stat().st_size for name in names)


# ---------------------------------------------------------------------------------------


@dataclass
class ModelResult:
    name: str
    samples: Dict[str, Samples]
    errors: Dict[str, Tuple[float, float]]
    agreements: Dict[str, Tuple[int, int]]  # greedy tokens equal to ours f32's, of those compared
    memory: Dict[str, Tuple[float, float, float]]  # resident MB, anonymous MB, weight MB
    sizes: Dict[str, float]  # .pte MB
    weights_mb: float
    notes: List[str]


def run_model(name: str, options: argparse.Namespace, work: Path) -> ModelResult:
    load = make_workload(name, options.quick, options.source_len, work)
    weights_mb = load.weight_bytes / 1e6
    logger.info("%s: %.1f MB of f32 weights, encoder input %s", name, weights_mb, tuple(load.inputs.shape))
    notes: List[str] = []
    managers = {f"ours {p}": ours(load, p, options.max_seq_len, options.max_source_len) for p in options.precisions}
    paths: Dict[str, Path] = {}
    sizes: Dict[str, float] = {}
    weight_mb: Dict[str, float] = {}
    for engine_name, manager in managers.items():
        paths[engine_name] = work / f"{name}_{engine_name.replace(' ', '_')}.pte"
        paths[engine_name].write_bytes(manager.buffer)
        sizes[engine_name] = paths[engine_name].stat().st_size / 1e6
        weight_mb[engine_name] = sizes[engine_name]
    if "xnnpack" in options.engines:
        for tuned in (False, True):
            engine_name = XNNPACK_TUNED if tuned else "XNNPACK"
            try:
                manager = xnnpack(load, options.max_seq_len, options.max_source_len, tuned)
            except Exception as error:  # noqa: BLE001 - the other engines still run
                logger.exception("%s: %s failed", name, engine_name)
                notes.append(f"{engine_name}: {type(error).__name__}: {str(error).splitlines()[0][:200]}")
                continue
            paths[engine_name] = work / f"{name}_{engine_name.replace(' ', '_')}.pte"
            paths[engine_name].write_bytes(manager.buffer)
            sizes[engine_name] = weight_mb[engine_name] = paths[engine_name].stat().st_size / 1e6
            del manager
    genai_folder = None
    if load.whisper and "genai" in options.engines:
        try:
            genai_folder = genai_model(load, work / f"{name}_genai", options.optimum_cli)
            weight_mb["GenAI"] = weight_mb["GenAI f32"] = (
                bin_bytes(genai_folder, ["openvino_encoder_model.bin", "openvino_decoder_model.bin"]) / 1e6
            )
        except Exception as error:  # noqa: BLE001
            logger.exception("%s: GenAI's model failed", name)
            notes.append(f"GenAI: {type(error).__name__}: {str(error).splitlines()[0][:300]}")

    engines: Dict[str, Any] = {}
    for engine_name, path in paths.items():
        engines[engine_name] = ExecutorchEngine(path)
    alone: Dict[str, OpenvinoAloneEngine] = {}
    if "openvino" in options.engines:
        for precision in options.precisions:
            alone[precision] = OpenvinoAloneEngine(managers[f"ours {precision}"], precision)
            engines[f"OpenVINO alone {precision}"] = alone[precision]
    genai_properties = {"GenAI": {}, "GenAI f32": {"INFERENCE_PRECISION_HINT": "f32"}}
    if genai_folder is not None:
        for engine_name, properties in genai_properties.items():
            engines[engine_name] = GenaiEngine(genai_folder, properties)

    eager_hidden, eager_logits = eager_reference(load)
    errors = {
        engine_name: errors_against_eager(engine, load, eager_hidden, eager_logits)
        for engine_name, engine in engines.items()
        if not isinstance(engine, GenaiEngine)
    }
    samples = measure(engines, load, options)
    agreements: Dict[str, Tuple[int, int]] = {}
    if "ours f32" in samples:
        # Greedy tokens after the prompt against ours f32's, up to ours' first end of sequence
        # (GenAI ignores it; ours' loop here does not stop at it either).
        reference = samples["ours f32"].tokens[len(load.prompt) :]
        eos = load.model.generation_config.eos_token_id
        compared = reference.index(eos) if eos in reference else len(reference)
        for engine_name, engine in engines.items():
            if engine_name == "ours f32":
                continue
            if isinstance(engine, GenaiEngine):
                tokens = engine.tokens(load.audio, len(reference))
            else:
                tokens = samples[engine_name].tokens[len(load.prompt) :]
            agree = next((i for i, (a, b) in enumerate(zip(tokens, reference)) if a != b), min(len(tokens), compared))
            agreements[engine_name] = (min(agree, compared), compared)

    memory: Dict[str, Tuple[float, float, float]] = {}
    if not options.no_memory:
        engines.clear()
        alone_paths = {p: engine.save(work / f"{name}_openvino_{p}") for p, engine in alone.items()}
        alone_configs = {p: engine.config for p, engine in alone.items()}
        alone.clear()
        if load.whisper:
            inputs_code = f"torch.zeros{tuple(load.inputs.shape)}"
        else:
            inputs_code = f"torch.ones({tuple(load.inputs.shape)}, dtype=torch.long)"
        for engine_name, path in paths.items():
            cross = engine_name == XNNPACK_TUNED
            memory[engine_name] = (*executorch_growth(path, inputs_code, load.prompt[0], cross), weight_mb[engine_name])
            if engine_name.startswith("ours"):
                growth = executorch_growth(path, inputs_code, load.prompt[0], False, give_back=True)
                memory[f"{engine_name}, give_back_memory"] = (*growth, weight_mb[engine_name])
        for precision, ir_paths in alone_paths.items():
            ir_mb = sum(p.with_suffix(".bin").stat().st_size for p in ir_paths.values()) / 1e6
            growth = openvino_growth(ir_paths, alone_configs[precision], inputs_code, load.prompt[0])
            memory[f"OpenVINO alone {precision}"] = (*growth, ir_mb)
        if genai_folder is not None:
            for engine_name, properties in genai_properties.items():
                memory[engine_name] = (*genai_growth(genai_folder, properties), weight_mb[engine_name])
        logger.info("%s: memory measured", name)
    return ModelResult(name, samples, errors, agreements, memory, sizes, weights_mb, notes)


def median(values: List[float]) -> float:
    return statistics.median(values) if values else float("nan")


#: A round during which other processes kept less than this share of the cores busy.
QUIET = 0.05


def quiet(sample: Samples, values: List[float]) -> List[float]:
    """The values of the rounds run on a quiet machine (others' load below QUIET)."""
    return [value for value, load in zip(values, sample.others_load) if load < QUIET]


def quiet_cell(sample: Samples, values: List[float]) -> str:
    kept = quiet(sample, values)
    return f"{median(kept):.4g} ({len(kept)})" if kept else "- (0)"


def report(results: List[ModelResult], options: argparse.Namespace) -> None:
    env = environment()
    env["openvino_genai"] = package_version("openvino-genai")
    env["transformers"] = package_version("transformers")
    print_header(
        f"Encoder-decoders, random weights{' (--quick: tiny shapes)' if options.quick else ''}: encoder call and "
        f"decoder step (positions {START}-{START + options.steps - 1}, cache of {options.max_seq_len}), "
        f"{options.rounds} alternating rounds, medians",
        env,
    )
    print(
        f"openvino-genai {env['openvino_genai']}, transformers {env['transformers']}; "
        f"T5 source {options.source_len} tokens\n"
    )
    rows = []
    for result in results:
        for engine_name, sample in result.samples.items():
            error = result.errors.get(engine_name)
            agree = result.agreements.get(engine_name)
            rows.append(
                [
                    result.name,
                    engine_name,
                    median(sample.encoder_ms),
                    median(sample.step_ms),
                    f"{min(sample.step_ms):.3g}-{max(sample.step_ms):.3g}",
                    quiet_cell(sample, sample.encoder_ms),
                    quiet_cell(sample, sample.step_ms),
                    median(sample.first_ms),
                    error[0] if error else "-",
                    error[1] if error else "-",
                    f"{agree[0]}/{agree[1]}" if agree else "-",
                    result.sizes.get(engine_name, "-"),
                    f"{100 * median(sample.others_load):.0f}%",
                ]
            )
    print_table(
        [
            "model",
            "engine",
            "encoder ms",
            "decoder step ms",
            "rounds' steps",
            "quiet: encoder",
            "quiet: step",
            "first call ms",
            "encoder err",
            "logits err",
            "tokens = ours f32",
            ".pte MB",
            "others' load",
        ],
        rows,
    )
    print(
        f"rounds' steps: the fastest and slowest round's median step; quiet: the median over the rounds (how many) "
        f"during which other processes kept less than {QUIET:.0%} of the cores busy; "
        "errors: max |engine - eager| / max |eager| "
        "of the encoder's output and the first step's logits; tokens: greedy tokens after the prompt equal to ours "
        "f32's, of those before ours' first end of sequence; others' load: the share of the cores other processes "
        "kept busy during the engine's rounds (median)"
    )
    for result in results:
        for name in ("GenAI", "GenAI f32"):
            if name in result.samples:
                sample = result.samples[name]
                print(
                    f"{result.name} {name}: feature extraction {median(sample.features_ms):.1f} ms (not in its "
                    f"encoder time); {median(sample.interval_ms):.3f} ms between tokens (get_tpot's intervals, "
                    "with sampling)"
                )

    memory_rows = []
    for result in results:
        for engine_name, (resident, anonymous, weights) in result.memory.items():
            memory_rows.append([result.name, engine_name, weights, resident, anonymous, resident / weights])
    if memory_rows:
        print("\nResident memory: a fresh process loads the engine, runs the encoder and 8 decoder steps")
        print_table(
            ["model", "engine", "weight MB", "RSS growth MB", "anonymous MB", "RSS growth / weights"], memory_rows
        )

    target_rows = []
    for result in results:
        step = {name: (median(s.step_ms), median(quiet(s, s.step_ms))) for name, s in result.samples.items()}
        encoder = {name: (median(s.encoder_ms), median(quiet(s, s.encoder_ms))) for name, s in result.samples.items()}
        checks = [
            ("decoder step vs XNNPACK", "ours f32", "XNNPACK", step, 0.8),
            ("decoder step vs XNNPACK tuned", "ours f32", XNNPACK_TUNED, step, 0.8),
            ("decoder step vs GenAI f32", "ours f32", "GenAI f32", step, 1.0),
            ("decoder step vs GenAI (default)", "ours bf16", "GenAI", step, 1.0),
            ("encoder vs OpenVINO alone f32", "ours f32", "OpenVINO alone f32", encoder, 1.0),
            ("encoder vs OpenVINO alone bf16", "ours bf16", "OpenVINO alone bf16", encoder, 1.0),
        ]
        for label, ours_name, other, values, bound in checks:
            if ours_name in values and other in values:
                ratio = values[ours_name][0] / values[other][0]
                quiet_ratio = values[ours_name][1] / values[other][1]
                target_rows.append(
                    [
                        result.name,
                        label,
                        ours_name,
                        ratio,
                        quiet_ratio if quiet_ratio == quiet_ratio else "-",  # NaN: no quiet round of one
                        f"<= {bound}",
                        "yes" if ratio <= bound else "NO",
                    ]
                )
        for ours_name in ("ours f32", "ours bf16", "ours f32, give_back_memory", "ours bf16, give_back_memory"):
            if ours_name in result.memory:
                resident, _, weights = result.memory[ours_name]
                ratio = resident / weights
                target_rows.append(
                    [
                        result.name,
                        "RSS growth vs .pte weights",
                        ours_name,
                        ratio,
                        "-",
                        "<= 1.2",
                        "yes" if ratio <= 1.2 else "NO",
                    ]
                )
    print("\nTargets: ours' time (or memory) over the other's")
    print_table(["model", "target", "ours", "ratio", "ratio, quiet rounds", "bound", "met"], target_rows)
    for result in results:
        for note in result.notes:
            print(f"{result.name}: {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(SHAPES), default=["whisper-tiny", "t5-small"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=32, help="timed decoder steps a round, from position 4")
    parser.add_argument("--encoder-calls", type=int, default=3, help="encoder calls a round (their median)")
    parser.add_argument("--max-seq-len", type=int, default=128, help="decoder positions of ours' and XNNPACK's caches")
    parser.add_argument("--source-len", type=int, default=64, help="T5's source tokens")
    parser.add_argument("--max-source-len", type=int, default=512, help="T5's most source tokens (export)")
    parser.add_argument(
        "--precisions", nargs="+", default=["f32", "bf16"], help='precisions, or "speed": bf16 and an f16 KV cache'
    )
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=["xnnpack", "openvino", "genai"],
        default=["xnnpack", "openvino", "genai"],
        help="the engines besides ours",
    )
    parser.add_argument("--optimum-cli", default=OPTIMUM_CLI, help="optimum-intel's, from benchmarks/genai_env.sh")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, 1 round of 8 steps")
    parser.add_argument("--keep", type=Path, help="a folder to keep the programs and models in")
    options = parser.parse_args()
    if options.quick:
        options.rounds, options.steps, options.encoder_calls = 1, 8, 1
        options.max_seq_len = min(options.max_seq_len, 32)
    setup_logging()
    torch.set_num_threads(1)  # torch only converts inputs and outputs here, and runs the eager reference
    work = options.keep or Path(tempfile.mkdtemp(prefix="seq2seq_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = [run_model(name, options, work) for name in options.models]
        report(results, options)
    finally:
        if options.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
