"""Weight compression of an exported LLM with NNCF: the named forms and the arguments checked
before anything is exported.

Read by every export of this folder (decoder_program.py, huggingface.py,
encoder_decoder.py, vision_language.py) and by the command line (export.py).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Union

import torch

from .calibration import DATA_AWARE

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


#: The precisions NNCF keeps the layers in that a ratio below 1 leaves out of 4 bits.
BACKUP_PRECISIONS = ("int8_asym", "int8_sym", "none")


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
    its ``dataset`` may be a list of the model's inputs (calibration.py).
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
    module = exported.module()
    # NNCF 3.4.0 fails on a product whose result nothing reads ("Node with name linear_9
    # is not found"): Gemma 3's vision tower keeps SigLIP's pooling head, which the model
    # never uses. In-place writes (the KV cache) count as used and stay.
    module.graph.eliminate_dead_code()
    module.recompile()
    try:
        return nncf.compress_weights(module, mode=mode, dataset=dataset, **settings)
    except nncf.InvalidGroupSizeError as error:
        groups = settings.get("group_size")
        raise ValueError(
            f"weight compression: {f'groups of {groups}' if groups else 'NNCF default groups'} do not divide the "
            "input channels of every layer; give a group_size that does (--group-size on the command line), or -1 "
            f"for one group per channel. NNCF: {error}"
        ) from error


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
    if settings.get("lora_correction"):
        raise ValueError(
            "weight compression: NNCF 3.4.0 does not apply LoRA correction to an exported model (its torch.fx "
            "backend inserts no adapters, through compress_weights or compress_pt2e, so the weights would come "
            "out as without it); use --awq and --scale-estimation"
        )
    if asked and not mode.startswith("int4"):
        raise ValueError(f"weight compression: {', '.join(asked)}: for 4-bit weights only, not mode {mode!r}")
    if (asked or _ratio_below_one(settings)) and settings.get("dataset") is None:
        needs = ", ".join(asked) if asked else f"ratio {settings.get('ratio')} (4-bit layers chosen by activations)"
        raise ValueError(f"weight compression: a calibration dataset (--dataset) is needed for {needs}")
    ratio = settings.get("ratio")
    if ratio is not None and not (isinstance(ratio, (int, float)) and 0 < ratio <= 1):
        raise ValueError(f"weight compression: ratio {ratio!r} is not in (0, 1]")
    backup = settings.get("backup_mode")
    if backup is not None and str(getattr(backup, "value", backup)) not in BACKUP_PRECISIONS:
        raise ValueError(f"weight compression: backup precision {backup!r}; accepted: {', '.join(BACKUP_PRECISIONS)}")
    if backup is not None and not _leaves_layers_to_back_up(settings, mode):
        raise ValueError(
            f"weight compression: backup precision {backup!r} is for the layers kept out of 4 bits (by a ratio "
            f"below 1, or the embedding and output projection without all_layers); mode {mode!r} with ratio "
            f"{settings.get('ratio', 1)} and all_layers {bool(settings.get('all_layers'))} keeps none out"
        )
    return settings


def _leaves_layers_to_back_up(settings: Mapping[str, Any], mode: str) -> bool:
    """Whether NNCF gives any layer the backup precision: only 4-bit modes back layers up,
    those a ratio below 1 leaves out and, without all_layers, the embedding and the last
    product."""
    return not mode.startswith("int8") and (_ratio_below_one(settings) or not settings.get("all_layers"))


def _ratio_below_one(settings: Mapping[str, Any]) -> bool:
    ratio = settings.get("ratio")
    return isinstance(ratio, (int, float)) and ratio < 1
