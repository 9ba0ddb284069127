"""ExecuTorch's backend operator suite, run through OpenvinoPartitioner as a flow of our own.

The executorch wheel ships the suite that ExecuTorch runs against every backend
(executorch/backends/test/suite): 467 pytest tests in operators/ (ExecuTorch 1.5.1), each
exporting one or more small models ("subtests"), lowering each with a "flow" (a TestFlow
naming a Tester whose to_edge_transform_and_lower stage holds the backend's partitioner),
running the .pte with ExecuTorch's runtime (portable_lib, the binding executorch.runtime
wraps) and comparing its outputs with eager PyTorch at the suite's tolerance (atol 0.1,
rtol 0.04). The suite's conftest.py parametrizes every test over flow.all_flows(); this
script replaces that list with one flow, "executorch_openvino": the harness Tester with
OpenvinoPartitioner() (default compile specs) in its to_edge_transform_and_lower stage.
`import executorch_openvino` registers our delegate with ExecuTorch's runtime.

The summary gives each test's result over its subtests:
  passed   fully delegated: no op of any subtest left on ExecuTorch's CPU kernels; or
           partially delegated / undelegated: which ops stayed on the CPU and why (the
           partitioner's INFO log: "OpenVINO partitioner leaves X on the CPU: reason")
  failed   the suite's failure class (lowering, PTE run, output mismatch, ...) and error
  skipped  why: a unittest.skip in the suite's source (never run, for any backend); the
           model's eager run or export failing (the suite counts that a bad test); or an op
           that ExecuTorch's portable kernels lack left on the CPU (runner.UNSUPPORTED_PORTABLE_OPS).
           The suite also skips every program with a 3-d convolution, delegated or not:
           --run-3d-convolutions runs those.

Inputs: each test seeds torch and random from its name and --seed, and the suite's own
per-test seed is fixed by --seed too, so a run is reproducible and a -k subset computes what
the full run computes.

Run: OMP_WAIT_POLICY=PASSIVE nice -n 10 python benchmarks/operator_suite.py \\
         [-k EXPRESSION] [--json PATH] [--markdown PATH] [--run-3d-convolutions] [--seed N] [-v]
     (the whole suite: 15-18 minutes of CPU time; 23 and 58 minutes on a shared 2-core Xeon)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import torch  # noqa: E402

torch.set_num_threads(1)

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Optional, Sequence, Tuple  # noqa: E402

import pytest  # noqa: E402
from common import bench  # noqa: E402
from executorch.backends.test.harness import Tester  # noqa: E402
from executorch.backends.test.harness.stages import StageType, ToEdgeTransformAndLower  # noqa: E402
from executorch.backends.test.suite import flow as suite_flow  # noqa: E402
from executorch.backends.test.suite import runner as suite_runner  # noqa: E402
from executorch.backends.test.suite.reporting import TestCaseSummary, TestResult, begin_test_session  # noqa: E402
from executorch_openvino import OpenvinoPartitioner  # noqa: E402

SUITE_PACKAGE = "executorch.backends.test.suite"
FLOW_NAME = "executorch_openvino"
# Where our partitioner and backend log (the installed package's loggers).
PACKAGE_LOGGER = "executorch_openvino"
# The partitioner's line for a node it leaves out (op_support.py), once per op and reason.
LEFT_ON_CPU = re.compile(r"OpenVINO partitioner leaves (?P<op>\S+) on the CPU: (?P<reason>.*)")
REASON_CHARS = 300

logger = logging.getLogger("benchmarks.operator_suite")


class OpenvinoTester(Tester):
    """The suite's harness Tester whose to_edge_transform_and_lower stage partitions with
    OpenvinoPartitioner() (default compile specs); every other stage is the harness default."""

    def __init__(self, module: torch.nn.Module, example_inputs: Any, dynamic_shapes: Any = None) -> None:
        stages = Tester.default_stage_classes()
        stages[StageType.TO_EDGE_TRANSFORM_AND_LOWER] = _lower_stage
        super().__init__(module, example_inputs, stage_classes=stages, dynamic_shapes=dynamic_shapes)


def _lower_stage(**kwargs: Any) -> ToEdgeTransformAndLower:
    return ToEdgeTransformAndLower(default_partitioner_cls=OpenvinoPartitioner, **kwargs)


def openvino_flow() -> suite_flow.TestFlow:
    """Our flow as the suite defines flows (compare its flows/xnnpack.py): no skip patterns,
    so every test the suite has runs."""
    return suite_flow.TestFlow(FLOW_NAME, backend=FLOW_NAME, tester_factory=OpenvinoTester)


@dataclass
class TestOutcome:
    """One pytest test of the suite: its result over all its subtests."""

    test_id: str
    outcome: str  # "passed", "failed" or "skipped"
    reason: str = ""  # why it failed or was skipped
    subtests: int = 0
    # Ops left to ExecuTorch's CPU kernels and ops in our delegates, summed over subtests,
    # named as the suite names them ("aten::add.Tensor").
    cpu_ops: Dict[str, int] = field(default_factory=dict)
    delegated_ops: Dict[str, int] = field(default_factory=dict)
    # The partitioner's reasons for each op it left on the CPU (by its name, "aten.add.Tensor").
    cpu_reasons: Dict[str, List[str]] = field(default_factory=dict)
    # Every INFO-or-above line our package logged during the test.
    log: List[str] = field(default_factory=list)

    @property
    def delegation(self) -> str:
        """ "full" (no op on the CPU), "partial" (ops both sides) or "none" (no op delegated)."""
        if not self.cpu_ops:
            return "full"
        return "partial" if self.delegated_ops else "none"

    def cpu_summary(self, ops: Optional[Sequence[str]] = None) -> str:
        """The ops left on the CPU (all, or those of `ops`), each with its count and the
        partitioner's reasons, on one line."""
        parts = []
        for op in sorted(self.cpu_ops if ops is None else ops):
            why = " / ".join(self._reasons_for(op) or ["no partitioner log line names it"])
            parts.append(f"{op} x{self.cpu_ops.get(op, 0)} ({why})")
        return "; ".join(parts)

    def _reasons_for(self, op: str) -> List[str]:
        # The suite names ops as "aten::add.Tensor" and drops ".default" ("aten::trunc");
        # our partitioner logs "aten.add.Tensor" and "aten.trunc.default".
        name = op.replace("::", ".")
        return self.cpu_reasons.get(name) or self.cpu_reasons.get(f"{name}.default", [])


