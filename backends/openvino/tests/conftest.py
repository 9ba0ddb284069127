import logging

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    logging.getLogger("executorch_openvino").setLevel(logging.INFO)
