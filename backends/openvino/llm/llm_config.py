"""ExecuTorch's LLM export configuration (``LlmConfig``) read for our export.

ExecuTorch's ``export_llm`` reads a YAML file into the ``LlmConfig`` dataclasses of the
executorch wheel (``executorch.extension.llm.export.config.llm_config``), with command
line overrides in Hydra's form (``key=value``, ``+key=value``). ExecuTorch's OpenVINO
guide publishes such files (``llama3_2_ov_4wo.yaml``). ``python -m
executorch_openvino.llm.export --config FILE [overrides]`` reads them the same way,
with OmegaConf and those dataclasses, and turns what applies to this backend into our
export's own flags (:func:`export_flags`), so one code path exports either way.

Every key that differs from ``LlmConfig``'s default must be one this backend applies
(:data:`APPLIED`); any other is refused with its name, never ignored.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Sequence

#: The keys this backend applies, each to the flags export_flags writes for it.
APPLIED = frozenset(
    {
        "base.model_class",
        "base.params",
        "base.checkpoint",
        "base.tokenizer_path",
        "base.metadata",
        "model.use_kv_cache",
        "model.enable_dynamic_shape",
        "model.dtype_override",
        "export.max_seq_length",
        "export.max_context_length",
        "export.output_dir",
        "export.output_name",
        "quantization.pt2e_quantize",
        "quantization.group_size",
        "quantization.calibration_data",
        "backend.openvino.enabled",
        "backend.openvino.device",
        "backend.openvino.nncf_compression_group_size",
        "backend.openvino.openvino_awq",
        "backend.openvino.openvino_scale_estimation",
        "debug.verbose",
        "debug.generate_etrecord",
    }
)
#: ExecuTorch's OpenVINO quantization schemes and NNCF's weight compression for each
#: (as the executorch wheel's get_ov_quantizer makes them).
PT2E_QUANTIZE = {"openvino_4wo": "int4_sym", "openvino_8wo": "int8_asym"}
#: The metadata keys the runner reads that our flags set.
METADATA = {"get_bos_id": "--bos-id", "get_eos_ids": "--eos-id"}
DTYPES = {"fp32": None, "bf16": "bf16", "fp16": "f16"}


def load_llm_config(path: Path, overrides: Sequence[str] = ()) -> Any:
    """An ``LlmConfig`` from a YAML file and Hydra-style overrides (``+`` prefixes allowed)."""
    try:
        from omegaconf import OmegaConf
    except ImportError as error:
        raise ImportError("--config needs omegaconf, as ExecuTorch's export_llm: pip install omegaconf") from error
    from executorch.extension.llm.export.config.llm_config import LlmConfig

    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such LLM config file")
    bad = [override for override in overrides if "=" not in override]
    if bad:
        raise ValueError(f"overrides take the form key=value (or +key=value), not {bad[0]!r}")
    import yaml
    from omegaconf.errors import OmegaConfBaseException

    dotlist = [override[1:] if override.startswith("+") else override for override in overrides]
    try:
        merged = OmegaConf.merge(OmegaConf.structured(LlmConfig), OmegaConf.load(path), OmegaConf.from_dotlist(dotlist))
        return OmegaConf.to_object(merged)
    except (OmegaConfBaseException, yaml.YAMLError) as error:  # an unknown key, a bad type, broken YAML
        raise ValueError(" ".join(str(error).split())) from error


def changed_keys(config: Any) -> Dict[str, Any]:
    """The dotted keys whose values differ from ``LlmConfig``'s defaults, with their values."""
    from executorch.extension.llm.export.config.llm_config import LlmConfig

    return {key: value for key, value in _flat(config).items() if _flat(LlmConfig()).get(key, object()) != value}


def _flat(node: Any, prefix: str = "") -> Dict[str, Any]:
    if dataclasses.is_dataclass(node):
        flat: Dict[str, Any] = {}
        for field in dataclasses.fields(node):
            flat.update(_flat(getattr(node, field.name), f"{prefix}{field.name}."))
        return flat
    return {prefix[:-1]: node.value if isinstance(node, enum.Enum) else node}


