import logging
import sys
from pathlib import Path

# Imported first: pytest would otherwise take backends/openvino/__init__.py, the
# source folder, for a module named openvino when a lone test file imports neither.
# (The package's import is light and no longer imports openvino itself.)
import executorch_openvino  # noqa: F401
import openvino  # noqa: F401
import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    logging.getLogger("executorch_openvino").setLevel(logging.INFO)


# The tests sit in area folders (ops/, lowering/, ...; backends/openvino/README.md, "Tests
# and checks"), none of them a package: pytest imports each test file under its own name,
# so names stay unique across folders, and a test file imports another only from its own
# folder. The helpers (harness.py, small_models.py, sweep_cases.py, cpp_build.py...) stay
# in this folder, imported by name from every area.
sys.path.insert(0, str(Path(__file__).resolve().parent))
# The small models live in examples/ and serve the tests, the demo and the benchmarks.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