def _one_line(text: str) -> str:
    line = " | ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


def _describe_error(summary: TestCaseSummary) -> str:
    error = summary.error
    if error is None:
        return summary.result.display_name()
    return f"{summary.result.display_name()}: {type(error).__name__}: {_one_line(error)}"


def _skip_reason(summary: TestCaseSummary, outcome: TestOutcome) -> str:
    """Why the suite's run_test returned SKIPPED for `summary`, a subtest of `outcome`."""
    if summary.error is not None:  # the eager run or torch.export failed
        return f"eager run or export failed: {type(summary.error).__name__}: {_one_line(summary.error)}"
    lacking = sorted(op for op in (summary.undelegated_op_counts or {}) if op in suite_runner.UNSUPPORTED_PORTABLE_OPS)
    if lacking:
        return (
            f"subtest {summary.subtest_index}: the suite skips a program that leaves an op ExecuTorch's "
            f"portable kernels lack on the CPU: {outcome.cpu_summary(lacking)}"
        )
    # runner._graph_has_unsupported_patterns reads the graph before partitioning.
    return (
        f"subtest {summary.subtest_index}: the suite skips every program with a 3-d convolution, delegated or "
        f"not (--run-3d-convolutions runs them); on the CPU: {outcome.cpu_summary() or 'nothing'}"
    )


