"""executorch_openvino: an ExecuTorch delegate backend for Intel OpenVINO.

Importing this package loads its C++ runtime, which registers the delegate under
``BACKEND_ID`` with ExecuTorch's runtime.
"""

import os as _os

# First, so that a missing or mismatched OpenVINO is reported with what to do.
from .native_library import load_runtime_library, set_load_options

load_runtime_library()

from .compile_specs import OpenvinoOptions, openvino_compile_specs, parse_compile_specs  # noqa: E402
from .partitioner import OpenvinoPartitioner  # noqa: E402
from .preprocess import BACKEND_ID, ExecutorchOpenvinoBackend  # noqa: E402

#: The folder to put in CMAKE_PREFIX_PATH for find_package(executorch_openvino),
#: as torch.utils.cmake_prefix_path does for Torch (see the README's C++ section).
cmake_prefix_path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "share", "cmake")

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
