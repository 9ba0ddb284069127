"""What the delegate costs over OpenVINO itself, side by side with eager PyTorch and XNNPACK.

Models (examples/models.py):
  mlp          Mlp(width=1024, layers=4), input 64 x 1024
  cnn          SmallCnn(), one 1 x 3 x 224 x 224 image
  transformer  TransformerBlock() (dim 64, 4 heads), input 1 x 128 x 64 (sequence length 128)
  tiny         Tiny(): x + y on two 1 x 16 tensors, where the fixed cost of a call dominates
Engines:
  eager          the PyTorch module under torch.inference_mode(), torch's default threads
  xnnpack        a .pte lowered with XnnpackPartitioner, run with executorch.runtime
  ours-f32/bf16  a .pte lowered with OpenvinoPartitioner(openvino_compile_specs(
                 inference_precision=...)), run with executorch.runtime
  ours-f32-exec  the ours-f32 program through ExecuTorch's binding under executorch.runtime:
                 inputs copied in once with set_inputs, each call execute() alone, so the
                 input copy and output wrapping of executorch.runtime are not timed
  openvino-f32/bf16
                 OpenVINO alone: to_openvino_model(to_edge(torch.export.export(...)).exported_program()),
                 compiled with the configuration our runtime uses at that precision
                 (OpenvinoOptions.compile_config(): INFERENCE_PRECISION_HINT, PERFORMANCE_HINT=LATENCY),
                 inputs and outputs preallocated and bound once with set_input_tensor /
                 set_output_tensor, each call request.infer(share_outputs=True)
  et-portable    (tiny only) a .pte with no delegate, on ExecuTorch's portable kernels: the
                 floor of one call through executorch.runtime from Python
After the Python engines, benchmarks/call_overhead.py times each ours-f32 and ours-bf16 .pte
from C++ against OpenVINO alone on the same IR, in one process: the delegate's own cost,
with no Python layer on either side (--no-cpp skips it; the C++ runner is built on first use).

Every configuration (model x engine) runs in its own process: the script starts itself with
`--child MODEL ENGINE`. For one model, the parent starts the children one after the other;
each prepares (lowers or converts, loads once) and reports one JSON line, then waits on its
stdin. The parent then runs ROUNDS rounds: in each it asks every child in turn (the order
rotates from round to round) to time its loads once and its calls for BUDGET_S / ROUNDS
seconds, while the other children sleep on their stdin. So the engines never run at the same
time, and noise from the rest of the machine spreads over all of them rather than falling on
one. The parent pools the rounds, prints the tables and writes benchmarks/results/compare.json
(child logs and .pte files in benchmarks/results/compare/).

Threads: every child except eager sets OMP_WAIT_POLICY=PASSIVE before importing torch and
calls torch.set_num_threads(1) (torch then only converts inputs and outputs, see common/bench.py);
XNNPACK runs on ExecuTorch's own threadpool and OpenVINO on its own threads, whose counts are
reported. The eager child leaves both at torch's defaults.

Per call: a warm-up (at least WARMUP_CALLS calls and WARMUP_S seconds in the first round, a
shorter one in later rounds), then as many calls as fit in the round's budget, each timed with
time.perf_counter_ns; the table gives the median, p10 and p90 of all rounds' calls.
Per model also: lowering time (export + lower + to_executorch + serialization, measured after
one untimed lowering of the tiny model in the same process, so that one-off initialization is
not counted), .pte size, and load time, LOADS_PER_ROUND loads per round after an untimed one in
the preparation: Runtime.load_program + load_method for the .pte files, compile_model +
create_infer_request of the same openvino.Model for OpenVINO alone, and the same from the
model's IR files on disk (compile_model(path), which reads and parses the model as our runtime
reads the .pte); then the same with the model cache (our cache_dir load option, OpenVINO's CACHE_DIR), in a
fresh folder whose first load, in the preparation, writes the cache.

The parts live in per_call/: settings, the child, the parent's rounds, and the report's tables.

Run: python benchmarks/compare.py            (about 7 minutes on 2 cores)
     python benchmarks/compare.py --quick    (shorter budget, 2 rounds: a smoke run, noisier figures)
     python benchmarks/compare.py --models tiny mlp --engines ours-f32 openvino-f32
"""

from __future__ import annotations

import os
import sys


def _child_engine(argv: list) -> str | None:
    if "--child" in argv:
        index = argv.index("--child")
        if index + 2 < len(argv):
            return argv[index + 2]
    return None


