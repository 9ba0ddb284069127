"""What compare.py times and how long: engines, budgets, warm-ups, and where results go."""

from __future__ import annotations

from pathlib import Path

BENCHMARKS_DIR = Path(__file__).resolve().parents[1]
COMPARE_SCRIPT = BENCHMARKS_DIR / "compare.py"
RESULTS_DIR = BENCHMARKS_DIR / "results"
RESULTS = RESULTS_DIR / "compare.json"
WORK_DIR = RESULTS_DIR / "compare"
LOGGER_NAME = "benchmarks.compare"

# Each of ours right before the OpenVINO run it is compared with, so that in every round
# (the order rotates) the two run within a fraction of a second of each other.
ENGINES = ("eager", "xnnpack", "ours-f32", "openvino-f32", "ours-f32-exec", "ours-bf16", "openvino-bf16", "et-portable")
ONLY_FOR = {"et-portable": ("tiny",)}  # portable kernels are a floor for the tiny model, slow elsewhere
PTE_ENGINES = ("xnnpack", "et-portable", "ours-f32", "ours-bf16", "ours-f32-exec")
# Many short rounds: this shared machine has slow phases of a few seconds, which short
# rounds spread over all engines instead of landing on one engine's whole round.
BUDGET_S, ROUNDS, LOADS_PER_ROUND = 3.0, 30, 1  # per configuration: seconds of timed calls over all rounds
QUICK_BUDGET_S, QUICK_ROUNDS, QUICK_LOADS_PER_ROUND = 0.4, 2, 1
WARMUP_CALLS, WARMUP_S = 20, 0.3  # first round
ROUND_WARMUP_CALLS, ROUND_WARMUP_S = 5, 0.05  # later rounds
MIN_CALLS_PER_ROUND, MAX_CALLS_PER_ROUND = 10, 10000
CHILD_TIMEOUT_S = 600


def precision_of(engine: str) -> str:
    """ "f32" of "ours-f32", "openvino-f32" or "ours-f32-exec"."""
    return engine.split("-")[1]
