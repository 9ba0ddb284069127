"""Builds the C++ test programs (CMakeLists.txt, ETOV_BUILD_TESTS) for the pytest wrappers.

One CMake configure and build per test session, into a temporary folder, against the
executorch and openvino wheels of the running Python (CMakeLists.txt asks it where
they are). Tests that need the programs call `cpp_programs()`; it skips the test
with the reason when there is no source tree, no CMake or no C++ compiler, and
fails it when the build itself fails. benchmarks/compare.py builds its C++ runner
with `build_targets()` into a folder of its own.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The installed package and the real openvino must be imported before
# pytest sets up the backends/openvino package node: run on a lone test file that
# imports neither, pytest 9 imports backends/openvino/__init__.py under the name
# "openvino", which fails to find the runtime library in the source folder.
import executorch_openvino  # noqa: F401,E402
import openvino  # noqa: F401,E402

REPO_ROOT = Path(__file__).resolve().parents[3]
TARGETS = (
    "etov_tensor_binding_test",
    "etov_load_runner",
    "etov_blob_driver",
    "etov_crc32_test",
    "etov_call_overhead",
    "etov_layer_counters_test",
)


@dataclass(frozen=True)
class CppPrograms:
    build_dir: Path
    tensor_binding_test: Path
    load_runner: Path
    blob_driver: Path
    crc32_test: Path
    call_overhead: Path
    layer_counters_test: Path


def build_tool(name: str) -> str | None:
    # The venv's cmake and ninja (pip packages) come first, as for `pip install .`.
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def skip_reason() -> str | None:
    """Why the C++ programs cannot be built here, or None."""
    if not (REPO_ROOT / "CMakeLists.txt").exists() or not (REPO_ROOT / "backends/openvino/tests/cpp").is_dir():
        return "the C++ programs build from the source tree, which is not here"
    if build_tool("cmake") is None:
        return "cmake is not installed"
    if not any(shutil.which(cxx) for cxx in (os.environ.get("CXX", ""), "c++", "g++", "clang++") if cxx):
        return "no C++ compiler"
    return None


def build_targets(build_dir: Path, targets: tuple) -> str | None:
    """Configures (Release, ETOV_BUILD_TESTS) and builds `targets` in `build_dir`; the failure's output, or None.

    A second call on the same folder only rebuilds what changed.
    """
    return cmake_build(
        REPO_ROOT, build_dir, targets, ["-DETOV_BUILD_TESTS=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
    )


def cmake_build(source_dir: Path, build_dir: Path, targets: tuple, defines: list) -> str | None:
    """Configures `source_dir` (Release, Ninja when installed, `defines`) and builds `targets`.

    Returns the failure's output, or None.
    """
    configure = [
        build_tool("cmake"),
        "-S",
        str(source_dir),
        "-B",
        str(build_dir),
        "-DCMAKE_BUILD_TYPE=Release",
        *defines,
    ]
    ninja = build_tool("ninja")
    if ninja:
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    build = [
        build_tool("cmake"),
        "--build",
        str(build_dir),
        "--parallel",
        str(os.cpu_count() or 2),
        "--target",
        *targets,
    ]
    for command in (configure, build):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            return f"{' '.join(command)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return None


@functools.lru_cache(maxsize=1)
def _build() -> CppPrograms | tuple:
    """The programs, or ("skip" | "fail", why): a failed build is not retried per test."""
    reason = skip_reason()
    if reason:
        return ("skip", reason)
    build_dir = Path(tempfile.mkdtemp(prefix="etov-cpp-tests-"))
    atexit.register(shutil.rmtree, build_dir, ignore_errors=True)
    failure = build_targets(build_dir, TARGETS)
    if failure:
        return ("fail", failure)
    return CppPrograms(build_dir, *(build_dir / target for target in TARGETS))


def cpp_programs() -> CppPrograms:
    """The built programs; skips the calling test when they cannot be built here."""
    built = _build()
    if isinstance(built, tuple):
        import pytest

        kind, why = built
        (pytest.skip if kind == "skip" else pytest.fail)(why)
    return built
