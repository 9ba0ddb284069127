"""Loads the C++ runtime library into this process and sets its load options.

Loading the library registers the delegate with ExecuTorch's runtime, so
``executorch.runtime.Runtime`` runs programs lowered with ``OpenvinoPartitioner``.
The library finds libexecutorch.so and OpenVINO's libraries in their wheels next
to this package (its RUNPATH), with no environment variable.

Lowering does not need the library: where it is missing or was built for another
OpenVINO release, ``import executorch_openvino`` logs why once and lowering still
works; running programs in that process does not.

This module imports neither torch nor executorch, so that ``import executorch_openvino``
and ``python -m executorch_openvino --cmakedir`` stay fast.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from typing import Dict, Optional, Sequence, Tuple, Union

from .compile_specs import CACHE_DIR, INFERENCE_PRECISION, check_cache_dir, check_precision

logger = logging.getLogger(__name__)

LIBRARY_NAME = "libexecutorch_openvino_runtime.so"
#: The load option that gives back memory the runtime did not allocate (kGiveBackMemoryKey in backend.h).
GIVE_BACK_MEMORY = "give_back_memory"
_ERROR_OK = 0
#: The bytes a load option's value holds: ExecuTorch's kMaxOptionValueLength
#: (executorch/runtime/backend/options.h) less its terminating NUL.
_MOST_LOAD_OPTION_BYTES = 255


class LoadOptionError(ValueError):
    """A load-time option was refused by the runtime."""


class RuntimeLibraryUnavailable(ImportError):
    """The runtime library cannot be loaded into this process; the message says why and what to do."""


def library_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None
_problem: Optional[str] = None  # why the library cannot be loaded, once a load failed
_problem_logged = False


def load_runtime_library() -> ctypes.CDLL:
    """The runtime library, loaded once; raises RuntimeLibraryUnavailable saying why and what to do.

    A failure is remembered: later calls raise it again without trying once more.
    """
    global _library, _problem
    with _lock:
        if _library is None and _problem is None:
            try:
                _library = _load()
            except RuntimeLibraryUnavailable as error:
                _problem = str(error)
        if _library is None:
            raise RuntimeLibraryUnavailable(_problem)
        return _library


def register_delegate_at_import() -> None:
    """What ``import executorch_openvino`` does: loads the library, which registers the
    delegate, or logs once why it cannot, for a process that only lowers programs."""
    global _problem_logged
    try:
        load_runtime_library()
    except RuntimeLibraryUnavailable as error:
        with _lock:
            if _problem_logged:
                return
            _problem_logged = True
        logger.warning("%s Lowering works without it; running programs in this process needs it.", error)


def _load() -> ctypes.CDLL:
    path = library_path()
    if not os.path.exists(path):
        raise RuntimeLibraryUnavailable(
            f"The executorch_openvino runtime library is missing ({path}). Install the package "
            "with `pip install .` (or from a wheel) so that its C++ runtime is built."
        )
    built, installed = _built_against(), _installed_openvino()
    if installed is None:
        raise RuntimeLibraryUnavailable(
            "executorch_openvino needs OpenVINO: `pip install openvino` "
            f"(the runtime was built against OpenVINO {built or 'an unknown release'})."
        )
    # OpenVINO's library name carries its release: a runtime built for another one
    # cannot load, and is not tried.
    if built is not None and installed is not None and _release(built) != _release(installed):
        raise RuntimeLibraryUnavailable(
            f"The executorch_openvino runtime was built against OpenVINO {built}; installed is OpenVINO "
            f"{installed}. {_REBUILD}"
        )
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise RuntimeLibraryUnavailable(
            f"Cannot load the executorch_openvino runtime: {error}. It was built against OpenVINO "
            f"{built or 'an unknown release'}; installed is OpenVINO {installed or 'none'}. {_REBUILD}"
        ) from error
    library.etov_backend_id.restype = ctypes.c_char_p
    library.etov_openvino_version.restype = ctypes.c_char_p
    library.etov_registration_status.restype = ctypes.c_int
    library.etov_set_load_option.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    library.etov_set_load_option.restype = ctypes.c_int
    library.etov_compile_config.argtypes = [
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    library.etov_compile_config.restype = ctypes.c_int
    status = library.etov_registration_status()
    if status != _ERROR_OK:
        raise RuntimeLibraryUnavailable(
            f"The OpenVINO delegate could not register with ExecuTorch's runtime (error {status}); "
            "is another copy of executorch_openvino already loaded?"
        )
    logger.debug("Loaded %s (OpenVINO %s)", path, library.etov_openvino_version().decode())
    return library


_REBUILD = (
    "Reinstall executorch_openvino to rebuild it for the installed release "
    "(`pip install --force-reinstall --no-deps --no-build-isolation .`), or install the "
    "OpenVINO release it was built for."
)


def _release(version: str) -> str:
    """ "2026.4.1" of "2026.4.1" or "2026.4.1.dev20260101": the part a library name carries."""
    return ".".join(version.split(".")[:3])


def _built_against() -> Optional[str]:
    try:
        from ._build_info import OPENVINO_VERSION
    except ImportError:
        return None
    return None if OPENVINO_VERSION.startswith("@") else OPENVINO_VERSION


def _installed_openvino() -> Optional[str]:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python >= 3.8 has it
        return None
    try:
        return version("openvino")
    except PackageNotFoundError:
        return None


def set_load_options(
    *,
    inference_precision: Optional[str] = None,
    cache_dir: Optional[Union[str, os.PathLike]] = None,
    give_back_memory: Optional[bool] = None,
) -> None:
    """Sets options for every OpenVINO delegate loaded from now on in this process.

    They win over what the program was lowered with. An empty string clears an
    option. Programs already loaded are not changed.

    Args:
        inference_precision: "f32", "f16" or "bf16".
        cache_dir: a folder for OpenVINO's model cache, which makes later loads fast.
        give_back_memory: True to give back, once a delegate is compiled, memory the
            runtime did not allocate: the resident pages of a program mapped from its
            file (unlocking them), those of OpenVINO's mappings of the model cache's
            files, and glibc's free heap pages. These are process-wide changes, so
            they are off by default (docs/runtime.md, "Memory after loading").

    Raises:
        ValueError: a value is not accepted (LoadOptionError when the runtime refuses it).
        RuntimeLibraryUnavailable: the runtime library cannot be loaded here.

    Example::

        import executorch_openvino
        from executorch.runtime import Runtime

        executorch_openvino.set_load_options(inference_precision="bf16")
        method = Runtime.get().load_program("model.pte").load_method("forward")
    """
    if inference_precision:
        check_precision(inference_precision)
    if cache_dir:
        cache_dir = _load_option_text(CACHE_DIR, check_cache_dir(cache_dir))
    if give_back_memory is not None and not isinstance(give_back_memory, bool):
        raise ValueError(f"OpenVINO give_back_memory {give_back_memory!r} is not accepted; accepted: True, False")
    give_back = None if give_back_memory is None else str(int(give_back_memory))
    values = ((INFERENCE_PRECISION, inference_precision), (CACHE_DIR, cache_dir), (GIVE_BACK_MEMORY, give_back))
    for key, value in values:
        if value is None:
            continue
        status = load_runtime_library().etov_set_load_option(key.encode(), value.encode())
        if status != _ERROR_OK:
            raise LoadOptionError(f"the OpenVINO runtime refused {key}={value!r} (error {status})")


def _load_option_text(key: str, value: str) -> str:
    """`value` if ExecuTorch's load options can hold it: UTF-8 text of at most
    _MOST_LOAD_OPTION_BYTES bytes."""
    try:
        size = len(value.encode())
    except UnicodeEncodeError as error:
        raise ValueError(f"OpenVINO {key} {value!r} is not accepted as a load option: it is not UTF-8 text") from error
    if size > _MOST_LOAD_OPTION_BYTES:
        raise ValueError(
            f"OpenVINO {key} {value!r} is {size} bytes long; a load option holds {_MOST_LOAD_OPTION_BYTES} bytes "
            "at most (ExecuTorch's option values): use a shorter path, or the compile spec at export"
        )
    return value


def runtime_compile_config(
    specs: Sequence[Tuple[str, str]], *, has_fake_quantize: bool, cpu_sums_exactly: Optional[bool] = None
) -> Dict[str, str]:
    """The configuration the runtime gives OpenVINO for a delegate lowered with `specs`
    ((key, value text) pairs), from the runtime itself (etov_compile_config in backend.h):
    flat, a nested map's entries under "KEY.NESTED_KEY" ("DEVICE_PROPERTIES.CPU.
    INFERENCE_PRECISION_HINT"), every value as text.

    Args:
        specs: the compile specs, as stored in the program.
        has_fake_quantize: whether the IR has FakeQuantize operations.
        cpu_sums_exactly: whether the CPU's 8-bit dot products are exact; None asks this CPU.

    Raises:
        ValueError: the runtime refuses a spec.
        RuntimeLibraryUnavailable: the runtime library cannot be loaded here.
    """
    library = load_runtime_library()
    keys = (ctypes.c_char_p * len(specs))(*(key.encode() for key, _ in specs))
    values = (ctypes.c_char_p * len(specs))(*(value.encode() for _, value in specs))
    out = ctypes.create_string_buffer(1 << 16)
    exact = -1 if cpu_sums_exactly is None else int(cpu_sums_exactly)
    status = library.etov_compile_config(keys, values, len(specs), int(has_fake_quantize), exact, out, len(out))
    if status != _ERROR_OK:
        raise ValueError(f"the OpenVINO runtime refused the compile specs {dict(specs)} (error {status})")
    return dict(line.split("=", 1) for line in out.value.decode().splitlines())


def nested(flat: Dict[str, str]) -> Dict[str, object]:
    """runtime_compile_config's flat keys as the nested maps openvino.Core.compile_model takes."""
    config: Dict[str, object] = {}
    for key, value in flat.items():
        *outer, last = key.split(".")
        level = config
        for name in outer:
            level = level.setdefault(name, {})
        level[last] = value
    return config
