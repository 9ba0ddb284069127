"""How the runtime library reaches executorch.runtime: by importing the package."""

import os
import subprocess
import sys

import pytest
import torch
from executorch_openvino import BACKEND_ID
from harness import lower

_LOAD_AND_RUN = """
import torch
{imports}
from executorch.runtime import Runtime
runtime = Runtime.get()
assert "{backend_id}" in runtime.backend_registry.registered_backend_names
method = runtime.load_program(r"{path}").load_method("forward")
x = torch.arange(6, dtype=torch.float32).view(2, 3)
assert torch.equal(method.execute([x])[0], x * 2 + 1), "wrong result"
print("ran")
"""


class TwiceXPlusOne(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


@pytest.mark.parametrize(
    "imports",
    [
        "import executorch_openvino\nimport executorch.runtime",
        "import executorch.runtime\nfrom executorch.runtime import Runtime\nRuntime.get()\nimport executorch_openvino",
    ],
    ids=["imported_before_executorch_runtime", "imported_after_executorch_runtime"],
)
def test_importing_the_package_registers_the_delegate_without_environment_settings(imports, tmp_path):
    path = lower(TwiceXPlusOne(), (torch.randn(2, 3),), tmp_path).path
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("LD_LIBRARY_PATH", "OPENVINO_LIB_PATH", "LD_PRELOAD")
    }
    script = _LOAD_AND_RUN.format(imports=imports, backend_id=BACKEND_ID, path=path)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "ran" in result.stdout, result.stderr[-3000:]


def test_program_without_the_package_imported_names_the_missing_backend(tmp_path):
    path = lower(TwiceXPlusOne(), (torch.randn(2, 3),), tmp_path).path
    script = f"from executorch.runtime import Runtime\nRuntime.get().load_program(r'{path}').load_method('forward')\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert BACKEND_ID in result.stderr, result.stderr[-3000:]


def test_backend_id_differs_from_the_older_openvino_backend():
    assert BACKEND_ID != "OpenvinoBackend"


@pytest.mark.parametrize("installed", ["libexecutorch_openvino_runtime.so", "bin/executorch-openvino-run"])
def test_installed_binaries_find_libraries_only_relative_to_themselves(installed):
    # pip builds in a temporary environment under /tmp; an absolute RUNPATH left
    # pointing there would load whatever library someone later puts in that place.
    import executorch_openvino

    path = os.path.join(os.path.dirname(executorch_openvino.__file__), installed)
    dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    if dynamic.returncode != 0:
        pytest.skip(f"readelf cannot read {path}: {dynamic.stderr.strip()}")
    runpaths = [line.split("[", 1)[1].rstrip("]") for line in dynamic.stdout.splitlines() if "RUNPATH" in line]
    assert runpaths, f"{installed} has no RUNPATH"
    assert all(entry.startswith("$ORIGIN") for entry in runpaths[0].split(":")), runpaths[0]
