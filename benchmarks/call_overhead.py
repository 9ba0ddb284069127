"""Per-call cost of ExecuTorch and our delegate over OpenVINO alone, measured from C++.

benchmarks/cpp/call_overhead.cpp loads a .pte as a C++ application would and, in the
same process, compiles the delegate's IR with OpenVINO alone; it then times
Method::execute() against InferRequest::infer() in alternating rounds. No Python layer
is timed on either side, so the difference is what ExecuTorch's method and our
delegate add per call. compare.py runs it on the .pte files it writes; on its own:

    python benchmarks/call_overhead.py program.pte [--precision bf16] [--rounds 10] [--round-ms 300]

The runner is built (CMake, ETOV_BUILD_TESTS) into benchmarks/results/build on first use.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from common.cpp_runner import build_runner, measure

logger = logging.getLogger("benchmarks.call_overhead")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path)
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16", "f16"])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--round-ms", type=float, default=300)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    runner = build_runner()
    if isinstance(runner, str):
        logger.error("cannot build the runner: %s", runner)
        return 1
    figures = measure(runner, args.program, args.precision, args.rounds, args.round_ms)
    ours, alone = figures["ours"]["median_us"], figures["openvino"]["median_us"]
    print(
        f"{args.program} at {args.precision}: ExecuTorch + delegate {ours:.2f} us, OpenVINO alone {alone:.2f} us, "
        f"ratio {ours / alone:.4f}, extra {ours - alone:+.2f} us per call; outputs differ by at most "
        f"{figures['max_rel_diff']:.2g} (relative)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