def export_flags(config: Any) -> List[str]:
    """Our export's flags for `config`; ValueError naming the first key that does not apply."""
    changed = changed_keys(config)
    refused = sorted(set(changed) - APPLIED)
    if refused:
        raise ValueError(
            f"{refused[0]} = {changed[refused[0]]!r} does not apply to the OpenVINO backend's export"
            + (f" (nor do {', '.join(refused[1:])})" if refused[1:] else "")
            + f"; it applies {', '.join(sorted(APPLIED))}"
        )
    base, model, export, openvino = config.base, config.model, config.export, config.backend.openvino
    _require(openvino.enabled, "backend.openvino.enabled", "set it True: this export lowers to OpenVINO")
    _require(model.use_kv_cache, "model.use_kv_cache", "set it True: this export keeps the KV cache in OpenVINO")
    _require(base.params, "base.params", "give the params.json of the checkpoint")
    if export.max_seq_length != export.max_context_length:
        raise ValueError(
            f"export.max_seq_length {export.max_seq_length} differs from export.max_context_length "
            f"{export.max_context_length}: this export takes prompts up to the cache's length; set them equal"
        )
    name = export.output_name or f"openvino_{_value(base.model_class)}.pte"
    flags = ["--params", base.params, "--model-class", _value(base.model_class)]
    flags += ["--output", str(Path(export.output_dir) / name)]
    flags += ["--max-seq-len", str(export.max_context_length), "--device", openvino.device]
    if base.checkpoint:
        flags += ["--checkpoint", base.checkpoint]
    if not model.enable_dynamic_shape:
        flags.append("--static-shape")
    dtype = _value(model.dtype_override)
    if dtype not in DTYPES:
        raise ValueError(f"model.dtype_override {dtype!r}: accepted {', '.join(DTYPES)}")
    if DTYPES[dtype]:
        # OpenVINO computes in that precision; the weights are stored in float32.
        flags += ["--precision", DTYPES[dtype]]
    flags += _metadata_flags(base.metadata)
    flags += _quantization_flags(config)
    if config.debug.generate_etrecord:
        flags += ["--etrecord", str(Path(export.output_dir) / "etrecord.bin")]
    return flags


def _quantization_flags(config: Any) -> List[str]:
    quantization, openvino = config.quantization, config.backend.openvino
    scheme = _value(quantization.pt2e_quantize)
    data_aware = {"--awq": openvino.openvino_awq, "--scale-estimation": openvino.openvino_scale_estimation}
    if scheme is None:
        if any(data_aware.values()):
            raise ValueError(
                "backend.openvino.openvino_awq and openvino_scale_estimation need quantization.pt2e_quantize"
            )
        return []
    if scheme not in PT2E_QUANTIZE:
        raise ValueError(f"quantization.pt2e_quantize {scheme!r}: the OpenVINO backend runs {', '.join(PT2E_QUANTIZE)}")
    flags = ["--weight-compression", PT2E_QUANTIZE[scheme]]
    if scheme == "openvino_4wo":
        # ExecuTorch's export: quantization.group_size, else 128.
        group = quantization.group_size or _explicit_group(openvino.nncf_compression_group_size) or 128
        flags += ["--group-size", str(group), "--ratio", "1.0"]
    flags += [flag for flag, on in data_aware.items() if on]
    if any(data_aware.values()):
        _require(config.base.tokenizer_path, "base.tokenizer_path", "the calibration text is tokenized with it")
        _require(quantization.calibration_data, "quantization.calibration_data", "it is the calibration text")
        # The prompt is the one calibration sample, as a file of one line.
        with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="calibration-", delete=False) as text:
            text.write(" ".join(quantization.calibration_data.split()) + "\n")
        flags += ["--tokenizer", config.base.tokenizer_path, "--dataset", text.name, "--num-samples", "1"]
    return flags


def _explicit_group(size: int) -> int:
    """backend.openvino.nncf_compression_group_size when it was set (its default is 32)."""
    return 0 if size == 32 else size


def _metadata_flags(metadata: Any) -> List[str]:
    if not metadata:
        return []
    try:
        values = json.loads(metadata)
    except json.JSONDecodeError as error:
        raise ValueError(f"base.metadata is not JSON: {error}") from None
    unknown = sorted(set(values) - set(METADATA))
    if unknown:
        raise ValueError(
            f"base.metadata key {unknown[0]!r} is not one this export writes; it writes {', '.join(METADATA)}"
        )
    flags = []
    if "get_bos_id" in values:
        flags += ["--bos-id", str(int(values["get_bos_id"]))]
    for eos in values.get("get_eos_ids", []):
        flags += ["--eos-id", str(int(eos))]
    return flags


def _require(value: Any, key: str, why: str) -> None:
    if not value:
        raise ValueError(f"{key} is {value!r}: {why}")


def _value(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value
