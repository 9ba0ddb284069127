"""A vision-language model (LLaVA: CLIP vision tower, projector, Llama text model)
exported by ``executorch_openvino.llm.vision_language`` to ExecuTorch's
MultimodalRunner layout (``vision_encoder``, ``token_embedding``, ``text_decoder``, each
whole in OpenVINO), against XNNPACK on the same layout, OpenVINO alone on the same IR
and OpenVINO GenAI's ``VLMPipeline`` on optimum-intel's export of the same weights, in
one process and alternating rounds (issue 57, part 5).

    python benchmarks/vlm.py --quick                      # tiny model, checks the script
    python benchmarks/vlm.py [--rounds 5] [--new-tokens 32] [--work DIR] [--json FILE]
    python benchmarks/vlm.py --engines "ours bf16,ours bf16 paged,GenAI bf16"   # some engines
    python benchmarks/vlm.py --work DIR --reuse-programs ...   # our .pte files already in DIR

Self-contained: imports only installed packages and ``executorch_openvino``.

Models, random weights (``torch.manual_seed(0)``), nothing downloaded, saved as a
Hugging Face folder (config, weights, a byte-level BPE tokenizer trained here with
``tokenizers``, ``LlavaProcessor`` with ``CLIPImageProcessorPil``):
- small (default): CLIP ViT, image 224, patch 14 (256 image tokens), hidden 768, MLP
  3072, 12 layers, 12 heads; projector 768 -> 1024 -> 1024; Llama dim 1024, MLP 2816, 8
  layers, 16 heads, 4 KV heads, vocab 32000; the KV cache holds ``MAX_SEQ_LEN`` 512;
- quick (``--quick``): the tests' tiny LLaVA (image 32, patch 8, 16 image tokens;
  hidden 32, 1 + 2 layers), cache of 64.
The image is synthesized (numpy: gradients and noise, a new one every round so that no
engine can reuse an earlier round's work) at the tower's side, so the processor's resize
changes nothing; the prompt is ``PROMPT`` (its ``<image>`` the processor expands to the
image's tokens).

Engines:
- ours f32 / ours bf16 / ours speed: ``export_vision_language(model, max_seq_len,
  compile_specs=openvino_compile_specs(inference_precision=...), eos_ids=[vocab size])``
  (an end id no model produces, so that the runner makes every token asked for);
  "speed" is what the export's ``--speed`` writes for LLaVA (bf16 and an f16 KV cache,
  GenAI's defaults for float weights, in PagedAttention form as below);
- ours paged / ours bf16 paged: the same with ``paged_attention=True`` (the export's
  ``--paged-attention``): ``text_decoder`` keeps its KV cache in OpenVINO's
  PagedAttention form and fills prompts, the image's embeddings included, with the CPU
  plugin's PagedAttention kernel, as GenAI's VLMPipeline does; f32, and bf16 with a bf16
  cache;
- XNNPACK f32: transformers 5.23's ``TorchExportableModuleForVLM`` does not apply to
  LLaVA (it reads ``model.model.vision_model``, ``.connector`` and ``.text_model``,
  SmolVLM's modules; LLaVA has ``vision_tower``, ``multi_modal_projector`` and
  ``language_model``), so the XNNPACK program is built from our export's own unlowered
  methods (``vision_language._exported_methods``: the same modules, example inputs and
  dynamic shapes, ``strict=True``) lowered with ``XnnpackPartitioner``, with the same
  constant methods: the same three-method layout, which MultimodalRunner runs. Its
  text decoder keeps our wrapper's cache as buffers (``MAX_SEQ_LEN`` positions written
  by ``index_copy_``, which ExecuTorch's CPU kernels run; attention over all of them);
- OpenVINO alone f32 / bf16: the IR of each method in our f32 .pte's delegate blobs
  (weights several methods share put back as constants), compiled by ``openvino.Core``
  with the configuration our runtime uses for that precision, run by infer requests
  (the decoder's state reset at position 0, as our runtime does);
- GenAI f32 / GenAI bf16: ``openvino_genai.VLMPipeline`` on ``optimum-cli export
  openvino --task image-text-to-text --weight-format fp32`` of the saved folder (run
  from optimum-intel's own venv, ``--optimum-cli``), with
  ``INFERENCE_PRECISION_HINT=f32`` / no properties (the CPU plugin's bf16 where the CPU
  has it; KV cache at GenAI's default), ``apply_chat_template=False``,
  ``ignore_eos``, greedy. optimum-cli gets a copy of the folder whose vision tower
  weights have the hub's names (``hub_layout``: optimum-intel's transformers 5.5 would
  load transformers 5.23's names as a random vision tower), and GenAI's folder gets the
  ``preprocessor_config.json`` optimum-cli does not write (transformers 5 keeps it in
  ``processor_config.json``). GenAI's LLaVA expands its image tag to the image's tokens
  and a newline, so it gets ``GENAI_PROMPT``: the same tokens as the processor's.

Measured, medians over ``--rounds`` rounds after an untimed one, the engines' order
rotated each round:
- "vision": one ``vision_encoder`` call (ours, XNNPACK: ``executorch.runtime``'s
  ``Method.execute``; OpenVINO alone: ``InferRequest.infer``), the median of
  ``--vision-calls`` calls a round; GenAI: its ``get_vision_encoding_duration()`` (the
  one image of its generate call);
- "first token" (method calls): the runner's sequence of calls, timed from Python:
  ``token_embedding`` of the text before the image, its prefill, ``vision_encoder``,
  the prefill of the image's embeddings, ``token_embedding`` and prefill of the text
  after it, argmax; "image prefill": the ``text_decoder`` call of the image's embeddings
  in that sequence; "per token": the median of ``--new-tokens`` - 1 decode steps
  (``token_embedding`` + ``text_decoder`` of one token + argmax);
- "pipeline" columns: ours and XNNPACK through ``MultimodalRunner.generate`` (token
  inputs and the processor's pixel values: no tokenizing or image preprocessing), from
  its ``Stats``: first token = ``first_token_ms - inference_start_ms``, per token =
  ``(inference_end_ms - first_token_ms) / (generated - 1)``, whole milliseconds. GenAI:
  its ``perf_metrics``: ``get_ttft()`` (from the prompt text and the uint8 image:
  tokenizing and image preprocessing included) and ``get_tpot()``; its "per token"
  (method-call column) is the median of ``raw_metrics.token_infer_durations`` after the
  first (inference alone).
Correctness: each engine's greedy tokens for the prompt and the first image against
transformers' greedy ``generate`` on the processor's inputs (f32, no end of sequence):
"equal" or how many leading tokens are equal. The runner gives text pieces, compared
with the tokenizer's decoding of transformers' tokens one by one.
Targets: decode <= 0.8x XNNPACK's and <= 1.0x GenAI's (same precision); vision encoder
<= 1.0x OpenVINO alone's (same precision); the paged programs' first token through the
runner <= 1.0x GenAI's TTFT (same precision).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: idle OpenMP threads sleep
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from common.delegate_ir import cpu_ops_of, ir_of  # noqa: E402
from common.optimum import OPTIMUM_CLI, optimum_export  # noqa: E402
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower  # noqa: E402
from executorch_openvino import openvino_compile_specs  # noqa: E402
from executorch_openvino.compile_specs import parse_compile_specs, with_defaults  # noqa: E402
from executorch_openvino.llm import speed_preset, vision_language  # noqa: E402

logger = logging.getLogger("benchmarks.vlm")

VISION, EMBEDDING, DECODER = (
    vision_language.VISION_METHOD,
    vision_language.EMBEDDING_METHOD,
    vision_language.DECODER_METHOD,
)
PROMPT = "USER: <image>\nwhat is in the picture? ASSISTANT:"
IMAGE_TOKEN = "<image>"
#: GenAI's LLaVA expands its image tag to the image's tokens and a newline: the same text.
GENAI_PROMPT = PROMPT.replace(IMAGE_TOKEN + "\n", IMAGE_TOKEN)
SPECIALS = ["<unk>", "<pad>", "<s>", "</s>", IMAGE_TOKEN]
BOS, EOS, PAD = 2, 3, 1
THREADS = os.cpu_count() or 1

CONFIGS: Dict[str, Dict[str, Any]] = {
    "small": dict(
        vision=dict(
            hidden_size=768,
            intermediate_size=3072,
            num_hidden_layers=12,
            num_attention_heads=12,
            image_size=224,
            patch_size=14,
        ),
        text=dict(
            vocab_size=32000,
            hidden_size=1024,
            intermediate_size=2816,
            num_hidden_layers=8,
            num_attention_heads=16,
            num_key_value_heads=4,
            max_position_embeddings=2048,
        ),
        max_seq_len=512,
    ),
    "quick": dict(
        vision=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=4,
            image_size=32,
            patch_size=8,
        ),
        text=dict(
            vocab_size=400,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=128,
            initializer_range=0.2,  # the tests': large enough that the answer depends on the image
        ),
        max_seq_len=64,
    ),
}


# ---------------------------------------------------------------------------------------
# The model folder


def random_words(lines: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    for _ in range(lines):
        yield " ".join("".join(rng.choice(letters, rng.integers(2, 10))) for _ in range(12))


def trained_tokenizer(vocab_size: int) -> Any:
    """A byte-level BPE tokenizer of exactly `vocab_size` tokens, the specials first."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    # Only the characters of the corpus (letters, spaces, the prompt's): every token
    # decodes to ASCII text on its own, as MultimodalRunner's token callback needs
    # (a byte token of a UTF-8 sequence fails its conversion to a Python str).
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    corpus = [PROMPT.replace(IMAGE_TOKEN, "")] * 10 + list(random_words(max(2000, vocab_size)))
    tokenizer.train_from_iterator(corpus, trainer)
    if tokenizer.get_vocab_size() != vocab_size:
        raise RuntimeError(f"the tokenizer has {tokenizer.get_vocab_size()} tokens, not {vocab_size}")
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": IMAGE_TOKEN},
    )


