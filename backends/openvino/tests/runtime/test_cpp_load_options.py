"""Per-load options from C++: a LoadBackendOptionsMap given to Program::load_method.

tests/cpp/load_options_runner.cpp loads a .pte with Program::load + FileDataLoader
and passes {"inference_precision": ...} (or cache_dir) for "ExecutorchOpenvinoBackend",
as a C++ application would, through the real libexecutorch_openvino_runtime.so.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, Sequence

import numpy as np
import pytest
import torch
from cpp_build import cpp_programs
from executorch_openvino import openvino_compile_specs
from harness import NO_BF16_REASON, cpu_runs_bf16, lower
from small_models import LinearRelu

OUTPUT_LINE = re.compile(r"^output (\d+) execute (\d+): (\w+) \[([\d, ]*)\] =(.*)$")


def runner_input(shape: Sequence[int], index: int = 0, execute: int = 0) -> torch.Tensor:
    """The float input the runner feeds (see load_options_runner.cpp)."""
    k = np.arange(int(np.prod(shape)))
    values = ((7 * k + 5 * index + 3 * execute) % 17 - 8) / 4.0
    return torch.tensor(values, dtype=torch.float32).reshape(tuple(shape))


def run_runner(pte: Path, *args: str) -> subprocess.CompletedProcess:
    command = [str(cpp_programs().load_runner), *args, str(pte)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def outputs(stdout: str) -> Dict[int, torch.Tensor]:
    """Output index -> tensor, from the runner's last printed execute."""
    found = {}
    for line in stdout.splitlines():
        match = OUTPUT_LINE.match(line)
        if match:
            shape = [int(size) for size in match.group(4).split(",") if size.strip()]
            values = [float(value) for value in match.group(5).split()]
            found[int(match.group(1))] = torch.tensor(values, dtype=torch.float32).reshape(shape)
    return found


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got - want).abs().max() / want.abs().max()).item()


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """One model lowered twice: without a precision (f32 on CPU) and with bf16."""
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("load_options")
    model = LinearRelu().eval()
    example = (torch.randn(8, 64),)
    plain = lower(model, example, folder, name="plain")
    bf16 = lower(model, example, folder, name="bf16", compile_specs=openvino_compile_specs(inference_precision="bf16"))
    for lowered in (plain, bf16):
        assert lowered.cpu_ops() == [], "the runner links no kernels: the program must be fully delegated"
    with torch.no_grad():
        want = model(runner_input((8, 64)))
    return {"plain": plain.path, "bf16": bf16.path, "want": want}


@pytest.mark.parametrize(
    "program, args, precision, tolerance",
    [
        ("plain", [], "f32", 1e-5),
        ("plain", ["--precision", "bf16"], "bf16", 2e-2),
        ("plain", ["--precision", "f32"], "f32", 1e-5),
        ("bf16", [], "bf16", 2e-2),
        ("bf16", ["--precision", "f32"], "f32", 1e-5),  # the per-load value wins over the program's
    ],
    ids=["program_default", "load_bf16", "load_f32", "program_bf16", "load_f32_over_program_bf16"],
)
def test_per_load_precision(programs, program, args, precision, tolerance):
    if precision == "bf16" and not cpu_runs_bf16():
        pytest.skip(NO_BF16_REASON)
    result = run_runner(programs[program], *args)
    assert result.returncode == 0, result.stderr
    got = outputs(result.stdout)[0]
    assert got.shape == programs["want"].shape
    error = relative_error(got, programs["want"])
    assert error < tolerance
    if precision == "bf16":  # float32 stays under 1e-5: these values were computed in bf16
        assert error > 1e-4, f"relative error {error}: computed like f32"


def test_per_load_bf16_computes_differently_from_f32(programs):
    if not cpu_runs_bf16():
        pytest.skip(NO_BF16_REASON)
    f32 = outputs(run_runner(programs["plain"], "--precision", "f32").stdout)[0]
    bf16_run = run_runner(programs["plain"], "--precision", "bf16")
    bf16 = outputs(bf16_run.stdout)[0]
    assert relative_error(bf16, programs["want"]) > 10 * relative_error(f32, programs["want"])


def test_bad_per_load_precision_fails_cleanly_naming_it(programs):
    result = run_runner(programs["plain"], "--precision", "f7")
    assert result.returncode == 3, f"expected load_method to fail (status 3), got {result.returncode}\n{result.stderr}"
    assert "load option: inference_precision 'f7' is not one of f32, f16, bf16" in result.stderr
    assert "load_method(forward) failed: Error::InvalidArgument" in result.stderr


def test_per_load_cache_dir_fills_the_cache(programs, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    result = run_runner(programs["plain"], "--cache-dir", str(cache))
    assert result.returncode == 0, result.stderr
    assert any(cache.iterdir()), "OpenVINO wrote nothing into the per-load cache_dir"
