"""Compile specs of the OpenVINO delegate: the one place that knows every key.

The partitioner, preprocess and the tests go through this module; the C++ runtime
reads the same keys (``runtime/options.cpp``). Values travel as UTF-8 bytes.

Example::

    from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs

    partitioner = OpenvinoPartitioner(openvino_compile_specs(device="CPU", inference_precision="f32"))
"""

from __future__ import annotations

import functools
import os
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    from executorch.exir.backend.compile_spec_schema import CompileSpec

DEVICE = "device"
INFERENCE_PRECISION = "inference_precision"
PERFORMANCE_HINT = "performance_hint"
CACHE_DIR = "cache_dir"
NUM_STREAMS = "num_streams"
INFERENCE_NUM_THREADS = "inference_num_threads"
DYNAMIC_QUANTIZATION_GROUP_SIZE = "dynamic_quantization_group_size"
ONE_TOKEN_MODEL = "one_token_model"
KV_CACHE_PRECISION = "kv_cache_precision"
PAGED_ATTENTION = "paged_attention"
PER_SEQUENCE_INPUTS = "per_sequence_inputs"
SHARED_WEIGHTS = "shared_weights"
KNOWN_KEYS: Tuple[str, ...] = (
    DEVICE,
    INFERENCE_PRECISION,
    PERFORMANCE_HINT,
    CACHE_DIR,
    NUM_STREAMS,
    INFERENCE_NUM_THREADS,
    DYNAMIC_QUANTIZATION_GROUP_SIZE,
    ONE_TOKEN_MODEL,
    KV_CACHE_PRECISION,
    PAGED_ATTENTION,
    PER_SEQUENCE_INPUTS,
    SHARED_WEIGHTS,
)

PRECISIONS: Tuple[str, ...] = ("f32", "f16", "bf16")
# The CPU plugin also stores a fused KV cache in u8 (its own default, as OpenVINO GenAI runs LLMs).
KV_CACHE_PRECISIONS: Tuple[str, ...] = ("f32", "f16", "bf16", "u8")
PERFORMANCE_HINTS: Tuple[str, ...] = ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT")
# OpenVINO's device plugins, real and virtual. A device may carry an index
# ("GPU.1") or, for virtual devices, a list of targets ("HETERO:GPU,CPU").
KNOWN_DEVICES: Tuple[str, ...] = ("CPU", "GPU", "NPU", "AUTO", "HETERO", "MULTI", "BATCH")


