"""Exports a decoder LLM to a .pte that ExecuTorch's LLM runner drives through OpenVINO:
the command line of ``export_llm`` (decoder_program.py) and of the Hugging Face exports.

Command line, for the Llama of ExecuTorch's examples::

    python -m executorch_openvino.llm.export --params params.json \\
        [--checkpoint model.pth] --output llama.pte --precision bf16 \\
        [--weight-compression int4] [--etrecord llama.etrecord]

or for a Hugging Face model folder (huggingface.py; an encoder-decoder such as Whisper
or T5: encoder_decoder.py)::

    python -m executorch_openvino.llm.export --hf DIR --output model.pte

or with ExecuTorch's LLM export configuration, as ExecuTorch's ``export_llm`` reads it
(llm_config.py)::

    python -m executorch_openvino.llm.export --config llama3_2_ov_4wo.yaml +base.params=params.json
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TypeVar

import torch
from executorch.exir import ExecutorchProgramManager
from executorch.exir.backend.compile_spec_schema import CompileSpec

from ..compile_specs import device_type, openvino_compile_specs, parse_compile_specs
from ..preprocessing.paged_attention import PagedAttentionRefused, check_paged_attention_options
from .calibration import DATA_AWARE, calibration_inputs, folder_tokenizer, load_tokenizer, read_samples
from .decoder_program import export_llm
from .encoder_decoder import export_encoder_decoder, is_encoder_decoder_folder
from .huggingface import configured_bos_id, export_huggingface_llm, load_model, require_transformers
from .vision_language import check_supported_folder, export_vision_language, is_vision_language_folder
from .weight_compression import BACKUP_PRECISIONS, WEIGHT_COMPRESSION_FORMS, check_compression, compression_settings

logger = logging.getLogger(__name__)

_STATEFUL_BECAUSE = "the KV cache stays in the stateful form (no paged_attention): %s"
#: Lines of --dataset calibrated on without --num-samples.
_NUM_SAMPLES = 128
T = TypeVar("T")


def speed_preset(compressed_weights: bool) -> Dict[str, str]:
    """The compile specs of ``--speed``: the settings OpenVINO GenAI runs an LLM with on a
    CPU. Activations in bf16 (OpenVINO computes in f32 on a CPU without bf16 units, so
    the preset is safe everywhere); the KV cache in u8 for compressed weights (the CPU
    plugin's default) and in f16 for float ones (the ``KV_CACHE_PRECISION`` optimum-intel
    writes into the runtime options of a model it does not compress, which GenAI applies).
    Faster than the defaults, which keep eager's values; how far the logits move is in
    docs/llm.md. GenAI's PagedAttention form is the command line's default where it
    applies (_paged_by_default); in Python add ``paged_attention=True`` where the model allows it.

    Example::

        specs = openvino_compile_specs(**speed_preset(compressed_weights=True), paged_attention=True)
    """
    return {"inference_precision": "bf16", "kv_cache_precision": "u8" if compressed_weights else "f16"}


#: ExecuTorch's model classes (its LlmConfig's base.model_class) whose export_llm does not
#: build a text decoder from params.json as ModelArgs says.
_OTHER_MODEL_CLASSES = {"llama3_2_vision": "a vision model", "static_llama": "a static-shape model of its own"}
#: The classes whose scaled RoPE keeps ModelArgs' scale factor (8); export_llm gives every
#: later class 32 (executorch/examples/models/llama/model.py, ExecuTorch 1.5.1).
_ROPE_SCALE_8_CLASSES = ("llama3", "llama3_1")
_ROPE_SCALE_LATER = 32.0
#: The classes before scaled RoPE, whose use_scaled_rope export_llm refuses.
_UNSCALED_ROPE_CLASSES = ("llama2", "stories110m")


def _model_args(
    params: Path,
    max_seq_len: int,
    dynamic_shape: bool,
    vocab_size: Optional[int] = None,
    model_class: Optional[str] = None,
):
    import dataclasses

    from executorch.examples.models.llama.model_args import ModelArgs

    try:
        settings = json.loads(params.read_text())
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, not JSON
        raise SystemExit(f"--params {params}: not a readable params.json: {error}") from None
    if not isinstance(settings, dict):
        raise SystemExit(f"--params {params}: holds a {type(settings).__name__}; params.json is an object of fields")
    fields = {field.name for field in dataclasses.fields(ModelArgs)}
    unknown = sorted(set(settings) - fields)
    if unknown:
        raise SystemExit(f"{params}: {', '.join(unknown)} not among ModelArgs' fields: {', '.join(sorted(fields))}")
    if vocab_size is not None:
        settings["vocab_size"] = vocab_size
    if settings.get("vocab_size", ModelArgs.vocab_size) <= 0:
        # Llama 2's params.json says -1: the size comes from the tokenizer.
        raise SystemExit(f"{params}: vocab_size is {settings['vocab_size']}; give the tokenizer's with --vocab-size")
    settings.update(
        max_seq_len=max_seq_len, max_context_len=max_seq_len, use_kv_cache=True, enable_dynamic_shape=dynamic_shape
    )
    args = ModelArgs(**settings)
    _apply_model_class(args, model_class, params)
    return args


def _apply_model_class(args: Any, model_class: Optional[str], params: Path) -> None:
    """What ExecuTorch's export_llm makes of `model_class` (None: its LlmConfig's default)
    for a params.json: its classes after Llama 3.1 (llama3_2, qwen...) scale a scaled RoPE
    by 32, not ModelArgs' 8."""
    from executorch.extension.llm.export.config.llm_config import BaseConfig, ModelType

    model_class = model_class or BaseConfig().model_class.value
    classes = [kind.value for kind in ModelType]
    if model_class not in classes:
        raise SystemExit(f"model class {model_class!r} is not one of ExecuTorch's: {', '.join(classes)}")
    if model_class in _OTHER_MODEL_CLASSES:
        raise SystemExit(
            f"model class {model_class} is {_OTHER_MODEL_CLASSES[model_class]} in ExecuTorch's export, "
            "not a text decoder this export makes from params.json"
        )
    if not args.use_scaled_rope or model_class in _ROPE_SCALE_8_CLASSES:
        return
    if model_class in _UNSCALED_ROPE_CLASSES:
        raise SystemExit(f"{params}: use_scaled_rope is true, but model class {model_class} predates scaled RoPE")
    args.rope_scale_factor = _ROPE_SCALE_LATER


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="--config FILE [key=value ...]: ExecuTorch's LLM export configuration (YAML), with its overrides; "
        "it sets the flags above, and flags given beside it win",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--params", type=Path, help="params.json of a Llama checkpoint (dim, n_layers, n_heads, ...)")
    source.add_argument(
        "--hf",
        type=Path,
        metavar="DIR",
        help="a Hugging Face model folder (config.json, weights, generation_config.json); "
        "needs the huggingface extra (docs/huggingface.md)",
    )
    parser.add_argument("--checkpoint", type=Path, help="its weights (.pth); random weights without it")
    parser.add_argument("--output", type=Path, required=True, help="the .pte to write")
    parser.add_argument("--max-seq-len", type=int, default=256, help="positions of the (decoder's) KV cache")
    parser.add_argument(
        "--max-source-len",
        type=int,
        help="with --hf, a text encoder-decoder (T5, BART): the most tokens its encoder takes "
        "(the config's n_positions or max_position_embeddings by default)",
    )
    parser.add_argument("--vocab-size", type=int, help="overrides params.json (whose Llama 2 form says -1)")
    parser.add_argument(
        "--model-class",
        help="with --params, ExecuTorch's base.model_class (default llama3), read as its export_llm reads it: "
        "a scaled RoPE takes a scale factor of 32 for classes after llama3_1 (llama3_2...), else 8",
    )
    parser.add_argument(
        "--static-shape",
        action="store_true",
        help="export for one token per call (the runner then prefills token by token)",
    )
    parser.add_argument(
        "--one-token-model",
        action="store_true",
        help="also compile the dynamic-length program for one token per call, which decode steps then use "
        "(as fast as --static-shape, at the cost of a second copy of the weights OpenVINO repacks)",
    )
    parser.add_argument(
        "--paged-attention",
        action=argparse.BooleanOptionalAction,
        help="keep the KV cache in OpenVINO's PagedAttention form, as OpenVINO GenAI's LLMPipeline does on a CPU: "
        "long prompts fill faster, decode steps take the same time, and going back costs a step. Without either "
        "flag it is on where it applies (CPU, a decoder-only LLM or a vision-language text_decoder, without "
        "--one-token-model, no sliding window; else the export says why) and the model cache leaves it out; "
        "--paged-attention asks for it (refused where it does not apply; with --one-token-model only decode steps "
        "use it, and the cache not in u8), --no-paged-attention keeps the stateful form",
    )
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--precision", choices=["f32", "bf16", "f16"], help="OpenVINO inference precision")
    parser.add_argument(
        "--kv-cache-precision",
        choices=["f32", "f16", "bf16", "u8"],
        help="precision of the KV cache OpenVINO keeps (the inference precision without it)",
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="OpenVINO GenAI's CPU precisions: --precision bf16 (f32 where the CPU has no bf16 units) and "
        "--kv-cache-precision u8 with --weight-compression (f16 without), unless given; faster, further from "
        "eager (docs/llm.md#speed)",
    )
    parser.add_argument(
        "--weight-compression",
        choices=[*WEIGHT_COMPRESSION_FORMS, "int8_asym", "int8_sym", "int4_sym", "int4_asym"],
        help="compress the weights with NNCF (the quantization extra): int4 is 4-bit symmetric weights in groups "
        "of 128, the embedding and output projection included (the fastest 4-bit form measured); int8 is "
        "NNCF's INT8_ASYM; the other names are NNCF's modes with NNCF's defaults",
    )
    parser.add_argument("--group-size", type=int, help="INT4 group size (int4's or NNCF's without it; -1: per channel)")
    parser.add_argument(
        "--dynamic-quantization-group-size",
        type=int,
        help="quantize the activations of compressed-weight layers to int8 in groups of this many channels on CPUs "
        "with VNNI or AMX (OpenVINO's default, 32, without it; 0 keeps them f32: the compressed model's values)",
    )
    parser.add_argument(
        "--etrecord", type=Path, help="also write an ETRecord there, for executorch.devtools.Inspector (profiling)"
    )
    parser.add_argument(
        "--bos-id",
        type=int,
        help="default 1, or with --hf the model's generation config's (an encoder-decoder's decoder_start_token_id)",
    )
    parser.add_argument(
        "--eos-id", type=int, action="append", help="repeat for several; default 2, or with --hf the model's"
    )
    calibration = parser.add_argument_group(
        "data-aware weight compression (NNCF's algorithms, 4-bit weights; docs/quantization.md#llms)"
    )
    calibration.add_argument("--awq", action="store_true", help="NNCF's AWQ (activation-aware scales)")
    calibration.add_argument("--scale-estimation", action="store_true", help="NNCF's scale estimation")
    calibration.add_argument(
        "--gptq", action="store_true", help="GPTQ: refused, NNCF 3.4.0 does not run it on an exported model"
    )
    calibration.add_argument(
        "--lora-correction",
        action="store_true",
        help="LoRA correction: refused, NNCF 3.4.0 inserts no adapters into an exported model",
    )
    calibration.add_argument("--dataset", type=Path, help="calibration text, one sample a line")
    calibration.add_argument("--num-samples", type=int, help=f"lines of --dataset to use (default {_NUM_SAMPLES})")
    calibration.add_argument(
        "--tokenizer",
        type=Path,
        help="with --params: the tokenizer of the calibration text (a --hf folder has its own)",
    )
    calibration.add_argument(
        "--ratio", type=float, help="the share of layers in 4 bits, the others in --backup-precision (mixed precision)"
    )
    calibration.add_argument(
        "--backup-precision", choices=BACKUP_PRECISIONS, help="the layers a ratio below 1 leaves out (NNCF: int8_asym)"
    )
    return parser


