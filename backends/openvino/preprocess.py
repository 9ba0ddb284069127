"""The BackendDetails of the OpenVINO delegate: partition -> checked, compiled once -> blob."""

from __future__ import annotations

import logging
from typing import List, final

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torch.export import ExportedProgram

import openvino as ov

from .blob import write_blob
from .compile_specs import OpenvinoOptions, available_devices, device_type, parse_compile_specs
from .conversion import separate_returned_inputs, to_openvino_model

logger = logging.getLogger(__name__)


@final
class ExecutorchOpenvinoBackend(BackendDetails):
    """Converts a partition with OpenVINO's PyTorch frontend and stores its IR.

    ``to_backend`` finds this class by name, so its name is the backend id the
    C++ runtime registers (``BACKEND_ID``).
    """

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: List[CompileSpec]) -> PreprocessResult:
        # Checked first: a bad value must not wait for a long conversion.
        options = parse_compile_specs(compile_specs)
        model = to_openvino_model(edge_program)
        separate_returned_inputs(model, options.device_type)
        check_compiles(model, options)
        return PreprocessResult(processed_bytes=write_blob(model))


BACKEND_ID: str = ExecutorchOpenvinoBackend.__name__


def check_compiles(model: ov.Model, options: OpenvinoOptions) -> None:
    """Compiles the model once, so that a model OpenVINO cannot compile fails at lowering.

    A device this machine does not have (lowering for a GPU on a build host) is
    compiled first when the program is loaded; that is logged.
    """
    here = {device_type(device) for device in available_devices()}
    if options.device_type in here or options.device_type in ("AUTO", "HETERO", "MULTI", "BATCH"):
        config = options.compile_config()
        config.pop("CACHE_DIR", None)
        ov.Core().compile_model(model, options.device, config)
    else:
        logger.warning(
            "OpenVINO device %s is not on this machine (%s): the delegate is compiled first when the program is loaded",
            options.device,
            ", ".join(sorted(here)),
        )
