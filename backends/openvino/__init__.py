"""executorch_openvino: an ExecuTorch delegate backend for Intel OpenVINO.

Importing this package loads its C++ runtime, which registers the delegate under
``BACKEND_ID`` with ExecuTorch's runtime. Where the runtime cannot load (missing, or
built for another OpenVINO release) the import logs why, once, and lowering still
works. The import is light: the names that need torch and ExecuTorch's exporter
(the partitioner, the backend, the compile-spec helpers) are imported the first
time they are used.
"""

import importlib as _importlib
import os as _os

from .native_library import load_runtime_library as load_runtime_library  # for the runtime's C functions
from .native_library import register_delegate_at_import, set_load_options

register_delegate_at_import()

#: The folder to put in CMAKE_PREFIX_PATH for find_package(executorch_openvino),
#: as torch.utils.cmake_prefix_path does for Torch; also printed by
#: ``python -m executorch_openvino --cmakedir``, which imports no torch.
cmake_prefix_path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "share", "cmake")

# Each public name that needs more than this module, by the module that defines it.
_LAZY_NAMES = {
    "BACKEND_ID": "backend_id",
    "ExecutorchOpenvinoBackend": "preprocess",
    "OpenvinoPartitioner": "partitioner",
    "OpenvinoOptions": "compile_specs",
    "openvino_compile_specs": "compile_specs",
    "parse_compile_specs": "compile_specs",
}


def __getattr__(name: str):
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES))


__all__ = [
    "BACKEND_ID",
    "ExecutorchOpenvinoBackend",
    "cmake_prefix_path",
    "OpenvinoOptions",
    "OpenvinoPartitioner",
    "openvino_compile_specs",
    "parse_compile_specs",
    "set_load_options",
]