@dataclass(frozen=True)
class OpenvinoOptions:
    """The parsed and checked compile specs of one delegate."""

    device: str = "CPU"
    inference_precision: Optional[str] = None
    performance_hint: str = "LATENCY"
    cache_dir: Optional[str] = None
    num_streams: Optional[str] = None
    inference_num_threads: Optional[int] = None
    # None: OpenVINO's own default (on a CPU with VNNI or AMX, int8 activations in groups
    # of 32 for layers with compressed weights; layers with float weights are not affected).
    dynamic_quantization_group_size: Optional[int] = None
    # A second compiled model for calls of one token (runtime/one_token_model.h).
    one_token_model: bool = False
    # None: the inference precision, so that a KV cache kept in OpenVINO holds what eager holds.
    kv_cache_precision: Optional[str] = None
    # The KV cache in OpenVINO's PagedAttention form (runtime/paged_attention.h).
    paged_attention: bool = False
    # Inputs that keep their value from a call at KV-cache position 0 to the next such
    # call (an encoder's output): what is computed from them alone is computed at
    # position 0 only (conversion/rewrites/per_sequence_values.py).
    per_sequence_inputs: Tuple[str, ...] = ()
    # Digests of weights other methods of the program read too, which preprocess stores
    # once in the program's named data (partition/shared_weights.py); set by the partitioner.
    shared_weights: Tuple[str, ...] = ()

    @property
    def device_type(self) -> str:
        """The plugin name of the device: "GPU" for "GPU.1", "HETERO" for "HETERO:GPU,CPU"."""
        return device_type(self.device)

    @property
    def effective_precision(self) -> Optional[str]:
        """The precision OpenVINO is asked for: the option, else f32 on a CPU (also when
        AUTO, MULTI or HETERO may pick it), else the device's own."""
        if self.inference_precision is not None:
            return self.inference_precision
        return "f32" if cpu_settings_place(self.device) is not None else None

    def cpu_settings(self, float_kernels_for_quantized_layers: bool = False) -> dict:
        """What the CPU plugin needs to compute what eager PyTorch computes (see
        cpu_settings in runtime/options.cpp, which the runtime uses)."""
        precision = self.inference_precision or "f32"
        # The CPU plugin picks bf16 or f16 where the CPU has them, and stores a fused
        # KV cache in u8, which moves results away from eager. Layers with compressed
        # weights keep its dynamic quantization: a user who compressed weights chose
        # approximate numbers (dynamic_quantization_group_size=0 turns it off).
        settings = {"INFERENCE_PRECISION_HINT": precision, "KV_CACHE_PRECISION": self.kv_cache_precision or precision}
        if float_kernels_for_quantized_layers:
            settings["LP_TRANSFORMS_MODE"] = False  # runtime/quantized_layers.h
        return settings

    def compile_config(self, float_kernels_for_quantized_layers: bool = False) -> dict:
        """The configuration for ``openvino.Core.compile_model``, as the runtime builds it.

        The runtime's own (``native_library.runtime_compile_config``) is the definition;
        this copy serves hosts without the runtime library, and
        tests/contracts/test_compile_config_agreement.py checks that the two agree field by field.

        Args:
            float_kernels_for_quantized_layers: what the runtime decides at load for an IR
                with FakeQuantize operations on a CPU whose 8-bit kernels saturate
                (runtime/quantized_layers.h): the CPU plugin's low-precision
                transformations off.
        """
        config = {"PERFORMANCE_HINT": self.performance_hint}
        if self.inference_precision is not None:
            config["INFERENCE_PRECISION_HINT"] = self.inference_precision
        if self.dynamic_quantization_group_size is not None:
            config["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = self.dynamic_quantization_group_size
        place = cpu_settings_place(self.device)
        if place == CPU_SETTINGS_AT_TOP:
            config.update(self.cpu_settings(float_kernels_for_quantized_layers))
        elif place == CPU_SETTINGS_AS_DEVICE_PROPERTIES:
            config["DEVICE_PROPERTIES"] = {"CPU": self.cpu_settings(float_kernels_for_quantized_layers)}
        elif self.kv_cache_precision is not None:
            config["KV_CACHE_PRECISION"] = self.kv_cache_precision
        if self.num_streams is not None:
            config["NUM_STREAMS"] = self.num_streams
        if self.inference_num_threads is not None:
            config["INFERENCE_NUM_THREADS"] = self.inference_num_threads
        if self.cache_dir:
            # A folder per configuration (runtime/options.cpp, openvino_cache_dir; workarounds.py:
            # model_cache_key_leaves_out_settings).
            key = zlib.crc32(_described(config).encode())
            config["CACHE_DIR"] = os.path.join(self.cache_dir, f"compiled-{key:08x}")
        return config


def _described(config: dict) -> str:
    """The runtime's text of a configuration (options.cpp, describe): entries in key order,
    values as OpenVINO prints them, nested maps in braces."""
    text = ""
    for key in sorted(config):
        value = config[key]
        if isinstance(value, dict):
            shown = "{" + _described(value) + "}"
        else:
            shown = ("YES" if value else "NO") if isinstance(value, bool) else str(value)
        text += f"{key}={shown};"
    return text


CPU_SETTINGS_AT_TOP = "top"
CPU_SETTINGS_AS_DEVICE_PROPERTIES = "DEVICE_PROPERTIES"


def cpu_settings_place(device: str) -> Optional[str]:
    """Where the CPU plugin's settings go in the configuration for `device`, the rule
    of cpu_settings_place in runtime/options.cpp: at the top for the CPU and for
    BATCH:CPU (which passes them on), as DEVICE_PROPERTIES for AUTO, MULTI and HETERO
    when they may pick the CPU (no device list, or one naming it), None otherwise.

    Example::

        cpu_settings_place("AUTO:GPU,CPU")  # "DEVICE_PROPERTIES"
        cpu_settings_place("GPU.1")  # None
    """
    kind = device_type(device)
    if kind == "CPU":
        return CPU_SETTINGS_AT_TOP
    listed = device.split(":", 1)[1] if ":" in device else ""
    lists_cpu = any(entry.split(".", 1)[0] == "CPU" for entry in listed.split(",")) if listed else False
    if kind == "BATCH":
        return CPU_SETTINGS_AT_TOP if lists_cpu else None
    if kind in ("AUTO", "MULTI", "HETERO") and (not listed or lists_cpu):
        return CPU_SETTINGS_AS_DEVICE_PROPERTIES
    return None


def device_type(device: str) -> str:
    return device.split(":", 1)[0].split(".", 1)[0]


@functools.lru_cache(maxsize=1)
def available_devices() -> Tuple[str, ...]:
    """The devices OpenVINO finds on this machine, such as ("CPU",)."""
    import openvino

    return tuple(openvino.Core().available_devices)


def check_device(device: str) -> str:
    if not isinstance(device, str) or not device.strip():
        raise ValueError(
            f"OpenVINO device must be a non-empty string, got {device!r}; accepted: {', '.join(KNOWN_DEVICES)}"
        )
    if device_type(device) not in KNOWN_DEVICES:
        raise ValueError(
            f"Unknown OpenVINO device {device!r}; accepted: {', '.join(KNOWN_DEVICES)} "
            f"(with an index such as GPU.1), available here: {', '.join(available_devices())}"
        )
    problem = _device_name_problem(device)
    if problem:
        raise ValueError(
            f"OpenVINO device {device!r} {problem}; accepted: CPU, GPU or NPU (GPU.1 with an index), AUTO, "
            "MULTI, or AUTO:, MULTI:, HETERO: or BATCH: followed by such devices separated by commas (AUTO:-CPU "
            f"to leave one out), available here: {', '.join(available_devices())}"
        )
    return device


_SINGLE_DEVICES = ("CPU", "GPU", "NPU")


def _device_name_problem(device: str) -> Optional[str]:
    """What is wrong with the way `device` is written (a known plugin name assumed),
    or None: OpenVINO itself only says so when a compile fails."""
    kind, _, listed = device.partition(":")
    if kind in _SINGLE_DEVICES or "." in kind:
        return None if _is_single_device(device) else "is not a single device with an index after a dot"
    if ":" not in device:
        return None if kind in ("AUTO", "MULTI") else f"needs a list of devices after {kind}:"
    entries = listed.split(",")
    if kind == "AUTO":
        entries = [entry[1:] if entry.startswith("-") else entry for entry in entries]
    bad = [entry for entry in entries if not _is_single_device(entry)]
    return f"lists {bad[0]!r}, which is not a device" if bad else None


def _is_single_device(name: str) -> bool:
    """CPU, GPU or NPU, the last two with an optional index (GPU.1)."""
    kind, dot, index = name.partition(".")
    if not dot:
        return kind in _SINGLE_DEVICES
    return kind in ("GPU", "NPU") and index.isascii() and index.isdigit()


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"Unknown OpenVINO inference_precision {precision!r}; accepted: {', '.join(PRECISIONS)}")
    return precision


