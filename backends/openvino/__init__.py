"""executorch_openvino: an ExecuTorch delegate backend for Intel OpenVINO.

Importing this package loads its C++ runtime, which registers the delegate under
``BACKEND_ID`` with ExecuTorch's runtime.
"""

# First, so that a missing or mismatched OpenVINO is reported with what to do.
from .runtime import load_runtime_library, set_runtime_options

load_runtime_library()

from .compile_specs import OpenvinoOptions, openvino_compile_specs, parse_compile_specs  # noqa: E402
from .partitioner import OpenvinoPartitioner  # noqa: E402
from .preprocess import BACKEND_ID, ExecutorchOpenvinoBackend  # noqa: E402

__all__ = [
    "BACKEND_ID",
    "ExecutorchOpenvinoBackend",
    "OpenvinoOptions",
    "OpenvinoPartitioner",
    "openvino_compile_specs",
    "parse_compile_specs",
    "set_runtime_options",
]
