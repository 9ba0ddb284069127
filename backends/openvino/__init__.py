"""executorch_openvino: an ExecuTorch delegate backend for Intel OpenVINO.

Importing this package loads its C++ runtime, which registers the delegate under
``BACKEND_ID`` with ExecuTorch's runtime.
"""

from .compile_specs import OpenvinoOptions, openvino_compile_specs, parse_compile_specs
from .preprocess import BACKEND_ID, ExecutorchOpenvinoBackend
from .partitioner import OpenvinoPartitioner
from .runtime import load_runtime_library, set_runtime_options

load_runtime_library()

__all__ = [
    "BACKEND_ID",
    "ExecutorchOpenvinoBackend",
    "OpenvinoOptions",
    "OpenvinoPartitioner",
    "openvino_compile_specs",
    "parse_compile_specs",
    "set_runtime_options",
]