def check_performance_hint(hint: str) -> str:
    if hint not in PERFORMANCE_HINTS:
        raise ValueError(f"Unknown OpenVINO performance_hint {hint!r}; accepted: {', '.join(PERFORMANCE_HINTS)}")
    return hint


def check_cache_dir(cache_dir: Union[str, os.PathLike]) -> str:
    """The folder as text; bytes, numbers and other types are refused rather than
    turned into a folder named after their repr."""
    text = os.fspath(cache_dir) if isinstance(cache_dir, os.PathLike) else cache_dir
    if not isinstance(text, str) or not text or "\0" in text:
        raise ValueError(f"OpenVINO cache_dir must be a non-empty str or os.PathLike path, got {cache_dir!r}")
    return text


def _is_count(value: object, minimum: int) -> bool:
    """Whether `value` is written as the runtime reads a count (parse_count in
    runtime/options.cpp): at most 9 ASCII digits, at least `minimum`."""
    text = str(value)
    return not isinstance(value, bool) and text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= minimum


def check_num_streams(value: str) -> str:
    text = str(value)
    if text != "AUTO" and not _is_count(text, 1):
        raise ValueError(
            f"OpenVINO num_streams {value!r} is not accepted; accepted: a positive integer or AUTO (at most 9 digits)"
        )
    return text