if _child_engine(sys.argv) not in (None, "eager"):
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"  # before torch is imported: see common/bench.py

import torch  # noqa: E402

if _child_engine(sys.argv) != "eager":
    torch.set_num_threads(1)

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from typing import Any, Dict  # noqa: E402

from common import bench  # noqa: E402
from common.small_models import MODELS  # noqa: E402
from per_call.child import child  # noqa: E402
from per_call.parent import load_average, run_cpp_overhead, run_model  # noqa: E402
from per_call.report import report  # noqa: E402
from per_call.settings import (  # noqa: E402
    BUDGET_S,
    ENGINES,
    LOADS_PER_ROUND,
    LOGGER_NAME,
    ONLY_FOR,
    QUICK_BUDGET_S,
    QUICK_LOADS_PER_ROUND,
    QUICK_ROUNDS,
    RESULTS,
    ROUND_WARMUP_CALLS,
    ROUND_WARMUP_S,
    ROUNDS,
    WARMUP_CALLS,
    WARMUP_S,
    WORK_DIR,
)

logger = logging.getLogger(LOGGER_NAME)


def parent(args: argparse.Namespace) -> int:
    started, load_at_start = time.perf_counter(), load_average()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    logger.info("load average at start: %s; CPU %s", load_at_start, bench.cpu_model())
    all_results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for model_name in args.models:
        engines = [e for e in args.engines if model_name in ONLY_FOR.get(e, (model_name,))]
        all_results[model_name] = run_model(model_name, engines, args)
    cpp = run_cpp_overhead(args.models, args) if args.cpp else {"skipped": "--no-cpp"}
    wall_s = time.perf_counter() - started
    load_at_end = load_average()
    summary = report(all_results, cpp, args, (load_at_start, load_at_end), wall_s)
    failed = [f"{m} {e}" for m, per_model in all_results.items() for e, r in per_model.items() if "error" in r]
    failed += [
        f"{m} C++ {p}" for m, per_model in cpp.items() if m != "skipped" for p, r in per_model.items() if "error" in r
    ]
    RESULTS.write_text(
        json.dumps(
            {
                **summary,
                "command": " ".join(["python", os.path.relpath(__file__), *sys.argv[1:]]),
                "method": {
                    "budget_s": args.budget,
                    "rounds": args.rounds,
                    "loads_per_round": args.loads_per_round,
                    "warmup_calls": WARMUP_CALLS,
                    "warmup_s": WARMUP_S,
                    "round_warmup_calls": ROUND_WARMUP_CALLS,
                    "round_warmup_s": ROUND_WARMUP_S,
                    "quick": args.quick,
                },
                "models": {name: MODELS[name][0] for name in args.models},
                "load_average": {"start": load_at_start, "end": load_at_end},
                "wall_s": wall_s,
                "results": all_results,
                "cpp_call_overhead": cpp,
                "failed": failed,
            },
            indent=2,
        )
        + "\n"
    )
    logger.info("wrote %s; the run took %.1f min", RESULTS, wall_s / 60)
    if failed:
        print(f"\nfailed: {', '.join(failed)} (logs in {WORK_DIR})")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_BUDGET_S:g} s of timed calls in {QUICK_ROUNDS} rounds per configuration",
    )
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument(
        "--budget", type=float, help=f"seconds of timed calls per configuration, over all rounds (default {BUDGET_S:g})"
    )
    parser.add_argument("--rounds", type=int, help=f"interleaved rounds (default {ROUNDS})")
    parser.add_argument(
        "--loads-per-round", type=int, help=f"timed loads of each kind per round (default {LOADS_PER_ROUND})"
    )
    parser.add_argument(
        "--no-cpp",
        dest="cpp",
        action="store_false",
        help="skip the C++ per-call measurement (benchmarks/call_overhead.py)",
    )
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.budget is None:
        args.budget = QUICK_BUDGET_S if args.quick else BUDGET_S
    if args.rounds is None:
        args.rounds = QUICK_ROUNDS if args.quick else ROUNDS
    if args.loads_per_round is None:
        args.loads_per_round = QUICK_LOADS_PER_ROUND if args.quick else LOADS_PER_ROUND
    bench.setup_logging()
    if args.child:
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        # --budget is the child's per-round budget
        return child(*args.child, budget_s=args.budget, loads_per_round=args.loads_per_round)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
