"""compare.py's parent: one process per configuration, alternating rounds, pooled figures.

For one model the parent starts the children one after the other; each prepares its
configuration and waits on its stdin. In each round the parent asks every child in
turn (the order rotates from round to round) to time its loads and calls, while the
others sleep: the engines never run at the same time, and noise from the rest of the
machine spreads over all of them rather than falling on one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from common import bench, cpp_runner

from per_call.settings import CHILD_TIMEOUT_S, COMPARE_SCRIPT, LOGGER_NAME, WORK_DIR

logger = logging.getLogger(LOGGER_NAME)


class ChildFailed(RuntimeError):
    pass


class Child:
    """The parent's handle on one configuration's process."""

    def __init__(self, model_name: str, engine: str, args: argparse.Namespace):
        self.model_name, self.engine = model_name, engine
        self.log_path = WORK_DIR / f"{model_name}_{engine}.log"
        command = [
            sys.executable,
            str(COMPARE_SCRIPT),
            "--child",
            model_name,
            engine,
            "--budget",
            str(args.budget / args.rounds),
            "--loads-per-round",
            str(args.loads_per_round),
        ]
        env = dict(os.environ)
        if engine == "eager":
            env.pop("OMP_WAIT_POLICY", None)  # torch's defaults for eager
        self.log = open(self.log_path, "w")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        self.result: Dict[str, Any] = {"model": model_name, "engine": engine}
        self.samples: List[float] = []
        self.round_medians: List[float] = []
        self.warmup = 0
        self.loads: Dict[str, List[float]] = {}

    def ask(self, command: Optional[str]) -> Dict[str, Any]:
        """Sends `command` (None: nothing) and returns the child's next JSON line."""
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait(timeout=CHILD_TIMEOUT_S)
                self.log.flush()
                tail = "\n".join(self.log_path.read_text().splitlines()[-15:])
                raise ChildFailed(f"exit {self.process.returncode}; end of {self.log_path}:\n{tail}")
            if line.startswith("{"):
                return json.loads(line)

    def fail(self, error: Exception) -> None:
        logger.error("%s %s failed: %s", self.model_name, self.engine, error)
        self.result["error"] = str(error)
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()

    @property
    def ok(self) -> bool:
        return "error" not in self.result


def start_children(model_name: str, engines: List[str], args: argparse.Namespace) -> List[Child]:
    """A child per engine, started one after the other, each once it reported ready."""
    children: List[Child] = []
    for engine in engines:
        child_ = Child(model_name, engine, args)
        children.append(child_)
        try:
            ready = child_.ask(None)
            ready.pop("ready", None)
            child_.result.update(ready)
            logger.info("%-11s %-13s ready after %.1f s", model_name, engine, time.perf_counter() - child_.started)
        except ChildFailed as error:
            child_.fail(error)
    return children


def run_round(children: List[Child], round_index: int) -> None:
    """Asks each live child in turn, from a place that rotates with `round_index`, for one
    round, and pools its reply."""
    live = [c for c in children if c.ok]
    shift = round_index % len(live) if live else 0
    for child_ in live[shift:] + live[:shift]:
        try:
            reply = child_.ask("round")
        except ChildFailed as error:
            child_.fail(error)
            continue
        child_.samples += reply["samples_ms"]
        child_.round_medians.append(statistics.median(reply["samples_ms"]))
        child_.warmup += reply["warmup"]
        for kind, elapsed in reply["loads_ms"].items():
            child_.loads.setdefault(kind, []).extend(elapsed)


def pooled_result(child_: Child) -> None:
    """Waits for `child_` to exit and puts its pooled latency and loads in its result."""
    child_.process.wait(timeout=CHILD_TIMEOUT_S)
    timing = bench.Timing(child_.samples)
    child_.result["latency"] = {
        **timing.summary(),
        "warmup_calls": child_.warmup,
        "round_medians_ms": child_.round_medians,
    }
    for kind, samples in child_.loads.items():
        child_.result[kind] = {"median_ms": statistics.median(samples), "samples_ms": samples}
    child_.result["process_s"] = time.perf_counter() - child_.started


def finish_children(children: List[Child]) -> Dict[str, Dict[str, Any]]:
    """Tells every live child "done" (it checks its output once more), then pools each one's
    figures; engine -> result, or {"error": why} for a child that failed."""
    for child_ in children:
        if child_.ok:
            try:
                child_.result.update(child_.ask("done"))
            except ChildFailed as error:
                child_.fail(error)
    results = {}
    for child_ in children:
        if child_.ok:
            try:
                pooled_result(child_)
            except (ChildFailed, subprocess.TimeoutExpired) as error:
                child_.fail(error)
        child_.close()
        results[child_.engine] = child_.result
    return results


def run_model(model_name: str, engines: List[str], args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    """Every engine of `model_name` in its own process over `args.rounds` alternating rounds."""
    children = start_children(model_name, engines, args)
    for round_index in range(args.rounds):
        run_round(children, round_index)
        logger.info(
            "%s round %d/%d: %s",
            model_name,
            round_index + 1,
            args.rounds,
            ", ".join(f"{c.engine} {c.round_medians[-1]:.4g}" for c in children if c.ok),
        )
    return finish_children(children)


def run_cpp_overhead(model_names: List[str], args: argparse.Namespace) -> Dict[str, Any]:
    """Times the .pte files the children wrote from C++ against OpenVINO alone (common.cpp_runner).

    Returns {model: {precision: figures or {"error": why}}}, or {"skipped": why}.
    """
    runner = cpp_runner.build_runner()
    if isinstance(runner, str):
        logger.warning("C++ call overhead not measured: %s", runner)
        return {"skipped": runner}
    results: Dict[str, Any] = {}
    for model_name in model_names:
        for precision in ("f32", "bf16"):
            pte = WORK_DIR / f"{model_name}_ours-{precision}.pte"
            if not pte.exists():
                continue
            try:
                figures = cpp_runner.measure(runner, pte, precision, args.rounds, 1000 * args.budget / args.rounds)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
                logger.error("C++ call overhead of %s at %s failed: %s", model_name, precision, error)
                figures = {"error": str(error)}
            results.setdefault(model_name, {})[precision] = figures
            logger.info("%-11s C++ %s done", model_name, precision)
    return results


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"
