"""The BackendDetails of the OpenVINO delegate: partition -> checked, compiled once -> blob
(and the weights other methods read too, stored once in the program's named data)."""

from __future__ import annotations

import logging
import os
from typing import Dict, List, Optional, Sequence, Tuple, final

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torch.export import ExportedProgram

import openvino as ov

from .backend_id import BACKEND_ID as BACKEND_ID  # its home is backend_id.py
from .compile_specs import (
    CACHE_DIR,
    OpenvinoOptions,
    available_devices,
    cpu_settings_place,
    device_type,
    parse_compile_specs,
)
from .conversion import to_openvino_model
from .native_library import RuntimeLibraryUnavailable, nested, runtime_compile_config
from .preprocessing.debug_handle_map import layer_debug_handle_map
from .preprocessing.paged_attention import check_paged_attention
from .serialization.blob import FACT_FAKE_QUANTIZE, model_facts, write_blob
from .serialization.named_weights import name_shared_weights

logger = logging.getLogger(__name__)


@final
class ExecutorchOpenvinoBackend(BackendDetails):
    """Converts a partition with OpenVINO's PyTorch frontend and stores its IR.

    ``to_backend`` finds this class by name, so its name is the backend id the
    C++ runtime registers (``BACKEND_ID``, backend_id.py).
    """

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: List[CompileSpec]) -> PreprocessResult:
        # Checked first: a bad value must not wait for a long conversion.
        options = parse_compile_specs(compile_specs)
        handles_by_node: Dict[str, Tuple[int, ...]] = {}
        model = to_openvino_model(
            edge_program,
            may_run_on_cpu=cpu_settings_place(options.device) is not None,
            debug_handles=handles_by_node,
            per_sequence_inputs=options.per_sequence_inputs,
            paged_attention=options.paged_attention,
        )
        warn_if_float64(model)
        if options.paged_attention:
            check_paged_attention(model, options)
        compiled = check_compiles(model, options, compile_specs)
        # Read before the blob is written: the compiled model holds repacked weights.
        debug_handle_map = layer_debug_handle_map(model, handles_by_node, compiled)
        del compiled
        named_weights = name_shared_weights(model, options.shared_weights)
        return PreprocessResult(
            processed_bytes=write_blob(model), debug_handle_map=debug_handle_map, data_store_output=named_weights
        )


def warn_if_float64(model: ov.Model) -> None:
    """Logs that a partition computing in float64 gets float32 precision.

    OpenVINO's plugins have no float64 arithmetic: the CPU plugin computes it in
    float32 and hands float64 back, so results carry about 7 significant digits where
    eager PyTorch gives 16.
    """
    in_float64 = sum(
        1 for op in model.get_ordered_ops() if op.get_output_size() and op.get_output_element_type(0) == ov.Type.f64
    )
    if in_float64:
        logger.warning(
            "OpenVINO computes float64 in float32: %d op(s) of this partition make float64 values, which "
            "come back as float64 with float32 precision (about 1e-7 relative)",
            in_float64,
        )


def check_compiles(
    model: ov.Model, options: OpenvinoOptions, specs: Sequence[CompileSpec] = ()
) -> Optional[ov.CompiledModel]:
    """Compiles the model once, so that a model OpenVINO cannot compile fails at lowering.

    A device this machine does not have (lowering for a GPU on a build host) is
    compiled first when the program is loaded; that is logged. So is a model whose
    compilation would not fit in the memory left (an LLM of several GB): a check
    must not get the export killed. Returns the compiled model, or None when it
    was not compiled.
    """
    here = {device_type(device) for device in available_devices()}
    if options.device_type not in here and options.device_type not in ("AUTO", "HETERO", "MULTI", "BATCH"):
        logger.warning(
            "OpenVINO device %s is not on this machine (%s): the delegate is compiled first when the program is loaded",
            options.device,
            ", ".join(sorted(here)),
        )
        return None
    needed, available = compile_memory_estimate(model), available_memory_bytes()
    if available is not None and needed > available:
        logger.warning(
            "Not compiling the OpenVINO model to check it at lowering: compiling may take %.1f GB and %.1f GB of "
            "memory are available; the delegate is compiled first when the program is loaded",
            needed / 2**30,
            available / 2**30,
        )
        return None
    return ov.Core().compile_model(model, options.device, checking_config(model, options, specs))


def checking_config(model: ov.Model, options: OpenvinoOptions, specs: Sequence[CompileSpec]) -> dict:
    """The configuration the runtime would compile `model` with on this machine, without
    the model cache: the runtime's own (etov_compile_config, where each spec's meaning
    is defined), else, where the runtime library cannot be loaded, Python's copy,
    which keeps the CPU plugin's 8-bit kernels for quantized layers (the runtime may
    turn them off at load on a CPU without VNNI or AMX)."""
    text = [(spec.key, bytes(spec.value).decode("utf-8")) for spec in specs if spec.key != CACHE_DIR]
    try:
        facts = model_facts(model)
        return nested(runtime_compile_config(text, has_fake_quantize=bool(facts & FACT_FAKE_QUANTIZE)))
    except RuntimeLibraryUnavailable:
        config = options.compile_config()
        config.pop("CACHE_DIR", None)
        return config


def compile_memory_estimate(model: ov.Model) -> int:
    """Bytes that compiling `model` may allocate: twice its constants, each at 32 bits if it is a 16-bit float.

    Twice because the CPU plugin keeps a constant and its repacked copy; at 32 bits
    because a CPU without 16-bit float units converts such weights to f32 first (a
    bf16 Llama measured 3.7x its weights there, an f32 one 0.9x).
    """
    total = 0
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Constant":
            widening = 2 if op.get_element_type() in (ov.Type.bf16, ov.Type.f16) else 1
            total += 2 * widening * op.get_byte_size()
    return total


def available_memory_bytes() -> Optional[int]:
    """Memory the system can give without swapping (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
