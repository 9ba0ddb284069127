"""What importing the package costs and needs: C++ users ask it for the CMake folder
without torch; a host that only lowers programs needs no native runtime."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import executorch_openvino
import torch
from harness import assert_close, eager, run
from small_models import AddOne

PACKAGE_DIR = Path(executorch_openvino.__file__).resolve().parent
# Modules that cost seconds to import; a light import needs none of them.
HEAVY_MODULES = ("torch", "torchao", "executorch.exir", "executorch.runtime")


def _imported_modules(importtime_stderr: str) -> list:
    """The modules a `python -X importtime` run imported, from its stderr."""
    return [
        line.rsplit("|", 1)[1].strip() for line in importtime_stderr.splitlines() if line.startswith("import time:")
    ]


def _heavy(modules: list) -> list:
    return [name for name in modules if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY_MODULES)]


def test_cmakedir_prints_only_the_cmake_folder_without_importing_torch():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "executorch_openvino", "--cmakedir"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == executorch_openvino.cmake_prefix_path + "\n"
    config = Path(done.stdout.strip()) / "executorch_openvino" / "executorch_openvinoConfig.cmake"
    assert config.is_file(), f"{config} is missing"
    other_lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert other_lines == [], "stderr holds more than -X importtime's lines"
    assert _heavy(_imported_modules(done.stderr)) == []


def test_import_registers_the_delegate_without_importing_torch_or_logging():
    script = (
        "import sys, executorch_openvino\n"
        "assert executorch_openvino.load_runtime_library().etov_registration_status() == 0\n"
        "import executorch.runtime\n"
        "names = executorch.runtime.Runtime.get().backend_registry.registered_backend_names\n"
        "assert 'ExecutorchOpenvinoBackend' in names, names\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import executorch_openvino"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line for line in done.stderr.splitlines() if not line.startswith("import time:")] == []
    assert _heavy(_imported_modules(done.stderr)) == []
    registered = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert registered.returncode == 0, registered.stderr[-2000:]


def _package_copy(folder: Path, *, without_library: bool = False, built_against: str = "") -> Path:
    """A copy of the installed Python package in `folder`, to import instead of it
    (PYTHONPATH): without its runtime library, or claiming another OpenVINO release."""
    ignored = ["__pycache__"] + (["libexecutorch_openvino_runtime.so"] if without_library else [])
    copy = folder / "executorch_openvino"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns(*ignored))
    if built_against:
        info = copy / "_build_info.py"
        text = info.read_text()
        import executorch_openvino._build_info as build_info

        info.write_text(text.replace(f'"{build_info.OPENVINO_VERSION}"', f'"{built_against}"'))
    return folder


def _run_with_package_from(folder: Path, script: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)


# Imports the package twice and lowers AddOne; prints where it imported the package from.
_LOWER_WITHOUT_RUNTIME = """
import sys, torch
import executorch_openvino, importlib
importlib.reload(executorch_openvino)
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino import OpenvinoPartitioner, set_load_options
from executorch_openvino.native_library import RuntimeLibraryUnavailable

class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1

exported = torch.export.export(AddOne(), (torch.randn(2, 3),))
program = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()]).to_executorch()
open(sys.argv[1] if len(sys.argv) > 1 else {path!r}, "wb").write(program.buffer)
assert "ExecutorchOpenvinoBackend" not in Runtime.get().backend_registry.registered_backend_names
try:
    set_load_options(inference_precision="f32")
except RuntimeLibraryUnavailable as error:
    print("set_load_options:", error)
print("imported from", executorch_openvino.__file__)
"""


def test_without_the_runtime_library_the_import_says_why_once_and_lowering_works(tmp_path):
    folder = _package_copy(tmp_path / "site", without_library=True)
    pte = tmp_path / "lowered_without_runtime.pte"
    done = _run_with_package_from(folder, _LOWER_WITHOUT_RUNTIME.format(path=str(pte)))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"imported from {folder}" in done.stdout
    assert done.stderr.count("runtime library is missing") == 1, done.stderr[-3000:]
    assert "running programs in this process needs it" in done.stderr
    assert "set_load_options: The executorch_openvino runtime library is missing" in done.stdout
    # The program lowered there runs here, where the runtime is loaded.
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(pte)  # kept alive while its method runs
    method = program.load_method("forward")
    for inputs in [(torch.randn(2, 3),), (torch.randn(2, 3),)]:
        assert_close(run(method, inputs), eager(AddOne(), inputs))


def test_a_runtime_built_for_another_openvino_release_is_not_loaded_and_the_import_names_both(tmp_path):
    folder = _package_copy(tmp_path / "site", built_against="2025.4.1")
    script = (
        "import logging, executorch_openvino\n"
        "from executorch_openvino.native_library import RuntimeLibraryUnavailable\n"
        "try:\n"
        "    executorch_openvino.load_runtime_library()\n"
        "except RuntimeLibraryUnavailable:\n"
        "    print('unavailable')\n"
    )
    done = _run_with_package_from(folder, script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "unavailable"
    from importlib.metadata import version

    installed = version("openvino")
    assert done.stderr.count("built against OpenVINO 2025.4.1") == 1, done.stderr
    assert f"installed is OpenVINO {installed}" in done.stderr
