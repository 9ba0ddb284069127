"""The demo: a transformer block exported, lowered to OpenVINO, saved, loaded and run.

    bash scripts/demo.sh            # sets up .venv, then runs this file

It prints which ops ran in the OpenVINO delegate and which on ExecuTorch's CPU
kernels, the largest relative error against eager PyTorch, and the per-call
latency of both.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# torch's OpenMP workers keep spinning after each op and take the cores OpenVINO
# needs; executorch.runtime runs torch ops on every call. Passive waiting fixes it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import TransformerBlock  # noqa: E402

logger = logging.getLogger("demo")


def median_ms(call, repeats: int) -> float:
    for _ in range(5):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--precision", default="f32", choices=["f32", "f16", "bf16"])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--output", type=Path, default=None, help="where to write the .pte")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    model = TransformerBlock(dim=256, heads=8).eval()
    example = (torch.randn(1, args.tokens, 256),)
    exported = torch.export.export(model, example)
    partitioner = OpenvinoPartitioner(openvino_compile_specs(device="CPU", inference_precision=args.precision))
    program = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()

    output = args.output or Path(tempfile.mkdtemp()) / "transformer_block.pte"
    output.write_bytes(program.buffer)
    logger.info("Saved %s (%.1f KiB)", output, output.stat().st_size / 1024)

    plan = program.executorch_program.execution_plan[0]
    delegated = program.exported_program().graph_module.lowered_module_0.original_module.graph.nodes
    ops_in_openvino = sorted({n.target.__name__ for n in delegated if n.op == "call_function"})
    ops_on_cpu = sorted({op.name for op in plan.operators})
    print(f"Delegates: {[d.id for d in plan.delegates]}")
    print(f"Ran in OpenVINO ({len(ops_in_openvino)} op types): {', '.join(ops_in_openvino)}")
    print(f"Ran on ExecuTorch's CPU kernels: {', '.join(ops_on_cpu) or 'nothing'}")

    method = Runtime.get().load_program(output).load_method("forward")
    worst = 0.0
    for _ in range(3):
        inputs = (torch.randn(1, args.tokens, 256),)
        got = method.execute(list(inputs))[0]
        with torch.no_grad():
            want = model(*inputs)
        worst = max(worst, ((got - want).abs().max() / want.abs().max()).item())
    tolerance = 1e-5 if args.precision == "f32" else 2e-2
    print(f"Largest relative error against eager over 3 inputs: {worst:.2e} (tolerance {tolerance:.0e})")

    inputs = (torch.randn(1, args.tokens, 256),)
    with torch.inference_mode():
        eager_ms = median_ms(lambda: model(*inputs), args.repeats)
    ours_ms = median_ms(lambda: method.execute(list(inputs)), args.repeats)
    print(
        f"Latency per call, median of {args.repeats}: eager PyTorch {eager_ms:.3f} ms, "
        f"ExecuTorch + OpenVINO ({args.precision}) {ours_ms:.3f} ms, ratio {ours_ms / eager_ms:.2f}"
    )
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
