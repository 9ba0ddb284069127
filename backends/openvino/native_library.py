"""Loads the C++ runtime library into this process and sets its load options.

Loading the library registers the delegate with ExecuTorch's runtime, so
``executorch.runtime.Runtime`` runs programs lowered with ``OpenvinoPartitioner``.
The library finds libexecutorch.so and OpenVINO's libraries in their wheels next
to this package (its RUNPATH), with no environment variable.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
from typing import Optional, Union

from .compile_specs import CACHE_DIR, INFERENCE_PRECISION, check_cache_dir, check_precision

logger = logging.getLogger(__name__)

LIBRARY_NAME = "libexecutorch_openvino_runtime.so"
_ERROR_OK = 0


class LoadOptionError(ValueError):
    """A load-time option was refused by the runtime."""


def library_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


@functools.lru_cache(maxsize=1)
def load_runtime_library() -> ctypes.CDLL:
    """Loads the runtime library once; raises ImportError that says what to do."""
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"The executorch_openvino runtime library is missing ({path}). Install the package "
            "with `pip install .` (or from a wheel) so that its C++ runtime is built."
        )
    try:
        import openvino  # noqa: F401  (fails early with its own message when broken)
    except ImportError as error:
        raise ImportError(
            "executorch_openvino needs OpenVINO: `pip install openvino` "
            f"(the runtime was built against {_built_against()})"
        ) from error
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(
            f"Cannot load the executorch_openvino runtime: {error}. It was built against "
            f"OpenVINO {_built_against()}; installed is OpenVINO {_installed_openvino()}. "
            "Reinstall executorch_openvino to rebuild it for the installed release "
            "(`pip install --force-reinstall --no-deps --no-build-isolation .`), or install the "
            "OpenVINO release it was built for."
        ) from error
    library.etov_backend_id.restype = ctypes.c_char_p
    library.etov_openvino_version.restype = ctypes.c_char_p
    library.etov_registration_status.restype = ctypes.c_int
    library.etov_set_load_option.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    library.etov_set_load_option.restype = ctypes.c_int
    status = library.etov_registration_status()
    if status != _ERROR_OK:
        raise ImportError(
            f"The OpenVINO delegate could not register with ExecuTorch's runtime (error {status}); "
            "is another copy of executorch_openvino already loaded?"
        )
    logger.debug("Loaded %s (OpenVINO %s)", path, library.etov_openvino_version().decode())
    return library


def _built_against() -> str:
    try:
        from ._build_info import OPENVINO_VERSION

        return OPENVINO_VERSION
    except ImportError:
        return "an unknown release"


def _installed_openvino() -> str:
    try:
        from importlib.metadata import version

        return version("openvino")
    except Exception:  # noqa: BLE001 - only for a message
        return "none"


def set_load_options(
    *, inference_precision: Optional[str] = None, cache_dir: Optional[Union[str, os.PathLike]] = None
) -> None:
    """Sets options for every OpenVINO delegate loaded from now on in this process.

    They win over what the program was lowered with. An empty string clears an
    option. Programs already loaded are not changed.

    Args:
        inference_precision: "f32", "f16" or "bf16".
        cache_dir: a folder for OpenVINO's model cache, which makes later loads fast.

    Example::

        import executorch_openvino
        from executorch.runtime import Runtime

        executorch_openvino.set_load_options(inference_precision="bf16")
        method = Runtime.get().load_program("model.pte").load_method("forward")
    """
    if inference_precision:
        check_precision(inference_precision)
    if cache_dir:
        cache_dir = check_cache_dir(cache_dir)
    for key, value in ((INFERENCE_PRECISION, inference_precision), (CACHE_DIR, cache_dir)):
        if value is None:
            continue
        status = load_runtime_library().etov_set_load_option(key.encode(), value.encode())
        if status != _ERROR_OK:
            raise LoadOptionError(f"the OpenVINO runtime refused {key}={value!r} (error {status})")
