"""Exports a decoder LLM to a .pte that ExecuTorch's LLM runner drives through OpenVINO.

One call does what the runner needs: export with the runner's calling convention
(``tokens [1, S]``, ``input_pos [1]``), lowering with ``OpenvinoPartitioner``
(the KV cache becomes OpenVINO state, attention one OpenVINO op) and the metadata
methods the runner reads (``get_max_seq_len``, ``get_vocab_size``, ``use_kv_cache``,
``enable_dynamic_shape``, bos and eos ids).

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
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import torch
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec

from ..compile_specs import DYNAMIC_QUANTIZATION_GROUP_SIZE, openvino_compile_specs, parse_compile_specs, with_defaults
from ..partitioner import OpenvinoPartitioner
from .calibration import DATA_AWARE, calibration_inputs, folder_tokenizer, load_tokenizer, read_samples

logger = logging.getLogger(__name__)

#: Named weight-compression forms (``weight_compression="int4"``, ``--weight-compression
#: int4``): the arguments of ``nncf.compress_weights`` each stands for. ``int4`` is the
#: form the CPU plugin decodes fastest among those measured (benchmarks/llm_quantized.py;
#: docs/llm.md#quantized-llms): 4-bit symmetric weights in groups of 128, the embedding
#: and the output projection included (NNCF's default keeps those two 8-bit, and the
#: output projection is read whole every token), as XNNPACK's 8da4w recipe does.
WEIGHT_COMPRESSION_FORMS: Dict[str, Dict[str, Any]] = {
    "int4": {"mode": "int4_sym", "group_size": 128, "ratio": 1.0, "all_layers": True},
    "int8": {"mode": "int8_asym"},
}


#: ``--speed``: the settings OpenVINO GenAI runs an LLM with on a CPU, which are the CPU
#: plugin's own defaults: activations in bf16 (OpenVINO computes in f32 on a CPU without
#: bf16 units, so the preset is safe everywhere) and the KV cache in u8. Faster than the
#: defaults, which keep eager's values; how far the logits move is in docs/llm.md.
SPEED_PRESET: Dict[str, str] = {"inference_precision": "bf16", "kv_cache_precision": "u8"}


#: The precisions NNCF keeps the layers in that a ratio below 1 leaves out of 4 bits.
BACKUP_PRECISIONS = ("int8_asym", "int8_sym", "none")


def runner_metadata(args: Any, bos_id: int, eos_ids: Sequence[int]) -> Dict[str, Any]:
    """The constant methods ExecuTorch's LLM runner reads, from ModelArgs-like settings."""
    max_context_len = getattr(args, "max_context_len", None) or args.max_seq_len
    return {
        "get_max_seq_len": args.max_seq_len,
        "get_max_context_len": max_context_len,
        "get_n_layers": args.n_layers,
        "get_vocab_size": args.vocab_size,
        "use_kv_cache": True,
        "use_sdpa_with_kv_cache": False,
        "enable_dynamic_shape": bool(args.enable_dynamic_shape),
        "get_bos_id": bos_id,
        "get_eos_ids": list(eos_ids),
    }


