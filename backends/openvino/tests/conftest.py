import logging

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    logging.getLogger("executorch_openvino").setLevel(logging.INFO)


# The small models live in examples/ and serve the tests, the demo and the benchmarks.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
