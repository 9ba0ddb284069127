"""Fully delegated .pte programs for the C++ runners (the load runner links no kernels).

    python backends/openvino/tests/cpp_programs.py OUTPUT_FOLDER

writes NAME.pte for each program below and prints "NAME static|dynamic PATH".
scripts/sanitize.sh runs them under AddressSanitizer; a program whose ops do not
all go to the delegate is refused here rather than failing later in C++.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, Tuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))

from harness import lower  # noqa: E402
from models import TransformerBlock  # noqa: E402
from small_models import DynamicGelu, LinearRelu, TwoOutputs  # noqa: E402


class DynamicTwoOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 8)

    def forward(self, x):
        y = self.linear(x)
        return torch.softmax(y, dim=-1), y.sum(dim=-1)


class IntOps(torch.nn.Module):
    def forward(self, x, y):
        return torch.maximum(x, y) * 3 - y


def programs() -> Dict[str, Tuple[torch.nn.Module, tuple, object]]:
    batch = torch.export.Dim("batch", min=1, max=8)
    return {
        "linear_relu": (LinearRelu(), (torch.randn(8, 64),), None),
        "two_outputs": (TwoOutputs(), (torch.randn(4, 6), torch.randn(4, 6)), None),
        "transformer": (TransformerBlock(dim=64, heads=4), (torch.randn(1, 16, 64),), None),
        "int_ops": (
            IntOps(),
            (torch.arange(12, dtype=torch.int32).reshape(3, 4), torch.full((3, 4), 5, dtype=torch.int32)),
            None,
        ),
        "dynamic_gelu": (DynamicGelu(), (torch.randn(4, 16),), ({0: batch},)),
        "dynamic_two_outputs": (DynamicTwoOutputs(), (torch.randn(4, 16),), ({0: batch},)),
    }


def main() -> int:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for name, (module, inputs, dynamic_shapes) in programs().items():
        lowered = lower(module.eval(), inputs, folder, dynamic_shapes=dynamic_shapes, name=name)
        if lowered.cpu_ops():
            raise SystemExit(f"{name} is not fully delegated: {lowered.cpu_ops()} run on the CPU")
        print(name, "static" if dynamic_shapes is None else "dynamic", lowered.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
