"""executorch-openvino-run, the C++ runner installed with the package, runs programs as executorch.runtime does.

It is started as a user would: the console script on the virtualenv's PATH.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule
from executorch.exir.passes import MemoryPlanningPass
from executorch_openvino import OpenvinoPartitioner
from harness import _CallsLowered, lower

RUNNER = Path(sys.executable).parent / "executorch-openvino-run"
LATENCY = re.compile(
    r"^latency: first call ([\d.]+) ms; median ([\d.]+) ms, p90 ([\d.]+) ms over (\d+) calls$", re.MULTILINE
)


class LinearReluTimesTwo(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(10, 4)

    def forward(self, tokens):
        return self.embedding(tokens).sum(dim=1)


def run(*args, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(RUNNER), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def split_program(tmp_path_factory):
    """Linear and the multiply in two OpenVINO delegates, relu between them on ExecuTorch's CPU kernels."""
    tmp_path = tmp_path_factory.mktemp("runner")
    model = LinearReluTimesTwo().eval()
    lowered = lower(
        model,
        (torch.randn(2, 4),),
        tmp_path,
        dynamic_shapes=({0: torch.export.Dim("batch", max=8)},),
        partitioner=OpenvinoPartitioner(op_types_to_skip={"aten.relu.default"}),
    )
    assert lowered.cpu_ops() == ["aten::relu.out"]
    return model, lowered.path


def test_runner_is_installed_on_the_virtualenv_path():
    assert RUNNER.is_file(), f"{RUNNER} is missing: pip install . installs it"


def test_runner_computes_what_eager_does_on_a_partly_delegated_program(split_program, tmp_path):
    model, path = split_program
    for batch in (5, 3):  # two shapes of the dynamic dimension, each called three times in one load
        x = torch.randn(batch, 4)
        np.save(tmp_path / "x.npy", x.numpy())
        result = run(path, "--input", tmp_path / "x.npy", "--iterations", 3, "--save-outputs", tmp_path)
        got = torch.from_numpy(np.load(tmp_path / "output_0.npy"))
        torch.testing.assert_close(got, model(x).detach(), rtol=1e-5, atol=1e-5)
        assert f"output 0: Float [{batch}, 3]" in result.stdout


def test_runner_reports_delegates_and_latency(split_program):
    result = run(split_program[1], "--iterations", 4)
    assert "delegates: ExecutorchOpenvinoBackend x2" in result.stdout
    first, median, p90, calls = LATENCY.search(result.stdout).groups()
    assert int(calls) == 3 and 0 < float(median) <= float(p90)


def test_runner_fills_missing_integer_inputs_with_zeros(tmp_path):
    # Zeros are a valid token id; floating-point inputs get random values instead.
    model = Embed().eval()
    tokens = torch.zeros(2, 6, dtype=torch.long)
    lowered = lower(model, (tokens,), tmp_path)
    result = run(lowered.path, "--iterations", 2, "--save-outputs", tmp_path)
    assert "output 0: Float [2, 4]" in result.stdout
    torch.testing.assert_close(torch.from_numpy(np.load(tmp_path / "output_0.npy")), model(tokens).detach())


def test_runner_refuses_an_input_of_another_dtype_naming_both(split_program, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((5, 4), dtype=np.int64))
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 4
    assert "holds Long with 2 dimensions; the method takes Float with 2" in result.stderr


