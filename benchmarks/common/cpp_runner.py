"""The C++ per-call runner (benchmarks/cpp/call_overhead.cpp): building it and reading
its figures for one program. compare.py and call_overhead.py both run it."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Union

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "benchmarks" / "results" / "build"
TARGET = "etov_call_overhead"
logger = logging.getLogger("benchmarks.call_overhead")


def build_runner() -> Union[Path, str]:
    """The runner's path, built or brought up to date; or why it cannot be built here."""
    sys.path.insert(0, str(REPO_ROOT / "backends" / "openvino" / "tests"))
    try:
        import cpp_build  # the C++ tests' build helper: same configuration, same wheels
    finally:
        sys.path.pop(0)
    reason = cpp_build.skip_reason()
    if reason:
        return reason
    logger.info("building %s in %s", TARGET, BUILD_DIR)
    failure = cpp_build.build_targets(BUILD_DIR, (TARGET,))
    return failure if failure else BUILD_DIR / TARGET


def measure(
    runner: Path,
    pte: Path,
    precision: str,
    rounds: int,
    round_ms: float,
    method: str = "forward",
    steps: int = 0,
    start: int = 4,
) -> Dict[str, Any]:
    """The runner's figures for one method of a program at one precision (see
    call_overhead.cpp): its calls, or with `steps` its decoder steps from position `start`."""
    command = [str(runner), str(pte), "--method", method, "--precision", precision, "--rounds", str(rounds)]
    command += ["--steps", str(steps), "--start", str(start)] if steps else ["--round-ms", f"{round_ms:g}"]
    timeout = 120 + 3 * rounds * round_ms / 1000 + rounds * (start + steps)
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {result.stderr[-2000:]}")
    return json.loads(result.stdout)
