"""benchmarks/operator_suite.py: ExecuTorch's backend operator suite through our partitioner.

The script is not a CI gate; this test keeps it from rotting. It runs two of the suite's
operator tests through the script's command line, as a user would, and checks from its
JSON summary that both ran through our flow: lowered with OpenvinoPartitioner, every op in
our delegate, outputs matching eager PyTorch at the suite's tolerance.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[4] / "benchmarks" / "operator_suite.py"
# One plain op, and EmbeddingBag with include_last_offset (our own translation).
SELECTED = {
    "test_add_f32_alpha[executorch_openvino]": "aten::add.Tensor",
    "test_embedding_bag_include_last_offset[executorch_openvino]": "aten::_embedding_bag",
}


def test_suite_tests_run_fully_delegated_through_our_flow(tmp_path):
    summary_path = tmp_path / "summary.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "-k", " or ".join(name.split("[")[0] for name in SELECTED)]
        + ["--json", str(summary_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"),
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    summary = json.loads(summary_path.read_text())
    tests = {test["test_id"]: test for test in summary["tests"]}
    assert set(tests) == set(SELECTED), result.stdout[-2000:]
    for test_id, op in SELECTED.items():
        test = tests[test_id]
        assert (test["outcome"], test["reason"]) == ("passed", ""), test_id
        assert test["delegation"] == "full", f"{test_id}: on the CPU: {test['cpu_ops']}"
        assert test["delegated_ops"].get(op, 0) >= 1, f"{test_id}: delegated {test['delegated_ops']}"
    assert summary["counts"]["passed_fully_delegated"] == len(SELECTED)
    for key in ("date", "cpu", "executorch", "openvino", "torch"):
        assert summary["header"][key], key
