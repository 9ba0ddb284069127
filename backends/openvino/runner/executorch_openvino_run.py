"""Console script `executorch-openvino-run`: starts the C++ runner installed with executorch_openvino.

The runner is a C++ program (runner/run_program.cpp); this module only finds it and
replaces the Python process with it, so no Python thread shares the cores with
OpenVINO. It is a top-level module: the package's own __init__ imports torch,
which a command-line runner has no use for.

Example::

    executorch-openvino-run model.pte --input x.npy --iterations 20
"""

import importlib.util
import os
import sys


def runner_path() -> str:
    """The path of the runner executable inside the installed executorch_openvino package."""
    spec = importlib.util.find_spec("executorch_openvino")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("executorch-openvino-run: the executorch_openvino package is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "bin", "executorch-openvino-run")


def main() -> None:
    path = runner_path()
    if not os.access(path, os.X_OK):
        raise SystemExit(f"executorch-openvino-run: {path} is missing; reinstall the package (pip install .)")
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