class _PackageLog(logging.Handler):
    """Keeps the lines our package logs while one test runs."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class _Collector:
    """A pytest plugin: seeds each test and turns each test's reports into a TestOutcome."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.outcomes: Dict[str, TestOutcome] = {}
        self.log = _PackageLog()
        package_logger = logging.getLogger(PACKAGE_LOGGER)
        package_logger.setLevel(logging.INFO)
        package_logger.addHandler(self.log)

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.log.lines.clear()
        seed = _stable_hash(item.name) + self.seed
        torch.manual_seed(seed)
        random.seed(seed)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = (yield).get_result()
        if report.when == "setup" and report.skipped:  # a skip marker: no fixture ran
            self.outcomes[item.name] = TestOutcome(item.name, "skipped", _pytest_skip_reason(report))
        elif report.when == "setup" and report.failed:
            self.outcomes[item.name] = TestOutcome(item.name, "failed", _one_line(report.longreprtext))
        elif report.when == "call":
            self.outcomes[item.name] = self._outcome(item, report)

    def _outcome(self, item: pytest.Item, report: pytest.TestReport) -> TestOutcome:
        runner = getattr(item, "funcargs", {}).get("test_runner")
        summaries: List[TestCaseSummary] = list(getattr(runner, "_results", []))
        outcome = TestOutcome(item.name, report.outcome, subtests=len(summaries), log=list(self.log.lines))
        cpu_ops: Counter = Counter()
        delegated_ops: Counter = Counter()
        for summary in summaries:
            cpu_ops.update(summary.undelegated_op_counts or {})
            delegated_ops.update(summary.delegated_op_counts or {})
        outcome.cpu_ops = dict(+cpu_ops)
        outcome.delegated_ops = dict(+delegated_ops)
        for line in outcome.log:
            match = LEFT_ON_CPU.match(line)
            if match:
                reasons = outcome.cpu_reasons.setdefault(match["op"], [])
                if match["reason"] not in reasons:
                    reasons.append(match["reason"])
        unsuccessful = [s for s in summaries if not s.result.is_success()]
        if report.skipped:
            skipped = [s for s in unsuccessful if s.result == TestResult.SKIPPED]
            outcome.reason = _skip_reason(skipped[-1], outcome) if skipped else _pytest_skip_reason(report)
        elif report.failed:
            failures = [s for s in unsuccessful if s.result != TestResult.SKIPPED]
            outcome.reason = _describe_error(failures[-1]) if failures else _one_line(report.longreprtext)
        return outcome


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.md5(text.encode()).digest()[:4], "little")


def _pytest_skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return _one_line(longrepr[2] if isinstance(longrepr, tuple) else longrepr)


@dataclass
class SuiteSummary:
    header: Dict[str, Any]
    tests: List[TestOutcome]
    pytest_exit_code: int

    def of(self, outcome: str, delegation: Optional[str] = None) -> List[TestOutcome]:
        return [
            t
            for t in self.tests
            if t.outcome == outcome and (delegation is None or (outcome == "passed" and t.delegation == delegation))
        ]

    def counts(self) -> Dict[str, int]:
        return {
            "total": len(self.tests),
            "passed": len(self.of("passed")),
            "failed": len(self.of("failed")),
            "skipped": len(self.of("skipped")),
            "skipped_never_run": len([t for t in self.of("skipped") if not t.subtests]),
            "passed_fully_delegated": len(self.of("passed", "full")),
            "passed_partially_delegated": len(self.of("passed", "partial")),
            "passed_undelegated": len(self.of("passed", "none")),
        }

    def sections(self) -> List[tuple]:
        """(title, [(test id, one-line reason)]) for every test that is not a fully delegated pass."""
        not_full = [t for t in self.of("passed") if t.delegation != "full"]
        return [
            ("Failed", [(t.test_id, t.reason) for t in self.of("failed")]),
            (
                "Passed, not fully delegated (ops left on ExecuTorch's CPU kernels)",
                [(t.test_id, f"[{t.delegation}] {t.cpu_summary()}") for t in not_full],
            ),
            ("Skipped when run", [(t.test_id, t.reason) for t in self.of("skipped") if t.subtests]),
            (
                "Skipped by the suite's source for every backend (unittest.skip), never run",
                [(t.test_id, t.reason) for t in self.of("skipped") if not t.subtests],
            ),
        ]

    def to_json(self) -> Dict[str, Any]:
        tests = [dict(asdict(t), delegation=t.delegation if t.outcome == "passed" else None) for t in self.tests]
        counts = self.counts()
        return {"header": self.header, "counts": counts, "pytest_exit_code": self.pytest_exit_code, "tests": tests}

    def to_text(self) -> str:
        counts = self.counts()
        lines = [f"{key}: {value}" for key, value in self.header.items()]
        lines += [
            "",
            f"{counts['total']} tests: {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped ({counts['skipped_never_run']} of them by the suite's source, never run)",
            f"passed: {counts['passed_fully_delegated']} fully delegated, "
            f"{counts['passed_partially_delegated']} partially delegated, {counts['passed_undelegated']} undelegated",
        ]
        for title, rows in self.sections():
            lines += ["", f"{title}: {len(rows)}"]
            lines += [f"  {test_id}: {reason}" for test_id, reason in rows]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        counts = self.counts()
        lines = ["# ExecuTorch operator suite through OpenvinoPartitioner", ""]
        lines += [f"- {key}: {value}" for key, value in self.header.items()]
        lines += ["", "| result | tests |", "| --- | ---: |"]
        lines += [f"| {key.replace('_', ' ')} | {value} |" for key, value in counts.items()]
        for title, rows in self.sections():
            lines += ["", f"## {title} ({len(rows)})", ""]
            if rows:
                lines += ["| test | reason |", "| --- | --- |"]
                lines += [f"| `{test_id}` | {reason.replace('|', '/')} |" for test_id, reason in rows]
        return "\n".join(lines) + "\n"


