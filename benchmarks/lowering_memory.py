"""Peak memory of lowering a Llama, with and without the compile that checks it.

Lowering compiles each delegate once so that a model OpenVINO cannot compile fails
at export (preprocess.py); it skips that compile when it might not fit in the memory
available. This shows what the check costs: each case runs in a fresh process that
builds the model, then exports, lowers, and serializes it (the whole
`to_edge_transform_and_lower` + `to_executorch` path), and reports its peak resident
set above the set it had with the model built, over the weights' size.

    python benchmarks/lowering_memory.py [--dim 1024] [--layers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from common.bench import environment, print_header, print_table  # noqa: E402

CASE = """
import json, os, resource, sys
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path[:0] = [{benchmarks!r}, {examples!r}]
import torch
import executorch_openvino.preprocess as preprocess
from common.bench import lower
from executorch_openvino import OpenvinoPartitioner
from models import small_llama

if not {check}:
    preprocess.available_memory_bytes = lambda: 0  # as if compiling could not fit

def resident_bytes():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

torch.manual_seed(0)
model = small_llama(dim={dim}, layers={layers}).to(getattr(torch, {dtype!r}))
weights = sum(p.numel() * p.element_size() for p in model.parameters())
before = resident_bytes()
with torch.no_grad():
    lower(model, (torch.tensor([[1]]), {{"input_pos": torch.tensor([0])}}), [OpenvinoPartitioner()])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"weights": weights, "growth": peak - before}}))
"""


def peak_growth(dim: int, layers: int, dtype: str, check: bool) -> dict:
    here = Path(__file__).resolve().parent
    code = CASE.format(
        benchmarks=str(here), examples=str(here.parent / "examples"), check=check, dim=dim, layers=layers, dtype=dtype
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    options = parser.parse_args()
    print_header(
        f"Peak memory of lowering the wheel's Llama (dim {options.dim}, {options.layers} layers, vocab 32000, "
        "static KV cache), one fresh process per row",
        environment(),
    )
    rows = []
    for dtype in ("bfloat16", "float32"):
        for check in (True, False):
            result = peak_growth(options.dim, options.layers, dtype, check)
            weights, growth = result["weights"], result["growth"]
            rows.append([dtype, "on" if check else "skipped", weights / 2**20, growth / 2**20, growth / weights])
    print_table(["weights", "compile check", "weights MB", "peak growth MB", "growth / weights"], rows)


if __name__ == "__main__":
    main()