def main(argv: Optional[Sequence[str]] = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = [part for item in argv for part in (item.split("=", 1) if item.startswith("--config=") else [item])]
    if "--config" in argv:
        argv = _flags_from_llm_config(argv)
    parser = _parser()
    options = parser.parse_args(argv)
    for flag, path in (("--output", options.output), ("--etrecord", options.etrecord)):
        if path is not None and (path.is_dir() or not path.parent.is_dir()):
            parser.error(
                f"{flag} {path}: {'a folder' if path.is_dir() else 'its folder does not exist'}; give a file path"
            )
    if options.one_token_model and options.static_shape:
        parser.error("--one-token-model is for dynamic-length exports; --static-shape has one token per call already")
    for flag in ("checkpoint", "vocab_size", "model_class"):
        if options.hf and getattr(options, flag) is not None:
            parser.error(
                f"--{flag.replace('_', '-')} is for --params; a --hf folder holds its weights, sizes and model class"
            )
    if options.params and options.max_source_len is not None:
        parser.error("--max-source-len is for --hf encoder-decoders (T5, BART)")
    if options.max_seq_len < 2:
        parser.error(f"--max-seq-len is {options.max_seq_len}; the KV cache needs 2 positions or more")
    _check_input_files(options, parser)
    logging.basicConfig(level=logging.INFO)
    compression = _compression_from(options, parser)
    preset = speed_preset(compression is not None) if options.speed else {}
    cache_precision = options.kv_cache_precision or preset.get("kv_cache_precision")

    def specs_with(paged_attention: bool) -> List[CompileSpec]:
        return openvino_compile_specs(
            device=options.device,
            inference_precision=options.precision or preset.get("inference_precision"),
            kv_cache_precision=cache_precision,
            dynamic_quantization_group_size=options.dynamic_quantization_group_size,
            one_token_model=options.one_token_model or None,
            paged_attention=paged_attention or None,
        )

    export = _export_huggingface if options.hf else _export_params
    try:
        if options.paged_attention:  # what the flags alone refuse, refused before exporting
            check_paged_attention_options(parse_compile_specs(specs_with(True)))
        if options.paged_attention is not None:  # asked for or against: no falling back
            program = export(options, specs_with(options.paged_attention), compression)
        else:
            program = paged_where_it_applies(
                lambda paged: export(options, specs_with(paged), compression),
                _paged_by_default(options, cache_precision),
            )
    except ValueError as error:  # what the export refuses, said as the command line says its own refusals
        logger.debug("the export refused its input", exc_info=True)
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    options.output.write_bytes(program.buffer)
    logger.info("wrote %s (%.1f MB)", options.output, len(program.buffer) / 1e6)
    if options.etrecord is not None:
        program.get_etrecord().save(str(options.etrecord))
        logger.info("wrote %s", options.etrecord)


def _check_input_files(options: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Exits naming an input file flag whose path is missing or a folder, before exporting."""
    files = (
        ("--params", options.params),
        ("--checkpoint", options.checkpoint),
        ("--tokenizer", options.tokenizer),
        ("--dataset", options.dataset),
    )
    for flag, path in files:
        if path is not None and not path.is_file():
            parser.error(f"{flag} {path}: {'a folder' if path.is_dir() else 'no such file'}; give a file")


def _paged_by_default(options: argparse.Namespace, cache_precision: Optional[str]) -> bool:
    """Whether the KV cache goes into PagedAttention form when neither --paged-attention nor
    --no-paged-attention is given: where it applies, as OpenVINO GenAI's LLMPipeline runs an
    LLM on a CPU. At f32 it computes the stateful form's values, fills long prompts faster
    and decodes in the same time (docs/llm.md#pagedattention). Logs at INFO why not, where
    the flags say; what only the export finds (a sliding window, attention OpenVINO does not
    rewrite) raises PagedAttentionRefused there, and main exports again without it."""
    reason = None
    if device_type(options.device) != "CPU":
        reason = f"--device {options.device}: paged_attention runs on CPU"
    elif options.one_token_model and cache_precision == "u8":
        reason = "--one-token-model keeps prompts on the stateful cache, whose values cannot move into u8 blocks"
    elif options.one_token_model:
        reason = "--one-token-model keeps prompts on the stateful cache (--paged-attention with it pages decode steps)"
    elif options.precision == "f16":
        # preprocessing/paged_attention.py: refuse_several_tokens_at_f16
        reason = "--precision f16: OpenVINO 2026.4.1's CPU plugin computes prompts wrong in PagedAttention form at f16"
    elif options.hf and _is_encoder_decoder(options.hf):
        reason = "an encoder-decoder's text_decoder keeps its caches in the stateful form"
    if reason:
        logger.info(_STATEFUL_BECAUSE, reason)
    return reason is None


def paged_where_it_applies(export: Callable[[bool], T], paged: bool = True) -> T:
    """``export(paged_attention)`` in the export command's default form: ``export(True)``
    when `paged`, and ``export(False)`` with an INFO line saying why when the export
    refuses the form (PagedAttentionRefused: a sliding window, Gemma 3's attention) or
    `paged` is False."""
    if not paged:
        return export(False)
    try:
        return export(True)
    except PagedAttentionRefused as refused:
        logger.info(_STATEFUL_BECAUSE, refused)
        return export(False)


def _refuse_etrecord(options: argparse.Namespace) -> None:
    """--etrecord for a program without a method named forward: ExecuTorch 1.5.1's Inspector
    looks the ETRecord up under forward only (KeyError: 'forward')."""
    if options.etrecord is not None:
        raise SystemExit(
            "--etrecord: this program has no method named forward, and ExecuTorch 1.5.1's Inspector reads an "
            "ETRecord for a method named forward only; profile it with an ETDump alone, which the Inspector "
            "reads without an ETRecord (docs/profiling.md)"
        )


def _is_encoder_decoder(folder: Path) -> bool:
    try:
        return is_encoder_decoder_folder(folder)
    except (ImportError, FileNotFoundError) as error:  # as _export_huggingface says them
        raise SystemExit(str(error)) from None


# ExecuTorch's overrides: key=value with a dotted key, + first to add one. A flag's value
# with "=" in it (a path such as a=b/x.pte) is not one.
_OVERRIDE = re.compile(r"^\+?[A-Za-z_][\w.]*=")


def _flags_from_llm_config(argv: List[str]) -> List[str]:
    """Our flags for ``--config FILE`` with ExecuTorch's overrides (``key=value``), then the
    other flags given, which win (llm_config.py)."""
    from .llm_config import export_flags, load_llm_config

    at = argv.index("--config")
    if at + 1 >= len(argv):
        raise SystemExit("--config needs the path of an LLM config file (YAML)")
    path, rest = Path(argv[at + 1]), argv[:at] + argv[at + 2 :]
    overrides = [item for item in rest if _OVERRIDE.match(item)]
    flags = [item for item in rest if item not in overrides]
    try:
        return export_flags(load_llm_config(path, overrides)) + flags
    except (ValueError, FileNotFoundError, ImportError) as error:
        raise SystemExit(f"--config {path}: {error}") from None


def _compression_from(options: argparse.Namespace, parser: argparse.ArgumentParser) -> Optional[Dict[str, Any]]:
    """The nncf.compress_weights arguments the flags ask for, checked (the dataset is added per export)."""
    if options.dataset is None:
        alone = [flag for flag in ("tokenizer", "num_samples") if getattr(options, flag) is not None]
        if alone:
            parser.error(
                f"{' and '.join('--' + flag.replace('_', '-') for flag in alone)}: for the calibration text, "
                "which --dataset gives"
            )
    data_aware = {name: True for name in DATA_AWARE if getattr(options, name)}
    mixed = {
        key: value for key, value in (("ratio", options.ratio), ("backup_mode", options.backup_precision)) if value
    }
    if not options.weight_compression:
        if data_aware or mixed or options.dataset or options.group_size is not None:
            parser.error(
                "--awq, --scale-estimation, --gptq, --lora-correction, --ratio, --backup-precision, --group-size "
                "and --dataset need --weight-compression"
            )
        return None
    if options.group_size is not None and options.group_size != -1 and options.group_size < 1:
        parser.error(f"--group-size is {options.group_size}; accepted: a positive count of channels, or -1 per channel")
    compression = compression_settings(
        WEIGHT_COMPRESSION_FORMS.get(options.weight_compression, {"mode": options.weight_compression})
    )
    if options.group_size is not None:
        compression["group_size"] = options.group_size
    compression.update(data_aware, **mixed)
    try:
        if options.dataset:
            # Read now: a missing or empty file fails before the export starts.
            count = _NUM_SAMPLES if options.num_samples is None else options.num_samples
            compression["dataset"] = read_samples(options.dataset, count)
        check_compression(compression)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(str(error)) from None
    return compression


def _with_calibration(
    compression: Optional[Dict[str, Any]], tokenizer: Any, vocab_size: int, max_seq_len: int, dynamic: bool, bos: int
) -> Optional[Dict[str, Any]]:
    """`compression` with its calibration texts turned into the model's inputs."""
    if not compression or compression.get("dataset") is None:
        return compression
    try:
        inputs = calibration_inputs(
            compression["dataset"],
            tokenizer,
            vocab_size=vocab_size,
            max_seq_len=max_seq_len,
            dynamic_shape=dynamic,
            bos_id=bos,
        )
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return {**compression, "dataset": inputs}


def _export_huggingface(
    options: argparse.Namespace, specs: List[CompileSpec], compression: Optional[Dict[str, Any]]
) -> ExecutorchProgramManager:
    try:
        if is_vision_language_folder(options.hf):
            _refuse_etrecord(options)
            return _export_vision_language(options, specs, compression, export_vision_language)
        if is_encoder_decoder_folder(options.hf):
            _refuse_etrecord(options)
            for flag in ("static_shape", "one_token_model", "paged_attention"):
                if getattr(options, flag):
                    raise SystemExit(
                        f"--{flag.replace('_', '-')} is for decoder-only LLMs; an encoder-decoder's text_decoder "
                        "takes one token a call already"
                    )
            if compression and compression.get("dataset") is not None:
                raise SystemExit(
                    "--dataset: data-aware compression of encoder-decoders is not supported; compress "
                    "them data-free (--weight-compression alone)"
                )
            return export_encoder_decoder(
                options.hf,
                max_seq_len=options.max_seq_len,
                max_source_len=options.max_source_len,
                compile_specs=specs,
                weight_compression=compression,
                start_id=options.bos_id,
                eos_ids=options.eos_id,
                generate_etrecord=options.etrecord is not None,
            )
        _refuse_audio_language(options.hf)
        if options.max_source_len is not None:
            raise SystemExit("--max-source-len is for encoder-decoders (T5, BART), not this decoder-only model")
        if compression and compression.get("dataset") is not None:
            compression = _hf_calibration(options, compression)
        return export_huggingface_llm(
            options.hf,
            max_seq_len=options.max_seq_len,
            dynamic_shape=not options.static_shape,
            compile_specs=specs,
            weight_compression=compression,
            bos_id=options.bos_id,
            eos_ids=options.eos_id,
            generate_etrecord=options.etrecord is not None,
        )
    except (ImportError, FileNotFoundError) as error:
        raise SystemExit(str(error)) from None
    except NotImplementedError as error:  # a family the export does not handle, found while tracing it
        raise SystemExit(f"--hf {options.hf}: model type {_model_type(options.hf)!r}: {error}") from None


def _model_type(folder: Path) -> Optional[str]:
    """The ``model_type`` in the folder's config.json, or None where it cannot be read."""
    try:
        return json.loads((Path(folder) / "config.json").read_text()).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None


def _refuse_audio_language(folder: Path) -> None:
    """Exits naming an audio-language folder (Voxtral: an audio encoder beside a text
    model), whose layout adds an ``audio_encoder`` method this export does not write,
    before transformers' causal-LM loader fails on it with a list of every decoder it
    knows."""
    if not (Path(folder) / "config.json").is_file():
        return  # the loader names the missing file
    config = require_transformers().AutoConfig.from_pretrained(Path(folder))
    if getattr(config, "audio_config", None) is not None and getattr(config, "text_config", None) is not None:
        raise SystemExit(
            f"audio-language model type {config.model_type!r} is not supported: --hf takes decoder-only LLMs, "
            "encoder-decoders (Whisper, T5, BART, Marian) and vision-language models (LLaVA, Gemma 3) "
            "(docs/huggingface.md)"
        )


def _export_vision_language(
    options: argparse.Namespace, specs: List[CompileSpec], compression: Optional[Dict[str, Any]], export: Any
) -> ExecutorchProgramManager:
    for flag in ("static_shape", "one_token_model", "max_source_len"):
        if getattr(options, flag):
            raise SystemExit(f"--{flag.replace('_', '-')} does not apply to a vision-language model's export")
    if compression and compression.get("dataset") is not None:
        raise SystemExit(
            "--dataset: data-aware compression of vision-language models is not supported; compress "
            "them data-free (--weight-compression alone)"
        )
    try:
        check_supported_folder(options.hf)
    except ValueError as error:
        raise SystemExit(f"--hf {options.hf}: {error}") from None
    return export(
        options.hf,
        max_seq_len=options.max_seq_len,
        compile_specs=specs,
        weight_compression=compression,
        bos_id=options.bos_id,
        eos_ids=options.eos_id,
    )


def _hf_calibration(options: argparse.Namespace, compression: Dict[str, Any]) -> Dict[str, Any]:
    if options.tokenizer is not None:
        raise SystemExit(
            "--tokenizer is for --params exports; a --hf folder's own tokenizer reads the calibration text"
        )
    model = load_model(options.hf)
    bos = configured_bos_id(model) if options.bos_id is None else options.bos_id
    vocab = model.config.get_text_config().vocab_size
    tokenizer = folder_tokenizer(options.hf)
    return _with_calibration(compression, tokenizer, vocab, options.max_seq_len, not options.static_shape, bos)


def _export_params(
    options: argparse.Namespace, specs: List[CompileSpec], compression: Optional[Dict[str, Any]]
) -> ExecutorchProgramManager:
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    args = _model_args(
        options.params, options.max_seq_len, not options.static_shape, options.vocab_size, options.model_class
    )
    bos = 1 if options.bos_id is None else options.bos_id
    if compression and compression.get("dataset") is not None:
        if options.tokenizer is None:
            raise SystemExit("--dataset with --params needs --tokenizer: the tokenizer of the calibration text")
        try:
            tokenizer = load_tokenizer(options.tokenizer)
        except FileNotFoundError as error:
            raise SystemExit(str(error)) from None
        compression = _with_calibration(
            compression, tokenizer, args.vocab_size, args.max_seq_len, args.enable_dynamic_shape, bos
        )
    model = construct_transformer(args)
    if options.checkpoint:
        try:
            state = torch.load(options.checkpoint, map_location="cpu", weights_only=True)
        except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as error:
            raise SystemExit(f"--checkpoint {options.checkpoint}: not a readable torch checkpoint: {error}") from None
        try:
            missing, unexpected = model.load_state_dict(state, strict=False)
        except RuntimeError as error:  # sizes that differ: torch lists every tensor
            first = [line.strip() for line in str(error).splitlines() if "size mismatch" in line][:1]
            raise SystemExit(f"checkpoint does not fit params: {(first or [str(error)])[0]} ...") from None
        # The caches and the rope tables are buffers the checkpoint does not hold.
        missing = [
            name for name in missing if not name.endswith(("k_cache", "v_cache", "mask", "freqs_cos", "freqs_sin"))
        ]
        if missing or unexpected:
            raise SystemExit(f"checkpoint does not fit params: missing {missing[:5]}, unexpected {unexpected[:5]}")
    return export_llm(
        model,
        args,
        compile_specs=specs,
        bos_id=bos,
        eos_ids=options.eos_id or [2],
        weight_compression=compression,
        generate_etrecord=options.etrecord is not None,
    )


if __name__ == "__main__":
    main()
