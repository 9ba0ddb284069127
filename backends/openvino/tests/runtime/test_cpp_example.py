"""examples/cpp builds against the installed CMake package and computes what executorch.runtime does.

The example is configured with find_package(executorch_openvino) and
CMAKE_PREFIX_PATH=executorch_openvino.cmake_prefix_path, linked with
-Wl,--as-needed, as an application outside this repository would be.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import executorch_openvino
import pytest
import torch
from cpp_build import REPO_ROOT, cmake_build, skip_reason
from harness import lower
from small_models import LinearRelu, TwoOutputs

EXAMPLE_DIR = REPO_ROOT / "examples" / "cpp"
OUTPUT_LINE = re.compile(r"^output (\d+):(.*)$")


@pytest.fixture(scope="module")
def run_pte(tmp_path_factory):
    reason = skip_reason()
    if reason or not EXAMPLE_DIR.is_dir():
        pytest.skip(reason or "examples/cpp is not here")
    build_dir = tmp_path_factory.mktemp("example_build")
    failure = cmake_build(
        EXAMPLE_DIR, build_dir, ("run_pte",), [f"-DCMAKE_PREFIX_PATH={executorch_openvino.cmake_prefix_path}"]
    )
    if failure:
        pytest.fail(failure)
    return build_dir / "run_pte"


def printed_outputs(stdout: str) -> dict:
    found = {}
    for line in stdout.splitlines():
        match = OUTPUT_LINE.match(line)
        if match:
            found[int(match.group(1))] = torch.tensor([float(value) for value in match.group(2).split()])
    return found


@pytest.mark.parametrize(
    "model, shapes", [(LinearRelu(), [(8, 64)]), (TwoOutputs(), [(3, 5), (3, 5)])], ids=["linear_relu", "two_outputs"]
)
def test_example_prints_what_executorch_runtime_computes(run_pte, tmp_path, model, shapes):
    lowered = lower(model.eval(), tuple(torch.randn(shape) for shape in shapes), tmp_path)
    assert lowered.cpu_ops() == [], "the example links no kernels: the program must be fully delegated"
    ones = [torch.ones(shape) for shape in shapes]
    want = lowered.load_method().execute(ones)

    result = subprocess.run([str(run_pte), str(lowered.path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    got = printed_outputs(result.stdout)
    assert sorted(got) == list(range(len(want)))
    for index, expected in enumerate(want):
        torch.testing.assert_close(got[index], expected.flatten(), rtol=1e-5, atol=1e-5)


def test_example_is_linked_with_as_needed_and_still_needs_the_runtime(run_pte):
    # Were the registration call missing, --as-needed would drop the library.
    dynamic = subprocess.run(["readelf", "-d", str(run_pte)], capture_output=True, text=True)
    if dynamic.returncode != 0:
        pytest.skip("readelf is not installed")
    assert "libexecutorch_openvino_runtime.so" in dynamic.stdout


def test_cmake_package_without_the_wheels_beside_it_says_what_to_set(tmp_path):
    # A copy of the package config in a site-packages that has no executorch or openvino wheel.
    if skip_reason():
        pytest.skip(skip_reason())
    installed = Path(executorch_openvino.cmake_prefix_path) / "executorch_openvino"
    shutil.copytree(installed, tmp_path / "site" / "executorch_openvino" / "share" / "cmake" / "executorch_openvino")
    project = tmp_path / "app"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.28)\nproject(app LANGUAGES CXX)\n"
        "find_package(executorch_openvino CONFIG REQUIRED)\n"
    )
    failure = cmake_build(
        project,
        tmp_path / "build",
        ("all",),
        [f"-DCMAKE_PREFIX_PATH={tmp_path / 'site' / 'executorch_openvino' / 'share' / 'cmake'}"],
    )
    assert failure is not None, "configuring without the wheels should fail"
    message = " ".join(failure.split())  # CMake wraps the message
    assert "needs the executorch wheel's CMake package" in message, failure[-2000:]
    assert "executorch_DIR to" in message and "OpenVINO_DIR to" in message, failure[-2000:]


def test_an_application_that_never_calls_the_library_still_links_it(tmp_path):
    # ExecuTorch finds the delegate by name, so nothing refers to the library; the
    # package's target keeps it linked under --as-needed, or it would never register.
    if skip_reason():
        pytest.skip(skip_reason())
    project = tmp_path / "app"
    project.mkdir()
    (project / "main.cpp").write_text("int main() { return 0; }\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.28)\nproject(app LANGUAGES CXX)\n"
        "find_package(executorch_openvino CONFIG REQUIRED)\n"
        "add_executable(app main.cpp)\n"
        'target_link_options(app PRIVATE "LINKER:--as-needed")\n'
        "target_link_libraries(app PRIVATE executorch_openvino::backend)\n"
    )
    failure = cmake_build(
        project, tmp_path / "build", ("app",), [f"-DCMAKE_PREFIX_PATH={executorch_openvino.cmake_prefix_path}"]
    )
    assert failure is None, failure
    dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "build" / "app")], capture_output=True, text=True)
    if dynamic.returncode != 0:
        pytest.skip("readelf is not installed")
    assert "libexecutorch_openvino_runtime.so" in dynamic.stdout