def test_runner_refuses_a_wrong_number_of_inputs(split_program, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((5, 4), dtype=np.float32))
    result = run(split_program[1], "--input", tmp_path / "x.npy", "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 4
    assert "the method takes 1 inputs; 2 --input files were given" in result.stderr


def test_runner_refuses_a_file_that_is_not_npy(split_program, tmp_path):
    (tmp_path / "x.npy").write_text("not numpy")
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 1
    assert "is not a .npy file" in result.stderr


def test_runner_refuses_an_npy_file_holding_more_values_than_its_shape(split_program, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((5, 4), dtype=np.float32))
    with open(tmp_path / "x.npy", "ab") as file:
        file.write(np.zeros(4, dtype=np.float32).tobytes())
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 1
    assert "holds more values than its shape says" in result.stderr


def npy_with_shape(path, shape_text: str) -> None:
    """A float32 .npy of 15 zeros whose header claims `shape_text` (numpy refuses to write such files)."""
    np.save(path, np.zeros((5, 3), dtype=np.float32))
    data = path.read_bytes()
    header_end = 10 + int.from_bytes(data[8:10], "little")  # format 1.0: magic, version, 2-byte size
    header = data[10:header_end].decode("latin1").replace("(5, 3)", shape_text).encode("latin1")
    path.write_bytes(data[:8] + len(header).to_bytes(2, "little") + header + data[header_end:])


def test_runner_refuses_an_npy_file_whose_shape_holds_more_values_than_the_file(split_program, tmp_path):
    npy_with_shape(tmp_path / "x.npy", "(50000, 40000)")
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 1
    assert "holds fewer values than its shape says" in result.stderr


def test_runner_refuses_an_npy_file_with_a_negative_size(split_program, tmp_path):
    npy_with_shape(tmp_path / "x.npy", "(-5, 3)")
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 1
    assert "its shape holds '-5', not a size" in result.stderr


@pytest.mark.parametrize("size", ["999999999999999999", "4294967299"], ids=["aborted", "wrapped_to_3"])
def test_runner_refuses_a_size_past_executorchs_beside_a_zero(split_program, tmp_path, size):
    """Zero values need no data, so only the size check stands between such a shape and
    ExecuTorch's 32-bit sizes: the runner aborted, or took (0, 3)."""
    npy_with_shape(tmp_path / "x.npy", f"(0, {size})")
    result = run(split_program[1], "--input", tmp_path / "x.npy", check=False)
    assert result.returncode == 1, result.stderr
    assert f"its shape holds '{size}', not a size (0 to 2**31 - 1" in result.stderr


@pytest.mark.parametrize("flag", ["--etdump", "--save-outputs"])
def test_runner_refuses_an_empty_output_path(split_program, flag):
    result = run(split_program[1], flag, "", check=False)
    assert result.returncode == 1
    assert f"{flag} needs a path, not ''" in result.stderr


@pytest.mark.parametrize("where", ["missing_folder", "a_folder"])
def test_runner_refuses_an_etdump_path_it_cannot_write_before_the_calls(split_program, tmp_path, where):
    path = tmp_path / "no" / "x.etdp" if where == "missing_folder" else tmp_path
    result = run(split_program[1], "--etdump", path, "--iterations", 3, check=False)
    assert result.returncode == 1
    assert f"cannot write the ETDump to {path}: " in result.stderr
    assert "latency" not in result.stdout  # refused before the calls, not after them


def test_runner_refuses_an_npy_header_longer_than_the_file_without_allocating_it(split_program, tmp_path):
    """A 13-byte file whose format-2.0 header claims 4 GB: refused before the header is
    read. Under a 3 GB address-space limit the runner died of std::bad_alloc reading it."""
    import resource

    (tmp_path / "x.npy").write_bytes(b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little") + b"{")

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    result = subprocess.run(
        [str(RUNNER), str(split_program[1]), "--input", str(tmp_path / "x.npy")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit_memory,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "the file ends inside its header" in result.stderr


def test_runner_refuses_a_cache_dir_longer_than_a_load_option_holds(split_program, tmp_path):
    """ExecuTorch's load options hold 255 bytes: a longer --cache-dir was cut there, and
    the cache went to another folder without a word."""
    folder = tmp_path / ("c" * 200) / ("d" * 100)
    result = run(split_program[1], "--cache-dir", folder, check=False)
    assert result.returncode == 1
    assert f"--cache-dir is {len(str(folder))} bytes long; ExecuTorch's load options take 255 at most" in result.stderr


def test_runner_refuses_an_iteration_count_it_cannot_hold(split_program):
    result = run(split_program[1], "--iterations", "99999999999999999999", check=False)
    assert result.returncode == 1
    assert "--iterations 99999999999999999999 is not a count from 1 to 100000000" in result.stderr


def test_runner_prints_its_usage_on_help():
    result = run("--help")
    assert result.stdout.startswith("usage: executorch-openvino-run model.pte")


def test_runner_refuses_an_unknown_option_also_as_the_last_argument(split_program):
    result = run(split_program[1], "--bogus", check=False)
    assert result.returncode == 1
    assert "unknown option --bogus" in result.stderr


def test_runner_gives_memory_to_outputs_the_program_left_unplanned(tmp_path):
    # Exported so, an application sets the outputs' memory itself; the runner does it.
    model = LinearReluTimesTwo().eval()
    batch = torch.export.Dim("batch", max=8)
    exported = torch.export.export(model, (torch.randn(2, 4),), dynamic_shapes=({0: batch},))
    unplanned = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False)
    )
    program = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()]).to_executorch(unplanned)
    (tmp_path / "unplanned.pte").write_bytes(program.buffer)
    x = torch.randn(5, 4)
    np.save(tmp_path / "x.npy", x.numpy())
    run(tmp_path / "unplanned.pte", "--input", tmp_path / "x.npy", "--iterations", 2, "--save-outputs", tmp_path)
    got = torch.from_numpy(np.load(tmp_path / "output_0.npy"))
    torch.testing.assert_close(got, model(x).detach(), rtol=1e-5, atol=1e-5)


def test_runner_names_a_program_made_for_the_older_openvino_backend(tmp_path):
    # The program records only the backend id of ExecuTorch's older OpenVINO backend. It is
    # built directly: to_backend would pick whichever "OpenvinoBackend" class was imported first,
    # and the wheel's own one compiles with OpenVINO.
    edge = to_edge(torch.export.export(torch.nn.ReLU(), (torch.randn(2, 3),)))
    lowered = LoweredBackendModule(
        edge_program=edge.exported_program(), backend_id="OpenvinoBackend", processed_bytes=b"", compile_specs=[]
    )
    program = to_edge(torch.export.export(_CallsLowered(lowered), (torch.randn(2, 3),))).to_executorch()
    (tmp_path / "older.pte").write_bytes(program.buffer)
    result = run(tmp_path / "older.pte", check=False)
    assert result.returncode == 3
    assert "ExecuTorch's older OpenVINO backend, not this one" in result.stdout


def test_runner_refuses_an_input_planned_channels_last(tmp_path):
    # Its .npy files and random inputs are contiguous; a channels-last input would be read wrong.
    lowered = lower(torch.nn.ReLU(), (torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last),), tmp_path)
    result = run(lowered.path, check=False)
    assert result.returncode == 4
    assert "input 0 is planned in a dim order other than the default" in result.stderr


def test_runner_passes_load_options_to_the_delegate(split_program, tmp_path):
    cache_dir = tmp_path / "cache"
    run(split_program[1], "--inference-precision", "f32", "--cache-dir", cache_dir, "--iterations", 1)
    assert any(cache_dir.iterdir()), "OpenVINO's model cache was not written to --cache-dir"


def test_runner_gives_back_memory_on_request_and_computes_the_same(split_program, tmp_path):
    model, path = split_program
    x = torch.randn(4, 4)
    np.save(tmp_path / "x.npy", x.numpy())
    # A switch without a value: the program path may follow it.
    run("--give-back-memory", "--input", tmp_path / "x.npy", "--iterations", 2, "--save-outputs", tmp_path, path)
    got = torch.from_numpy(np.load(tmp_path / "output_0.npy"))
    torch.testing.assert_close(got, model(x).detach(), rtol=1e-5, atol=1e-6)


def test_runner_fails_the_load_on_an_unknown_precision(split_program):
    result = run(split_program[1], "--inference-precision", "f8", check=False)
    assert result.returncode == 3
    assert "f8" in result.stderr