def export_llm(
    model: torch.nn.Module,
    args: Any,
    *,
    compile_specs: Optional[List[CompileSpec]] = None,
    bos_id: int = 1,
    eos_ids: Sequence[int] = (2,),
    weight_compression: Union[str, Mapping[str, Any], None] = None,
    generate_etrecord: bool = False,
) -> ExecutorchProgramManager:
    """Exports and lowers a KV-cache decoder called as ``model(tokens, {"input_pos": pos})``.

    Args:
        model: the decoder, such as ``construct_transformer(args)`` from
            ``executorch.examples.models.llama``, with ``use_kv_cache=True``.
        args: its settings (``ModelArgs`` or any object with ``max_seq_len``,
            ``n_layers``, ``vocab_size``, ``enable_dynamic_shape``). With
            ``enable_dynamic_shape`` the runner prefills a prompt in one call;
            without it, one token per call.
        compile_specs: from ``openvino_compile_specs(...)`` (device, precision, cache).
        bos_id, eos_ids: the tokenizer's ids, recorded for the runner.
        weight_compression: ``"int4"`` or ``"int8"`` (:data:`WEIGHT_COMPRESSION_FORMS`),
            or arguments of ``nncf.compress_weights`` such as ``{"mode": "int4_sym",
            "group_size": 64}`` (the mode a ``nncf.CompressWeightsMode`` or its value);
            data-aware ones (``awq``, ``scale_estimation``, ``lora_correction``, a
            ``ratio`` below 1) take a ``dataset`` of the model's inputs
            (``calibration.calibration_inputs``). :func:`check_compression` says what is refused.
            Needs the ``quantization`` extra. OpenVINO then receives 4-bit or 8-bit
            weights (partition/compressed_weights.py). With 4-bit weights in groups
            (``"int4"``: 128) the CPU plugin quantizes activations in groups as long,
            unless ``compile_specs`` set ``dynamic_quantization_group_size``.
        generate_etrecord: also record an ETRecord (``program.get_etrecord()``), which
            ``executorch.devtools.Inspector`` reads with an ETDump to relate OpenVINO's
            layers to the model's operators (docs/profiling.md).

    Example::

        args = ModelArgs(dim=288, n_layers=6, n_heads=6, n_kv_heads=2, vocab_size=512,
                         max_seq_len=256, use_kv_cache=True, enable_dynamic_shape=True)
        program = export_llm(construct_transformer(args).eval(), args)
        Path("llama.pte").write_bytes(program.buffer)
    """
    if not getattr(args, "use_kv_cache", True):
        raise ValueError(
            "export_llm: the model must be built with use_kv_cache=True; "
            "ExecuTorch's LLM runner feeds one token per call after the prompt"
        )
    options = parse_compile_specs(compile_specs)
    if options.paged_attention:
        _check_paged_attention_fits(args, options.one_token_model)
    compression = check_compression(compression_settings(weight_compression)) if weight_compression else None
    compile_specs = compile_specs_for_compressed_weights(compile_specs, compression)
    tokens = torch.tensor([[bos_id, bos_id]], dtype=torch.long)
    positions = torch.tensor([0], dtype=torch.long)
    dynamic_shapes = None
    if args.enable_dynamic_shape:
        sequence = torch.export.Dim("sequence", min=1, max=args.max_seq_len - 1)
        dynamic_shapes = ({1: sequence}, {"input_pos": None})
    else:
        tokens = tokens[:, :1]
    with torch.no_grad():
        example = (tokens, {"input_pos": positions})
        exported = export_in_eval_mode(model, example, dynamic_shapes)
        if compression:
            compressed = compressed_module(exported, compression)
            exported = torch.export.export(compressed, example, dynamic_shapes=dynamic_shapes)
        edge = to_edge_transform_and_lower(
            exported,
            partitioner=[OpenvinoPartitioner(compile_specs)],
            constant_methods=runner_metadata(args, bos_id, eos_ids),
            generate_etrecord=generate_etrecord,
        )
    return edge.to_executorch()


def compile_specs_for_compressed_weights(
    compile_specs: Optional[List[CompileSpec]], compression: Optional[Mapping[str, Any]]
) -> Optional[List[CompileSpec]]:
    """The compile specs export_llm lowers weights compressed with `compression` (arguments
    of ``nncf.compress_weights``) with: `compile_specs`, plus for 4-bit weights in groups
    (the ``int4`` form: 128) dynamic_quantization_group_size as long as those groups,
    unless `compile_specs` set it. A new list; `compile_specs` is left as it was.

    The CPU plugin quantizes the activations of compressed-weight layers to int8 in groups
    (its default 32, on CPUs with VNNI or AMX). In groups as long as the weights' its 4-bit
    products run faster: with the ``int4`` form decode took 0.73-0.92x the time on an AMD
    EPYC Zen 5 (OpenVINO 2026.4.1; benchmarks/results/llm-quantized-zen5-2026-12-05.md),
    the largest relative logit error against f32 activations 1.1-1.4e-2 instead of
    0.9-1.0e-2 (XNNPACK's 8da4w, one group per token: 1.5e-2 against its eager model).
    """
    settings = compression or {}
    mode = str(getattr(settings.get("mode"), "value", settings.get("mode")))  # a CompressWeightsMode or its value
    group = settings.get("group_size")
    four_bit_groups = mode.startswith("int4") and isinstance(group, int) and group > 0
    if not four_bit_groups or parse_compile_specs(compile_specs).dynamic_quantization_group_size is not None:
        return compile_specs
    activation_groups = openvino_compile_specs(dynamic_quantization_group_size=group)
    return [*with_defaults(compile_specs), *(s for s in activation_groups if s.key == DYNAMIC_QUANTIZATION_GROUP_SIZE)]


