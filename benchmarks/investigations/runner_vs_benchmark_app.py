"""executorch-openvino-run against OpenVINO's benchmark_app on the same IR, both from C++-level tools.

For each model of compare.py, the script lowers it with OpenvinoPartitioner (f32, fully
delegated) to a .pte and saves the IR our conversion makes of the same program as
model.xml/.bin. It then runs, in alternating rounds (the order flips each round):

  runner         executorch-openvino-run model.pte --iterations N
                 (median of calls 2..N of Method::execute, inputs random, set before each call)
  benchmark_app  benchmark_app -m model.xml -d CPU -hint latency -api sync -niter N
                 -infer_precision f32 (its reported median latency)

Both compile with PERFORMANCE_HINT=LATENCY at f32, which is what our delegate asks for
at inference_precision f32. Neither has Python in the timed loop.

    python benchmarks/investigations/runner_vs_benchmark_app.py [--models mlp cnn transformer tiny]
        [--rounds 3] [--iterations 200]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import openvino as ov  # noqa: E402
import torch  # noqa: E402
from executorch.exir import to_edge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, lower_to_pte, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.small_models import MODELS, build  # noqa: E402
from executorch_openvino.conversion import to_openvino_model  # noqa: E402

WORK_DIR = Path(__file__).resolve().parents[1] / "results" / "runner_vs_benchmark_app"
RUNNER_MEDIAN = re.compile(r"median ([\d.]+) (ms)")
APP_MEDIAN = re.compile(r"Median:\s+([\d.]+) (ms|us)")  # benchmark_app picks the unit


def tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def prepare(name: str) -> Dict[str, Path]:
    module, inputs = build(name)
    folder = WORK_DIR / name
    folder.mkdir(parents=True, exist_ok=True)
    pte = lower_to_pte(module, inputs, folder / "model.pte", inference_precision="f32")
    ir = folder / "model.xml"
    ov.save_model(
        to_openvino_model(to_edge(torch.export.export(module, inputs)).exported_program()),
        str(ir),
        compress_to_fp16=False,
    )
    return {"pte": pte, "ir": ir}


def median_ms(command: List[str], pattern: re.Pattern) -> float:
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    value, unit = pattern.search(result.stdout).groups()
    return float(value) / (1000.0 if unit == "us" else 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    setup_logging()
    env = environment()
    rows = []
    for name in args.models:
        files = prepare(name)
        engines = {
            "runner": (
                [tool("executorch-openvino-run"), str(files["pte"]), "--iterations", str(args.iterations)],
                RUNNER_MEDIAN,
            ),
            "benchmark_app": (
                [
                    tool("benchmark_app"),
                    "-m",
                    str(files["ir"]),
                    "-d",
                    "CPU",
                    "-hint",
                    "latency",
                    "-api",
                    "sync",
                    "-niter",
                    str(args.iterations),
                    "-infer_precision",
                    "f32",
                ],
                APP_MEDIAN,
            ),
        }
        medians: Dict[str, List[float]] = {engine: [] for engine in engines}
        for round_index in range(args.rounds):
            order = round_order(list(engines), round_index)
            for engine in order:
                medians[engine].append(median_ms(*engines[engine]))
        runner, app = statistics.median(medians["runner"]), statistics.median(medians["benchmark_app"])
        rows.append([MODELS[name][0], runner, app, runner / app])
    print_header(
        f"executorch-openvino-run against benchmark_app, f32, {args.iterations} calls, "
        f"median of {args.rounds} alternating rounds",
        env,
    )
    print_table(["model", "runner median ms", "benchmark_app median ms", "runner / benchmark_app"], rows)


if __name__ == "__main__":
    main()