def check_inference_num_threads(value: object) -> int:
    if not _is_count(value, 0):
        raise ValueError(
            f"OpenVINO inference_num_threads {value!r} is not accepted; accepted: an integer >= 0 of at most 9 digits "
            "(0 lets OpenVINO choose)"
        )
    return int(str(value))


def check_dynamic_quantization_group_size(value: object) -> int:
    if not _is_count(value, 0):
        raise ValueError(
            f"OpenVINO dynamic_quantization_group_size {value!r} is not accepted; accepted: an integer >= 0 of "
            "at most 9 digits (0 turns it off; n quantizes activations in groups of n input channels)"
        )
    return int(str(value))


def check_kv_cache_precision(value: str) -> str:
    if value not in KV_CACHE_PRECISIONS:
        raise ValueError(f"Unknown OpenVINO kv_cache_precision {value!r}; accepted: {', '.join(KV_CACHE_PRECISIONS)}")
    return value


def _listed(value: object) -> Tuple[object, ...]:
    """A list spec's items: a sequence, or the text stored (items separated by commas); () for neither."""
    items = value.split(",") if isinstance(value, str) else value
    try:
        return tuple(items)
    except TypeError:
        return ()


def check_per_sequence_inputs(value: object) -> Tuple[str, ...]:
    """Input names, as a sequence of str or as stored (separated by commas)."""
    names = _listed(value)
    if not names or not all(isinstance(name, str) and name.isidentifier() for name in names):
        raise ValueError(
            f"OpenVINO per_sequence_inputs {value!r} is not accepted; accepted: the names of the model's inputs "
            "(Python identifiers, such as the exported program's placeholders), at least one"
        )
    return names


def check_shared_weights(value: object) -> Tuple[str, ...]:
    """Weight digests (hex, as partition/shared_weights.py writes them), as a sequence or as stored."""
    digests = _listed(value)
    if not digests or not all(_is_digest(digest) for digest in digests):
        raise ValueError(
            f"OpenVINO shared_weights {value!r} is not accepted; accepted: digests of 24 lowercase hex digits "
            "(the partitioner writes them), at least one"
        )
    return digests


def _is_digest(text: object) -> bool:
    return isinstance(text, str) and len(text) == 24 and all(c in "0123456789abcdef" for c in text)


def check_flag(key: str, value: object) -> bool:
    """A yes-or-no compile spec: True or False, or "1" or "0" as stored."""
    if not (isinstance(value, bool) or value in ("1", "0")):
        raise ValueError(f"OpenVINO {key} {value!r} is not accepted; accepted: True or False")
    return value in (True, "1")