def header(arguments: argparse.Namespace) -> Dict[str, Any]:
    environment = bench.environment()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": f"{environment['cpu']} ({environment['cores']} cores)",
        "executorch": environment["executorch"],
        "openvino": environment["openvino"],
        "torch": environment["torch"],
        "executorch_openvino": environment["executorch_openvino"],
        "OMP_WAIT_POLICY": environment["OMP_WAIT_POLICY"],
        "flow": f"{FLOW_NAME}: OpenvinoPartitioner() with default compile specs",
        "selection": arguments.k or "(all operator tests)",
        "seed": arguments.seed,
        "3-d convolutions": "run" if arguments.run_3d_convolutions else "skipped, as the suite does",
    }


def run_suite(
    keyword: Optional[str], seed: int, verbose: bool = False, run_3d_convolutions: bool = False
) -> Tuple[List[TestOutcome], int]:
    """Runs the suite's operator tests (those `keyword` selects, pytest's -k) through our flow.

    The suite skips every program that holds a 3-d convolution, even one our delegate runs,
    because ExecuTorch's portable kernels cannot (runner._graph_has_unsupported_patterns reads
    the graph before partitioning). `run_3d_convolutions` runs them: one left on the CPU then
    fails at run time. Returns the TestOutcomes and pytest's exit code.
    """
    flow = openvino_flow()
    # conftest.py imports all_flows when pytest loads it, after this: it sees our flow only.
    suite_flow.all_flows = lambda: {flow.name: flow}
    if run_3d_convolutions:
        suite_runner._graph_has_unsupported_patterns = lambda program: False
    begin_test_session(None, seed=seed)
    suite_dir = Path(importlib.import_module(SUITE_PACKAGE).__file__).parent
    arguments = [
        str(suite_dir / "operators"),
        "--rootdir",
        str(suite_dir),
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest.PytestUnknownMarkWarning",  # conftest marks timeouts; pytest-timeout is not used
        "--disable-warnings",  # torch's and ExecuTorch's deprecation notices, hundreds of them
        "-v" if verbose else "-q",
        "--tb=short" if verbose else "--tb=no",
    ]
    if keyword:
        arguments += ["-k", keyword]
    collector = _Collector(seed)
    exit_code = pytest.main(arguments, plugins=[collector])
    return list(collector.outcomes.values()), int(exit_code)


def parse_arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", metavar="EXPRESSION", help="run only the tests pytest's -k EXPRESSION selects")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the summary as JSON to PATH")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="also write the summary as markdown to PATH")
    parser.add_argument("--seed", type=int, default=0, help="seed of every test's inputs (default 0)")
    parser.add_argument(
        "--run-3d-convolutions",
        action="store_true",
        help="run the tests with a 3-d convolution, which the suite skips for every backend",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="pytest's verbose output and tracebacks")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the suite and prints the summary. Returns 0 when the suite ran, whatever its
    results, and pytest's exit code when it could not run or selected no test."""
    arguments = parse_arguments(argv)
    tests, exit_code = run_suite(arguments.k, arguments.seed, arguments.verbose, arguments.run_3d_convolutions)
    summary = SuiteSummary(header(arguments), tests, exit_code)
    print()
    print(summary.to_text())
    if arguments.json:
        arguments.json.write_text(json.dumps(summary.to_json(), indent=1) + "\n")
    if arguments.markdown:
        arguments.markdown.write_text(summary.to_markdown())
    ran = exit_code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    return 0 if ran else exit_code


if __name__ == "__main__":
    sys.exit(main())