def save_llava(shape: Dict[str, Any], folder: Path) -> Tuple[torch.nn.Module, Any]:
    """A LLaVA folder as the hub gives one; returns the model (f32, sdpa) and its processor."""
    import transformers

    vision = shape["vision"]
    if (folder / "config.json").is_file():
        logger.info("reusing the model folder %s", folder)
        processor = transformers.AutoProcessor.from_pretrained(folder)
        return vision_language.load_vision_language(folder), processor
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = trained_tokenizer(shape["text"]["vocab_size"])
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(**vision),
        text_config=transformers.LlamaConfig(**shape["text"], bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD),
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration(config).eval()
    model.generation_config = transformers.GenerationConfig(bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
    model.save_pretrained(folder)
    size = vision["image_size"]
    processor = transformers.LlavaProcessor(
        image_processor=transformers.CLIPImageProcessorPil(
            size={"shortest_edge": size}, crop_size={"height": size, "width": size}
        ),
        tokenizer=tokenizer,
        patch_size=vision["patch_size"],
        vision_feature_select_strategy="default",
        image_token=IMAGE_TOKEN,
        num_additional_image_tokens=1,
    )
    processor.save_pretrained(folder)
    return vision_language.load_vision_language(folder), processor


def synthesized_image(size: int, seed: int) -> np.ndarray:
    """[size, size, 3] uint8: smooth gradients, a disc and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / max(size - 1, 1)
    cx, cy, radius = rng.uniform(0.3, 0.7, 3) * [1, 1, 0.6]
    disc = ((x - cx) ** 2 + (y - cy) ** 2 < radius**2).astype(np.float64)
    channels = [x * rng.uniform(0.3, 1), y * rng.uniform(0.3, 1), disc * rng.uniform(0.3, 1)]
    image = np.stack(channels, -1) * 200 + rng.normal(0, 25, (size, size, 3)) + 20
    return np.clip(image, 0, 255).astype(np.uint8)


@dataclass
class Inputs:
    """One prompt and image, as each engine takes them."""

    image: np.ndarray  # uint8 [H, W, 3] (GenAI)
    pixel_values: torch.Tensor  # the processor's [1, 3, H, W]
    input_ids: torch.Tensor  # the processor's [1, n], the image's run of tokens included
    before: List[int]  # text ids before the image's run
    after: List[int]  # after it
    image_tokens: int


def make_inputs(processor: Any, image: np.ndarray, image_token_id: int) -> Inputs:
    from PIL import Image

    batch = processor(images=Image.fromarray(image), text=PROMPT, return_tensors="pt")
    ids = batch["input_ids"][0].tolist()
    first, last = ids.index(image_token_id), len(ids) - ids[::-1].index(image_token_id)
    return Inputs(image, batch["pixel_values"].float(), batch["input_ids"], ids[:first], ids[last:], last - first)


def transformers_tokens(model: torch.nn.Module, inputs: Inputs, new_tokens: int) -> List[int]:
    import transformers

    config = transformers.GenerationConfig(
        max_new_tokens=new_tokens, do_sample=False, bos_token_id=BOS, pad_token_id=PAD, eos_token_id=None
    )
    with torch.no_grad():
        output = model.generate(
            input_ids=inputs.input_ids,
            attention_mask=torch.ones_like(inputs.input_ids),
            pixel_values=inputs.pixel_values,
            generation_config=config,
        )
    tokens = output[0, inputs.input_ids.shape[1] :].tolist()
    if len(tokens) != new_tokens:
        raise RuntimeError(f"transformers generated {len(tokens)} tokens, not {new_tokens}")
    return tokens


# ---------------------------------------------------------------------------------------
# Programs


#: Our programs by engine name: the compile specs each is exported with.
OURS: Dict[str, Dict[str, Any]] = {
    "ours f32": {"inference_precision": "f32"},
    "ours bf16": {"inference_precision": "bf16"},
    # What the export's --speed writes for LLaVA's float weights.
    "ours speed": {**speed_preset(compressed_weights=False), "paged_attention": True},
    "ours paged": {"inference_precision": "f32", "paged_attention": True},
    "ours bf16 paged": {"inference_precision": "bf16", "paged_attention": True},
}


def export_ours(model: torch.nn.Module, name: str, max_seq_len: int, path: Path) -> ExecutorchProgramManager:
    """Our program `name` (:data:`OURS`: its compile specs)."""
    begin = time.perf_counter()
    vocab = model.config.get_text_config().vocab_size
    manager = vision_language.export_vision_language(
        model,
        max_seq_len=max_seq_len,
        compile_specs=openvino_compile_specs(**OURS[name]),
        eos_ids=[vocab],  # no model produces it: the runner makes every token asked for
    )
    path.write_bytes(manager.buffer)
    for method in (VISION, EMBEDDING, DECODER):
        left = cpu_ops_of(manager, method)
        if left:
            logger.warning("%s: %s left to ExecuTorch's CPU kernels: %s", name, method, left)
    seconds, size = time.perf_counter() - begin, path.stat().st_size / 1e6
    logger.info("%s: exported in %.1f s, %.1f MB", name, seconds, size)
    return manager


def export_xnnpack(model: torch.nn.Module, max_seq_len: int, path: Path) -> None:
    """Our export's unlowered methods lowered with XnnpackPartitioner (see the docstring)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from transformers.integrations.executorch import TorchExportableModuleForVLM

    try:
        TorchExportableModuleForVLM(model, max_cache_len=max_seq_len)
    except AttributeError as error:
        logger.info("XNNPACK: TorchExportableModuleForVLM does not apply to %s: %s", type(model).__name__, error)
    else:
        logger.warning("XNNPACK: TorchExportableModuleForVLM accepted %s; this script still uses our modules", model)
    begin = time.perf_counter()
    vocab = model.config.get_text_config().vocab_size
    with torch.no_grad():
        programs = vision_language._exported_methods(model, vision_language.text_decoder(model, max_seq_len))
        manager = to_edge_transform_and_lower(
            {name: program for name, (program, _, _) in programs.items()},
            partitioner=[XnnpackPartitioner()],
            constant_methods=vision_language.runner_metadata(model, max_seq_len, BOS, [vocab]),
        ).to_executorch()
    path.write_bytes(manager.buffer)
    for method in (VISION, EMBEDDING, DECODER):
        logger.info("XNNPACK %s: ops left to ExecuTorch's CPU kernels: %s", method, cpu_ops_of(manager, method))
    logger.info("XNNPACK: lowered in %.1f s, %.1f MB", time.perf_counter() - begin, path.stat().st_size / 1e6)


def hub_layout(folder: Path, out: Path) -> Path:
    """A copy of the folder whose checkpoint names the vision tower's weights as the hub's
    LLaVA checkpoints do (``vision_tower.vision_model.*``). transformers 5.23 saves them as
    ``vision_tower.*``, which optimum-intel's transformers (5.5) does not map: it loads
    the folder with a vision tower of random weights, warning only."""
    from safetensors.torch import load_file, save_file

    out.mkdir(parents=True, exist_ok=True)
    prefix, hub = "vision_tower.", "vision_tower.vision_model."

    def renamed(key: str) -> str:
        return hub + key[len(prefix) :] if key.startswith(prefix) and not key.startswith(hub) else key

    for path in folder.iterdir():
        if path.suffix == ".safetensors":
            weights = load_file(path)
            save_file({renamed(key): value for key, value in weights.items()}, out / path.name, {"format": "pt"})
        elif path.name.endswith(".safetensors.index.json"):
            index = json.loads(path.read_text())
            index["weight_map"] = {renamed(key): value for key, value in index["weight_map"].items()}
            (out / path.name).write_text(json.dumps(index))
        elif path.is_file():
            (out / path.name).write_bytes(path.read_bytes())
    return out


def genai_model(folder: Path, out: Path, optimum_cli: str) -> Path:
    """optimum-intel's export of the saved folder (fp32 weights, the hub's names), with the
    tokenizer and detokenizer IRs GenAI needs; raises with optimum-cli's own error."""
    if (out / "openvino_language_model.xml").is_file():
        return out
    source = hub_layout(folder, out.parent / "llava-hub-names")
    optimum_export(optimum_cli, source, "image-text-to-text", out)
    preprocessor = out / "preprocessor_config.json"
    if not preprocessor.is_file():
        # transformers 5 saves the image processor inside processor_config.json, which
        # optimum-cli does not copy; GenAI reads preprocessor_config.json, else assumes
        # its own sizes (336 for LLaVA).
        combined = json.loads((folder / "processor_config.json").read_text())
        preprocessor.write_text(json.dumps(combined["image_processor"], indent=1))
        logger.info("GenAI's model: wrote %s from the folder's processor_config.json", preprocessor.name)
    return out


# ---------------------------------------------------------------------------------------
# Engines


@dataclass
class Round:
    vision_ms: Optional[float] = None
    first_ms: Optional[float] = None
    image_prefill_ms: Optional[float] = None  # the text_decoder call of the image's embeddings
    token_ms: Optional[float] = None
    pipeline_first_ms: Optional[float] = None
    pipeline_token_ms: Optional[float] = None
    tokens: List[Any] = field(default_factory=list)  # ids, or text pieces (runner)


def argmax(logits: Any) -> int:
    values = logits if isinstance(logits, np.ndarray) else logits.float().numpy()
    return int(values.reshape(-1, values.shape[-1])[-1].argmax())


class StepwiseEngine:
    """Drives the three methods as MultimodalRunner does, timing each call from Python.
    Subclasses give ``embed(ids)``, ``vision(pixels)`` and ``decode(embeddings, start)``."""

    def embed(self, ids: List[int]) -> Any:
        raise NotImplementedError

    def vision(self, pixels: torch.Tensor) -> Any:
        raise NotImplementedError

    def decode(self, embeddings: Any, start: int) -> Any:
        raise NotImplementedError

    def run(self, inputs: Inputs, new_tokens: int, vision_calls: int) -> Round:
        begin = time.perf_counter()
        position, logits = 0, None
        if inputs.before:
            logits = self.decode(self.embed(inputs.before), position)
            position += len(inputs.before)
        features = self.vision(inputs.pixel_values)
        image_begin = time.perf_counter()
        logits = self.decode(features, position)
        image_prefill_ms = (time.perf_counter() - image_begin) * 1e3
        position += inputs.image_tokens
        if inputs.after:
            logits = self.decode(self.embed(inputs.after), position)
            position += len(inputs.after)
        tokens = [argmax(logits)]
        first_ms = (time.perf_counter() - begin) * 1e3
        steps = []
        while len(tokens) < new_tokens:
            begin = time.perf_counter()
            logits = self.decode(self.embed([tokens[-1]]), position)
            tokens.append(argmax(logits))
            steps.append((time.perf_counter() - begin) * 1e3)
            position += 1
        vision_ms = []
        for _ in range(vision_calls):
            begin = time.perf_counter()
            self.vision(inputs.pixel_values)
            vision_ms.append((time.perf_counter() - begin) * 1e3)
        return Round(
            statistics.median(vision_ms),
            first_ms,
            image_prefill_ms,
            statistics.median(steps) if steps else None,
            tokens=tokens,
        )


class ExecutorchEngine(StepwiseEngine):
    """A .pte through ``executorch.runtime``, method by method."""

    def __init__(self, path: Path) -> None:
        from executorch.runtime import Runtime

        self.program = Runtime.get().load_program(path)
        self.methods = {name: self.program.load_method(name) for name in (VISION, EMBEDDING, DECODER)}

    def embed(self, ids: List[int]) -> torch.Tensor:
        return self.methods[EMBEDDING].execute([torch.tensor([ids])])[0]

    def vision(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.methods[VISION].execute([pixels])[0]

    def decode(self, embeddings: torch.Tensor, start: int) -> torch.Tensor:
        positions = torch.arange(start, start + embeddings.shape[1])
        return self.methods[DECODER].execute([embeddings, positions])[0]


class OpenvinoAloneEngine(StepwiseEngine):
    """Our .pte's IRs compiled by ``openvino.Core`` with our runtime's configuration."""

    def __init__(self, models: Dict[str, ov.Model], precision: str) -> None:
        specs = with_defaults(openvino_compile_specs(inference_precision=precision))
        self.config = parse_compile_specs(specs).compile_config()
        core = ov.Core()
        self.requests = {
            name: core.compile_model(model, "CPU", self.config).create_infer_request() for name, model in models.items()
        }

    def _infer(self, name: str, values: Sequence[np.ndarray]) -> np.ndarray:
        request = self.requests[name]
        request.infer(list(values), share_inputs=True)
        return request.get_output_tensor(0).data.copy()

    def embed(self, ids: List[int]) -> np.ndarray:
        return self._infer(EMBEDDING, [np.array([ids], dtype=np.int64)])

    def vision(self, pixels: torch.Tensor) -> np.ndarray:
        return self._infer(VISION, [pixels.numpy()])

    def decode(self, embeddings: np.ndarray, start: int) -> np.ndarray:
        if start == 0:
            self.requests[DECODER].reset_state()
        positions = np.arange(start, start + embeddings.shape[1], dtype=np.int64)
        return self._infer(DECODER, [embeddings, positions])


@contextlib.contextmanager
def stdout_to_stderr():
    """Sends what C++ code prints to stdout to stderr instead (this script prints tables only)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)


class RunnerEngine:
    """A .pte through ExecuTorch's MultimodalRunner, timed by its Stats."""

    def __init__(self, path: Path, tokenizer: Path) -> None:
        from executorch.extension.llm.runner import MultimodalRunner

        with stdout_to_stderr():
            self.runner = MultimodalRunner(str(path), str(tokenizer))

    def run(self, inputs: Inputs, new_tokens: int, vision_calls: int) -> Round:
        from executorch.extension.llm.runner import GenerationConfig, make_image_input, make_token_input

        parts = [make_image_input(inputs.pixel_values)]
        if inputs.before:
            parts.insert(0, make_token_input(inputs.before))
        if inputs.after:
            parts.append(make_token_input(inputs.after))
        pieces: List[str] = []
        stats: List[Any] = []
        self.runner.reset()
        config = GenerationConfig(max_new_tokens=new_tokens, temperature=0.0, echo=False)
        with stdout_to_stderr():  # the runner prints the text and its stats
            self.runner.generate(parts, config, pieces.append, stats.append)
        [record] = stats
        generated = record.num_generated_tokens
        per_token = (record.inference_end_ms - record.first_token_ms) / max(generated - 1, 1)
        return Round(
            pipeline_first_ms=float(record.first_token_ms - record.inference_start_ms),
            pipeline_token_ms=per_token if generated > 1 else None,
            tokens=pieces,
        )


class GenaiEngine:
    """openvino_genai.VLMPipeline; its own perf metrics."""

    def __init__(self, folder: Path, properties: Dict[str, str]) -> None:
        import openvino_genai

        self.pipeline = openvino_genai.VLMPipeline(str(folder), "CPU", **properties)

    @staticmethod
    def config(new_tokens: int) -> Any:
        import openvino_genai

        return openvino_genai.GenerationConfig(
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            ignore_eos=True,
            do_sample=False,
            apply_chat_template=False,
        )

    def run(self, inputs: Inputs, new_tokens: int, vision_calls: int) -> Round:
        import openvino_genai

        received: List[int] = []

        class Collect(openvino_genai.StreamerBase):
            def write(self, token):
                received.extend([token] if isinstance(token, int) else list(token))
                return openvino_genai.StreamingStatus.RUNNING

            def end(self):
                pass

        image = ov.Tensor(np.ascontiguousarray(inputs.image[None]))
        result = self.pipeline.generate(GENAI_PROMPT, images=[image], generation_config=self.config(new_tokens))
        metrics = result.perf_metrics
        infer_ms = [duration / 1e3 for duration in metrics.raw_metrics.token_infer_durations]
        round_ = Round(
            vision_ms=metrics.get_vision_encoding_duration().mean,
            token_ms=statistics.median(infer_ms[1:]) if len(infer_ms) > 1 else None,
            pipeline_first_ms=metrics.get_ttft().mean,
            pipeline_token_ms=metrics.get_tpot().mean,
        )
        if self.collect_tokens:
            config = self.config(new_tokens)
            self.pipeline.generate(GENAI_PROMPT, images=[image], generation_config=config, streamer=Collect())
            round_.tokens = received
        return round_

    collect_tokens = False


# ---------------------------------------------------------------------------------------
# Measuring


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def measure(
    engines: Dict[str, Any], make: Callable[[int], Inputs], options: argparse.Namespace
) -> Tuple[Dict[str, List[Round]], Dict[str, Round], List[float]]:
    """An untimed round on the first image (its tokens: correctness), then `rounds`
    rounds on new images, the engines' order rotated each round."""
    names = list(engines)
    first = make(0)
    checked: Dict[str, Round] = {}
    for name in names:
        if isinstance(engines[name], GenaiEngine):
            engines[name].collect_tokens = True
        checked[name] = engines[name].run(first, options.new_tokens, 1)
        if isinstance(engines[name], GenaiEngine):
            engines[name].collect_tokens = False
        logger.info("untimed round: %s done", name)
    rounds: Dict[str, List[Round]] = {name: [] for name in names}
    loads = []
    for index in range(options.rounds):
        inputs = make(index + 1)
        order = names[index % len(names) :] + names[: index % len(names)]
        loads.append(load_average())
        for name in order:
            rounds[name].append(engines[name].run(inputs, options.new_tokens, options.vision_calls))
        logger.info("round %d/%d done (load average %.2f)", index + 1, options.rounds, loads[-1])
    return rounds, checked, loads


def median_of(rounds: List[Round], attribute: str) -> Optional[float]:
    values = [getattr(r, attribute) for r in rounds if getattr(r, attribute) is not None]
    return statistics.median(values) if values else None


def leading_equal(tokens: Sequence[Any], reference: Sequence[Any]) -> int:
    count = 0
    for ours, theirs in zip(tokens, reference):
        if ours != theirs:
            break
        count += 1
    return count


def correctness(tokens: Sequence[Any], reference: Sequence[Any]) -> str:
    if not tokens:
        return "-"
    equal = leading_equal(tokens, reference)
    return "equal" if equal == len(reference) == len(tokens) else f"{equal}/{len(reference)} leading"


# ---------------------------------------------------------------------------------------
# Report


def cpu_description() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return platform.processor()
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    flags = set(fields.get("Flags", "").split())
    wanted = ["avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"]
    return (
        f"{fields.get('Model name', '?').strip()}, {os.cpu_count()} CPUs; "
        f"flags: {' '.join(flag for flag in wanted if flag in flags)}"
    )


def versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("openvino", "openvino-genai", "torch", "executorch", "transformers"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def ms(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for row in [header, ["-" * width for width in widths], *rows]:
        print("| " + " | ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) + " |")


def ratio_row(target: str, ours: Optional[float], theirs: Optional[float], limit: float) -> List[str]:
    if ours is None or theirs is None:
        return [target, ms(ours), ms(theirs), "-", f"<= {limit:.1f}", "not measured"]
    ratio = ours / theirs
    return [target, ms(ours), ms(theirs), f"{ratio:.2f}", f"<= {limit:.1f}", "met" if ratio <= limit else "NO"]


# ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the tiny model (seconds)")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 5; 2 with --quick)")
    parser.add_argument("--new-tokens", type=int, help="tokens generated a round (default 32; 8 with --quick)")
    parser.add_argument("--vision-calls", type=int, default=3, help="vision encoder calls timed a round")
    parser.add_argument("--work", type=Path, help="folder for the model, programs and IRs (kept; reused)")
    parser.add_argument("--json", type=Path, help="write the figures there")
    parser.add_argument("--optimum-cli", default=OPTIMUM_CLI, help="optimum-intel's optimum-cli")
    parser.add_argument("--threads", type=int, default=THREADS, help="torch.set_num_threads (transformers only)")
    parser.add_argument(
        "--engines",
        help="comma-separated engines to run (default: all): "
        + ", ".join([*OURS, "XNNPACK f32", "OpenVINO alone f32", "OpenVINO alone bf16", "GenAI f32", "GenAI bf16"]),
    )
    parser.add_argument(
        "--reuse-programs",
        action="store_true",
        help="load our .pte files already in --work (written there by an earlier run of this script) "
        "instead of exporting them again",
    )
    options = parser.parse_args()
    wanted = set(options.engines.split(",")) if options.engines else None

    def runs(engine: str) -> bool:
        return wanted is None or engine in wanted

    options.rounds = options.rounds or (2 if options.quick else 5)
    options.new_tokens = options.new_tokens or (8 if options.quick else 32)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    torch.set_num_threads(options.threads)
    config_name = "quick" if options.quick else "small"
    shape = CONFIGS[config_name]
    work = options.work or Path(tempfile.mkdtemp(prefix="vlm-"))
    work = work / config_name
    work.mkdir(parents=True, exist_ok=True)
    load_at_start = os.getloadavg()

    folder = work / "llava"
    model, processor = save_llava(shape, folder)
    image_token_id = model.config.image_token_index
    size = shape["vision"]["image_size"]

    def make(seed: int) -> Inputs:
        return make_inputs(processor, synthesized_image(size, seed), image_token_id)

    first = make(0)
    reference = transformers_tokens(model, first, options.new_tokens)
    reference_pieces = [processor.tokenizer.decode([token]) for token in reference]
    prompt_tokens = first.input_ids.shape[1]
    logger.info(
        "prompt: %d tokens (%d image, %d before, %d after); transformers: %s",
        prompt_tokens,
        first.image_tokens,
        len(first.before),
        len(first.after),
        reference,
    )
    max_seq_len = shape["max_seq_len"]
    if prompt_tokens + options.new_tokens > max_seq_len:
        raise SystemExit(f"{prompt_tokens} prompt + {options.new_tokens} new tokens exceed the cache's {max_seq_len}")

    failures: Dict[str, str] = {}
    programs = {}
    irs = {}
    alone = [f"OpenVINO alone {precision}" for precision in ("f32", "bf16") if runs(f"OpenVINO alone {precision}")]
    for name in OURS:
        # OpenVINO alone runs the IR of our f32 program.
        if not runs(name) and not (name == "ours f32" and alone):
            continue
        path = work / f"{name.replace(' ', '_')}.pte"
        if runs(name):
            programs[name] = path
        if options.reuse_programs and path.is_file() and not (name == "ours f32" and alone):
            logger.info("%s: reusing %s", name, path)
            continue
        manager = export_ours(model, name, max_seq_len, path)
        if name == "ours f32":
            irs = {method: ir_of(manager, method) for method in (VISION, EMBEDDING, DECODER)}
        del manager
        gc.collect()
    xnnpack_path = work / "xnnpack_f32.pte"
    if runs("XNNPACK f32"):
        try:
            export_xnnpack(model, max_seq_len, xnnpack_path)
            programs["XNNPACK f32"] = xnnpack_path
        except Exception as error:  # noqa: BLE001 - reported, the rest goes on
            logger.exception("XNNPACK")
            failures["XNNPACK f32"] = f"{type(error).__name__}: {error}"
    genai_dir: Optional[Path] = None
    if runs("GenAI f32") or runs("GenAI bf16"):
        try:
            genai_dir = genai_model(folder, work / "genai", options.optimum_cli)
        except Exception as error:  # noqa: BLE001
            logger.error("GenAI's model: %s", error)
            failures["GenAI"] = str(error)
    del model
    gc.collect()

    engines: Dict[str, Any] = {}
    for name, path in programs.items():
        engines[name] = ExecutorchEngine(path)
    for name in alone:
        engines[name] = OpenvinoAloneEngine(irs, name.split()[-1])
    del irs  # the compiled models hold their own weights
    gc.collect()
    if genai_dir is not None:
        for precision, properties in (("f32", {"INFERENCE_PRECISION_HINT": "f32"}), ("bf16", {})):
            if not runs(f"GenAI {precision}"):
                continue
            try:
                engines[f"GenAI {precision}"] = GenaiEngine(genai_dir, properties)
            except Exception as error:  # noqa: BLE001
                logger.exception("GenAI %s", precision)
                failures[f"GenAI {precision}"] = f"{type(error).__name__}: {error}"
    for name, path in programs.items():
        engines[f"{name} runner"] = RunnerEngine(path, folder / "tokenizer.json")
    logger.info("engines: %s", ", ".join(engines))

    rounds, checked, loads = measure(engines, make, options)
    load_at_end = os.getloadavg()

    figures: Dict[str, Dict[str, Any]] = {}
    for name in engines:
        runner = name.endswith(" runner")
        base = name[: -len(" runner")] if runner else name
        entry = figures.setdefault(base, {})
        for attribute in (
            "vision_ms",
            "first_ms",
            "image_prefill_ms",
            "token_ms",
            "pipeline_first_ms",
            "pipeline_token_ms",
        ):
            value = median_of(rounds[name], attribute)
            if value is not None:
                entry[attribute] = value
        tokens = checked[name].tokens
        key = "runner_tokens" if runner else "tokens"
        entry[key] = correctness(tokens, reference_pieces if runner else reference)
        entry[key + "_list"] = tokens

    # -------------------------------------------------------------------------------
    environment = {
        "cpu": cpu_description(),
        "versions": versions(),
        "torch_threads": torch.get_num_threads(),
        "load_average_start": load_at_start,
        "load_average_end": load_at_end,
        "load_average_rounds": loads,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
    }
    text = shape["text"]
    vision = shape["vision"]
    print(f"CPU: {environment['cpu']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in environment["versions"].items()))
    print(
        f"model ({config_name}): CLIP image {vision['image_size']}, patch {vision['patch_size']}, hidden "
        f"{vision['hidden_size']}, {vision['num_hidden_layers']} layers; Llama dim {text['hidden_size']}, "
        f"{text['num_hidden_layers']} layers, {text['num_attention_heads']} heads, {text['num_key_value_heads']} "
        f"KV heads, vocab {text['vocab_size']}; cache {max_seq_len}; prompt {prompt_tokens} tokens "
        f"({first.image_tokens} image); {options.new_tokens} new tokens"
    )
    print(
        f"{options.rounds} rounds (+1 untimed), medians; torch threads {torch.get_num_threads()}; load average "
        f"{load_at_start[0]:.2f} at start, {load_at_end[0]:.2f} at end, per round "
        + " ".join(f"{value:.2f}" for value in loads)
    )
    rows = []
    for name, entry in figures.items():
        rows.append(
            [
                name,
                ms(entry.get("vision_ms")),
                ms(entry.get("first_ms")),
                ms(entry.get("image_prefill_ms")),
                ms(entry.get("token_ms")),
                ms(entry.get("pipeline_first_ms")),
                ms(entry.get("pipeline_token_ms")),
                entry.get("tokens", "-"),
                entry.get("runner_tokens", "-"),
            ]
        )
    print_table(
        "Times in ms (method calls: executorch.runtime / OpenVINO infer requests; pipeline: MultimodalRunner "
        "Stats, GenAI perf_metrics; GenAI's 'per token' is its token_infer_durations)",
        [
            "engine",
            "vision",
            "first token",
            "image prefill",
            "per token",
            "pipeline first token",
            "pipeline per token",
            "greedy = transformers",
            "runner = transformers",
        ],
        rows,
    )

    def get(name: str, attribute: str) -> Optional[float]:
        return figures.get(name, {}).get(attribute)

    def target(label: str, ours: str, theirs: str, attribute: str, limit: float = 1.0) -> List[str]:
        return ratio_row(label, get(ours, attribute), get(theirs, attribute), limit)

    targets = [
        target("decode, ours f32 / XNNPACK f32 (method calls)", "ours f32", "XNNPACK f32", "token_ms", 0.8),
        target("decode, ours f32 / XNNPACK f32 (runner)", "ours f32", "XNNPACK f32", "pipeline_token_ms", 0.8),
    ]
    # GenAI bf16 is GenAI's default: bf16 and the KV cache precision optimum-intel writes
    # into a float model's runtime options (f16), which ours "speed" (--speed) also runs.
    for ours, genai in (("f32", "f32"), ("bf16", "bf16"), ("speed", "bf16")):
        pair = (f"ours {ours}", f"GenAI {genai}")
        targets.append(target(f"decode, ours {ours} runner / GenAI {genai} tpot", *pair, "pipeline_token_ms"))
        targets.append(target(f"decode, ours {ours} call / GenAI {genai} token inference", *pair, "token_ms"))
    # First token with the image, through the runner against GenAI's TTFT (which also
    # tokenizes and preprocesses the image), and decode, for the paged programs.
    for ours, genai in (("paged", "f32"), ("bf16 paged", "bf16")):
        pair = (f"ours {ours}", f"GenAI {genai}")
        targets.append(target(f"first token, ours {ours} runner / GenAI {genai} ttft", *pair, "pipeline_first_ms"))
        targets.append(target(f"decode, ours {ours} runner / GenAI {genai} tpot", *pair, "pipeline_token_ms"))
    for precision in ("f32", "bf16"):
        label = f"vision, ours {precision} / OpenVINO alone {precision}"
        targets.append(target(label, f"ours {precision}", f"OpenVINO alone {precision}", "vision_ms"))
    print_table("Targets", ["target", "ours ms", "theirs ms", "ratio", "limit", "met"], targets)
    if failures:
        print("\nNot measured:")
        for name, error in failures.items():
            print(f"- {name}: {error}")
    print(f"\ntransformers' greedy tokens: {reference}")
    if options.json:
        options.json.write_text(
            json.dumps(
                {
                    "environment": environment,
                    "config": config_name,
                    "shape": shape,
                    "new_tokens": options.new_tokens,
                    "rounds": options.rounds,
                    "prompt_tokens": prompt_tokens,
                    "reference": reference,
                    "figures": figures,
                    "failures": failures,
                },
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