def _check_paged_attention_fits(args: Any, one_token_model: bool) -> None:
    """Refuses, before the export, a model the compile spec paged_attention would run wrong or not at all."""
    if args.enable_dynamic_shape and not one_token_model:
        raise ValueError(
            "export_llm: paged_attention takes one token a call; export with enable_dynamic_shape=False "
            "(--static-shape), or add one_token_model, whose calls of one token then run in that form"
        )
    window = getattr(args, "sliding_window", None)
    if window:
        # OpenVINO's SDPAToPagedAttention makes attention causal over the whole cache and
        # drops the window's mask (OpenVINO 2026.4.1): the logits would differ from position
        # `window` on, without an error.
        raise ValueError(
            f"export_llm: paged_attention does not keep a sliding window (sliding_window={window}); "
            "export this model without it"
        )


def export_in_eval_mode(
    model: torch.nn.Module, example: tuple, dynamic_shapes: Optional[tuple], strict: bool = False
) -> torch.export.ExportedProgram:
    """Exports `model` in eval mode, then gives each submodule back the mode it had:
    the module is the caller's."""
    with modules_in_eval_mode(model):
        return torch.export.export(model, example, dynamic_shapes=dynamic_shapes, strict=strict)


@contextlib.contextmanager
def modules_in_eval_mode(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """`model` in eval mode for the block; each submodule gets back the mode it had."""
    modes = {module: module.training for module in model.modules()}
    try:
        yield model.eval()
    finally:
        for module, training in modes.items():
            module.training = training


def compression_settings(weight_compression: Union[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The ``nncf.compress_weights`` arguments a ``weight_compression`` value stands for."""
    if isinstance(weight_compression, str):
        if weight_compression not in WEIGHT_COMPRESSION_FORMS:
            raise ValueError(
                f"export_llm: weight_compression {weight_compression!r} is not a named form; "
                f"use one of {sorted(WEIGHT_COMPRESSION_FORMS)} or a dict of nncf.compress_weights arguments"
            )
        return dict(WEIGHT_COMPRESSION_FORMS[weight_compression])
    return dict(weight_compression)


def compressed_module(exported: torch.export.ExportedProgram, settings: Dict[str, Any]) -> torch.nn.Module:
    """The exported model with its weights compressed by NNCF, to be exported again.

    `settings` are ``nncf.compress_weights`` arguments, checked by :func:`check_compression`;
    its ``dataset`` may be a list of the model's inputs (calibration.py). LoRA correction
    goes through NNCF's ``compress_pt2e`` with ExecuTorch's OpenVINOQuantizer, the one NNCF
    3.4.0 path that applies it to an exported model.
    """
    nncf = _nncf()
    settings = check_compression(settings)
    mode = nncf.CompressWeightsMode(settings.pop("mode", nncf.CompressWeightsMode.INT8_ASYM))
    dataset = settings.pop("dataset", None)
    if dataset is not None and not isinstance(dataset, nncf.Dataset):
        settings.setdefault("subset_size", len(dataset))
        dataset = nncf.Dataset(list(dataset))
    if "backup_mode" in settings:
        settings["backup_mode"] = nncf.BackupMode(getattr(settings["backup_mode"], "value", settings["backup_mode"]))
    for flag in ("gptq", "lora_correction"):  # NNCF's torch.fx backend refuses them even when False
        if not settings.get(flag):
            settings.pop(flag, None)
    if settings.pop("lora_correction", False):
        return _compressed_with_lora_correction(exported, mode, dataset, settings)
    return nncf.compress_weights(exported.module(), mode=mode, dataset=dataset, **settings)


def _compressed_with_lora_correction(
    exported: torch.export.ExportedProgram, mode: Any, dataset: Any, settings: Dict[str, Any]
) -> torch.nn.Module:
    from executorch.backends.openvino.quantizer import OpenVINOQuantizer, QuantizationMode
    from nncf.experimental.torch.fx import compress_pt2e

    quantizer_mode = QuantizationMode.INT4WO_SYM if mode.value == "int4_sym" else QuantizationMode.INT4WO_ASYM
    quantizer_options = {
        key: settings.pop(key) for key in ("group_size", "all_layers", "backup_mode") if key in settings
    }
    quantizer = OpenVINOQuantizer(mode=quantizer_mode, **quantizer_options)
    return compress_pt2e(exported.module(), quantizer, dataset=dataset, lora_correction=True, **settings)


def _nncf() -> Any:
    try:
        import nncf
    except ImportError as error:
        raise ImportError(
            "export_llm: weight_compression needs NNCF: pip install 'executorch-openvino[quantization]'"
        ) from error
    return nncf


def check_compression(settings: Mapping[str, Any]) -> Dict[str, Any]:
    """`settings` checked before anything is exported: what NNCF 3.4.0 refuses on an
    exported model, or would drop without an error, is refused here with the reason."""
    settings = dict(settings)
    mode = str(getattr(settings.get("mode"), "value", settings.get("mode") or "int8_asym"))
    asked = [name for name in DATA_AWARE if settings.get(name)]
    if settings.get("gptq"):
        raise ValueError(
            "weight compression: NNCF 3.4.0 does not run GPTQ on an exported model ('TorchFX backend does not "
            "support gptq option(s)', and compress_pt2e: 'Cannot return backend-specific entity because TorchFX is "
            "not supported!'); use --awq and --scale-estimation"
        )
    if asked and not mode.startswith("int4"):
        raise ValueError(f"weight compression: {', '.join(asked)}: for 4-bit weights only, not mode {mode!r}")
    if (asked or _ratio_below_one(settings)) and settings.get("dataset") is None:
        needs = ", ".join(asked) if asked else f"ratio {settings.get('ratio')} (4-bit layers chosen by activations)"
        raise ValueError(f"weight compression: a calibration dataset (--dataset) is needed for {needs}")
    if settings.get("lora_correction") and (settings.get("awq") or settings.get("scale_estimation")):
        raise ValueError("weight compression: LoRA correction runs alone here; drop --awq and --scale-estimation")
    ratio = settings.get("ratio")
    if ratio is not None and not (isinstance(ratio, (int, float)) and 0 < ratio <= 1):
        raise ValueError(f"weight compression: ratio {ratio!r} is not in (0, 1]")
    backup = settings.get("backup_mode")
    if backup is not None and str(getattr(backup, "value", backup)) not in BACKUP_PRECISIONS:
        raise ValueError(f"weight compression: backup precision {backup!r}; accepted: {', '.join(BACKUP_PRECISIONS)}")
    return settings


def _ratio_below_one(settings: Mapping[str, Any]) -> bool:
    ratio = settings.get("ratio")
    return isinstance(ratio, (int, float)) and ratio < 1


def _model_args(params: Path, max_seq_len: int, dynamic_shape: bool, vocab_size: Optional[int] = None):
    import dataclasses

    from executorch.examples.models.llama.model_args import ModelArgs

    settings = json.loads(params.read_text())
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
    return ModelArgs(**settings)


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
        action="store_true",
        help="with --static-shape or --one-token-model: keep the KV cache of calls of one token in OpenVINO's "
        "PagedAttention form, so that going back to an earlier position costs a step (CPU; not for models with "
        "a sliding window)",
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
        help="OpenVINO GenAI's CPU settings: --precision bf16 (f32 where the CPU has no bf16 units) and "
        "--kv-cache-precision u8, unless given; faster, further from eager (docs/llm.md#speed)",
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
        "--lora-correction", action="store_true", help="NNCF's LoRA correction (through compress_pt2e)"
    )
    calibration.add_argument("--dataset", type=Path, help="calibration text, one sample a line")
    calibration.add_argument("--num-samples", type=int, default=128, help="lines of --dataset to use (default 128)")
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
    if "--config" in argv:
        argv = _flags_from_llm_config(argv)
    parser = _parser()
    options = parser.parse_args(argv)
    if options.one_token_model and options.static_shape:
        parser.error("--one-token-model is for dynamic-length exports; --static-shape has one token per call already")
    if options.paged_attention and not (options.static_shape or options.one_token_model):
        parser.error("--paged-attention takes one token a call: add --static-shape or --one-token-model")
    if options.hf and (options.checkpoint or options.vocab_size is not None):
        parser.error("--checkpoint and --vocab-size are for --params; a --hf folder holds its weights and sizes")
    if options.params and options.max_source_len is not None:
        parser.error("--max-source-len is for --hf encoder-decoders (T5, BART)")
    logging.basicConfig(level=logging.INFO)
    preset = SPEED_PRESET if options.speed else {}
    specs = openvino_compile_specs(
        device=options.device,
        inference_precision=options.precision or preset.get("inference_precision"),
        kv_cache_precision=options.kv_cache_precision or preset.get("kv_cache_precision"),
        dynamic_quantization_group_size=options.dynamic_quantization_group_size,
        one_token_model=options.one_token_model or None,
        paged_attention=options.paged_attention or None,
    )
    compression = _compression_from(options, parser)
    if options.hf:
        program = _export_huggingface(options, specs, compression)
    else:
        program = _export_params(options, specs, compression)
    options.output.write_bytes(program.buffer)
    logger.info("wrote %s (%.1f MB)", options.output, len(program.buffer) / 1e6)
    if options.etrecord is not None:
        program.get_etrecord().save(str(options.etrecord))
        logger.info("wrote %s", options.etrecord)


def _flags_from_llm_config(argv: List[str]) -> List[str]:
    """Our flags for ``--config FILE`` with ExecuTorch's overrides (``key=value``), then the
    other flags given, which win (llm_config.py)."""
    from .llm_config import export_flags, load_llm_config

    at = argv.index("--config")
    if at + 1 >= len(argv):
        raise SystemExit("--config needs the path of an LLM config file (YAML)")
    path, rest = Path(argv[at + 1]), argv[:at] + argv[at + 2 :]
    overrides = [item for item in rest if "=" in item and not item.startswith("-")]
    flags = [item for item in rest if item not in overrides]
    try:
        return export_flags(load_llm_config(path, overrides)) + flags
    except (ValueError, FileNotFoundError, ImportError) as error:
        raise SystemExit(f"--config {path}: {error}") from None


def _compression_from(options: argparse.Namespace, parser: argparse.ArgumentParser) -> Optional[Dict[str, Any]]:
    """The nncf.compress_weights arguments the flags ask for, checked (the dataset is added per export)."""
    data_aware = {name: True for name in DATA_AWARE if getattr(options, name)}
    mixed = {
        key: value for key, value in (("ratio", options.ratio), ("backup_mode", options.backup_precision)) if value
    }
    if not options.weight_compression:
        if data_aware or mixed or options.dataset:
            parser.error(
                "--awq, --scale-estimation, --gptq, --lora-correction, --ratio and --dataset need --weight-compression"
            )
        return None
    compression = compression_settings(
        WEIGHT_COMPRESSION_FORMS.get(options.weight_compression, {"mode": options.weight_compression})
    )
    if options.group_size is not None:
        compression["group_size"] = options.group_size
    compression.update(data_aware, **mixed)
    try:
        if options.dataset:
            # Read now: a missing or empty file fails before the export starts.
            compression["dataset"] = read_samples(options.dataset, options.num_samples)
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
    from .encoder_decoder import export_encoder_decoder, is_encoder_decoder_folder
    from .huggingface import export_huggingface_llm
    from .vision_language import export_vision_language, is_vision_language_folder

    try:
        if is_vision_language_folder(options.hf):
            return _export_vision_language(options, specs, compression, export_vision_language)
        if is_encoder_decoder_folder(options.hf):
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


def _export_vision_language(
    options: argparse.Namespace, specs: List[CompileSpec], compression: Optional[Dict[str, Any]], export: Any
) -> ExecutorchProgramManager:
    for flag in ("static_shape", "one_token_model", "paged_attention", "max_source_len"):
        if getattr(options, flag):
            raise SystemExit(f"--{flag.replace('_', '-')} does not apply to a vision-language model's export")
    if compression and compression.get("dataset") is not None:
        raise SystemExit(
            "--dataset: data-aware compression of vision-language models is not supported; compress "
            "them data-free (--weight-compression alone)"
        )
    return export(
        options.hf,
        max_seq_len=options.max_seq_len,
        compile_specs=specs,
        weight_compression=compression,
        bos_id=options.bos_id,
        eos_ids=options.eos_id,
    )


def _hf_calibration(options: argparse.Namespace, compression: Dict[str, Any]) -> Dict[str, Any]:
    from .huggingface import configured_bos_id, load_model

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

    args = _model_args(options.params, options.max_seq_len, not options.static_shape, options.vocab_size)
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
        state = torch.load(options.checkpoint, map_location="cpu", weights_only=True)
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
