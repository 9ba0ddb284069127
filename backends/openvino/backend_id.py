"""The id the delegate goes by, in lowering and at run time alike.

``to_backend`` finds the BackendDetails class by this name (``ExecutorchOpenvinoBackend``
in preprocess.py), the partitioner's delegation spec names it, and the C++ runtime
registers its backend under it (``kBackendId`` in runtime/include/executorch_openvino/backend.h).
tests/contracts/test_backend_id.py checks that the three agree. This module imports nothing, so
that ``executorch_openvino.BACKEND_ID`` needs neither torch nor ExecuTorch's exporter.
"""

BACKEND_ID: str = "ExecutorchOpenvinoBackend"
