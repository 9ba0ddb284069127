"""The C++ runner behind benchmarks/compare.py's per-call overhead table (benchmarks/cpp/call_overhead.cpp).

It times Method::execute of a .pte against OpenVINO alone running the same delegate's
IR, in one C++ process. These tests check what its figures rest on, not the figures:
both engines ran, and they computed the same outputs from the same inputs.
"""

from __future__ import annotations

import json
import subprocess

import torch
from cpp_build import cpp_programs
from executorch_openvino import openvino_compile_specs
from harness import lower
from small_models import LinearRelu


def run_call_overhead(*args: str) -> subprocess.CompletedProcess:
    command = [str(cpp_programs().call_overhead), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_both_engines_run_and_compute_the_same_outputs(tmp_path):
    torch.manual_seed(0)
    program = lower(
        LinearRelu().eval(),
        (torch.randn(8, 64),),
        tmp_path,
        compile_specs=openvino_compile_specs(inference_precision="f32"),
    )
    result = run_call_overhead(str(program.path), "--precision", "f32", "--rounds", "2", "--round-ms", "20")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    for engine in ("ours", "openvino"):
        assert figures[engine]["calls"] >= 20, engine
        assert len(figures[engine]["round_medians_us"]) == 2, engine
        assert figures[engine]["median_us"] > 0, engine
    assert figures["outputs_compared"] == 8 * 64
    assert figures["max_rel_diff"] <= 1e-6


def test_a_program_without_our_delegate_is_refused_by_name(tmp_path):
    class Add(torch.nn.Module):
        def forward(self, x):
            return x + 1

    from executorch.exir import to_edge

    path = tmp_path / "portable.pte"
    path.write_bytes(to_edge(torch.export.export(Add(), (torch.randn(4),))).to_executorch().buffer)
    result = run_call_overhead(str(path))
    assert result.returncode == 2
    assert "must hold exactly one executorch_openvino delegate" in result.stderr