def openvino_compile_specs(
    device: str = "CPU",
    inference_precision: Optional[str] = None,
    performance_hint: Optional[str] = None,
    cache_dir: Optional[Union[str, os.PathLike]] = None,
    num_streams: Optional[object] = None,
    inference_num_threads: Optional[int] = None,
    dynamic_quantization_group_size: Optional[int] = None,
    one_token_model: Optional[bool] = None,
    kv_cache_precision: Optional[str] = None,
    paged_attention: Optional[bool] = None,
    per_sequence_inputs: Optional[Sequence[str]] = None,
    shared_weights: Optional[Sequence[str]] = None,
) -> List[CompileSpec]:
    """Builds the compile specs of the OpenVINO delegate, checking every value.

    Example::

        openvino_compile_specs()                                   # CPU, float32
        openvino_compile_specs(device="GPU", inference_precision="f16")
        openvino_compile_specs(dynamic_quantization_group_size=32)  # faster compressed weights, int8 activations
        openvino_compile_specs(one_token_model=True)  # dynamic-length LLM: decode as fast as a static export
        openvino_compile_specs(kv_cache_precision="u8")  # an LLM's KV cache in 8 bits, as OpenVINO GenAI keeps it
        openvino_compile_specs(paged_attention=True)  # LLM: faster long prompts, going back costs one step
        openvino_compile_specs(per_sequence_inputs=["encoder_hidden_states"])  # a seq2seq decoder

    ``one_token_model`` applies to a delegate whose KV cache grows by the tokens'
    length (an LLM exported with a dynamic sequence length): the runtime compiles it
    a second time with one token a call and runs decode there, at the cost of the
    weights the device repacks, compiled twice. Other delegates ignore it.
    ``kv_cache_precision`` sets the precision of a KV cache OpenVINO fuses with attention
    (the inference precision by default); ``"u8"`` is the CPU plugin's own default.
    ``paged_attention`` keeps an LLM's KV cache in OpenVINO's PagedAttention form, in
    blocks the runtime owns, so that long prompts fill faster (the CPU plugin's
    PagedAttention kernel) and a call that goes back to an earlier position costs no
    more than a step (docs/llm.md): every call of an LLM exported with a dynamic length,
    prompts included, or with one token a call; with ``one_token_model`` the calls of one
    token only. It assumes
    causal attention over the whole cache: :func:`~executorch_openvino.llm.export.export_llm`
    refuses it for a model with a sliding window. CPU only; a u8 cache not with ``one_token_model``.
    ``per_sequence_inputs`` names inputs of a delegate with a growing KV cache that keep
    their value over a sequence, from a call at position 0 to the next such call (an
    encoder-decoder's ``encoder_hidden_states``): the values computed from them alone,
    such as cross-attention's keys and values, are computed at position 0 and kept as
    OpenVINO state; later calls reuse them whatever those inputs hold then.
    ``shared_weights`` is set by ``OpenvinoPartitioner`` for a program of several methods:
    the digests of the weights that another method reads too, which the program then
    stores once, in its named data.
    """
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    specs = [CompileSpec(DEVICE, check_device(device).encode())]
    if inference_precision is not None:
        specs.append(CompileSpec(INFERENCE_PRECISION, check_precision(inference_precision).encode()))
    if performance_hint is not None:
        specs.append(CompileSpec(PERFORMANCE_HINT, check_performance_hint(performance_hint).encode()))
    if cache_dir is not None:
        specs.append(CompileSpec(CACHE_DIR, check_cache_dir(cache_dir).encode()))
    if num_streams is not None:
        specs.append(CompileSpec(NUM_STREAMS, check_num_streams(num_streams).encode()))
    if inference_num_threads is not None:
        threads = check_inference_num_threads(inference_num_threads)
        specs.append(CompileSpec(INFERENCE_NUM_THREADS, str(threads).encode()))
    if dynamic_quantization_group_size is not None:
        group_size = check_dynamic_quantization_group_size(dynamic_quantization_group_size)
        specs.append(CompileSpec(DYNAMIC_QUANTIZATION_GROUP_SIZE, str(group_size).encode()))
    if one_token_model is not None:
        specs.append(CompileSpec(ONE_TOKEN_MODEL, b"1" if check_flag(ONE_TOKEN_MODEL, one_token_model) else b"0"))
    if kv_cache_precision is not None:
        specs.append(CompileSpec(KV_CACHE_PRECISION, check_kv_cache_precision(kv_cache_precision).encode()))
    if paged_attention is not None:
        specs.append(CompileSpec(PAGED_ATTENTION, b"1" if check_flag(PAGED_ATTENTION, paged_attention) else b"0"))
    if per_sequence_inputs is not None:
        names = check_per_sequence_inputs(per_sequence_inputs)
        specs.append(CompileSpec(PER_SEQUENCE_INPUTS, ",".join(names).encode()))
    if shared_weights is not None:
        specs.append(CompileSpec(SHARED_WEIGHTS, ",".join(check_shared_weights(shared_weights)).encode()))
    return specs


def _decode(spec: CompileSpec) -> str:
    value = spec.value
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"OpenVINO compile spec {spec.key!r} must hold bytes, got {type(value).__name__}")
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"OpenVINO compile spec {spec.key!r} is not UTF-8 text: {bytes(value)!r}") from error


def _spec_list(specs: Optional[Iterable[CompileSpec]]) -> List[CompileSpec]:
    """`specs` as a list; raises TypeError, naming what was given, for anything but CompileSpecs."""
    items = None if isinstance(specs, (str, bytes, dict)) else list(specs or ())
    if items is None or not all(hasattr(spec, "key") and hasattr(spec, "value") for spec in items):
        raise TypeError(
            f"OpenVINO compile specs are a list of CompileSpec, as openvino_compile_specs(...) returns; got {specs!r}"
        )
    return items


def parse_compile_specs(specs: Optional[Iterable[CompileSpec]]) -> OpenvinoOptions:
    """Reads and checks compile specs; raises ValueError naming a bad key or value (TypeError
    for something other than a list of them)."""
    values = {}
    for spec in _spec_list(specs):
        if spec.key not in KNOWN_KEYS:
            raise ValueError(f"Unknown OpenVINO compile spec {spec.key!r}; accepted: {', '.join(KNOWN_KEYS)}")
        if spec.key in values:
            raise ValueError(f"OpenVINO compile spec {spec.key!r} is given twice")
        values[spec.key] = _decode(spec)
    return OpenvinoOptions(
        device=check_device(values.get(DEVICE, "CPU")),
        inference_precision=(check_precision(values[INFERENCE_PRECISION]) if INFERENCE_PRECISION in values else None),
        performance_hint=check_performance_hint(values.get(PERFORMANCE_HINT, "LATENCY")),
        cache_dir=check_cache_dir(values[CACHE_DIR]) if CACHE_DIR in values else None,
        num_streams=check_num_streams(values[NUM_STREAMS]) if NUM_STREAMS in values else None,
        inference_num_threads=(
            check_inference_num_threads(values[INFERENCE_NUM_THREADS]) if INFERENCE_NUM_THREADS in values else None
        ),
        dynamic_quantization_group_size=(
            check_dynamic_quantization_group_size(values[DYNAMIC_QUANTIZATION_GROUP_SIZE])
            if DYNAMIC_QUANTIZATION_GROUP_SIZE in values
            else None
        ),
        one_token_model=check_flag(ONE_TOKEN_MODEL, values[ONE_TOKEN_MODEL]) if ONE_TOKEN_MODEL in values else False,
        kv_cache_precision=(
            check_kv_cache_precision(values[KV_CACHE_PRECISION]) if KV_CACHE_PRECISION in values else None
        ),
        paged_attention=check_flag(PAGED_ATTENTION, values[PAGED_ATTENTION]) if PAGED_ATTENTION in values else False,
        per_sequence_inputs=(
            check_per_sequence_inputs(values[PER_SEQUENCE_INPUTS]) if PER_SEQUENCE_INPUTS in values else ()
        ),
        shared_weights=check_shared_weights(values[SHARED_WEIGHTS]) if SHARED_WEIGHTS in values else (),
    )


def with_defaults(specs: Optional[Sequence[CompileSpec]]) -> List[CompileSpec]:
    """The specs as given, with the device spelled out when it was left to the default."""
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    specs = _spec_list(specs)
    if not any(spec.key == DEVICE for spec in specs):
        specs.insert(0, CompileSpec(DEVICE, b"CPU"))
    return specs
