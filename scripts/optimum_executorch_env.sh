#!/usr/bin/env bash
# A venv for optimum-executorch, whose `optimum-cli export executorch` takes this
# project's `--recipe openvino` (backends/openvino/llm/optimum_executorch.py, found by
# optimum-cli through the add-on integrations/optimum-executorch; tested by
# backends/openvino/tests/huggingface/test_optimum_executorch.py; docs/huggingface.md).
#
#     bash scripts/optimum_executorch_env.sh [VENV]   # default /work/venvs/optimum-executorch
#     VENV/bin/python -m pytest backends/openvino/tests/huggingface/test_optimum_executorch.py
#
# optimum-executorch 1.1.0 pins transformers==5.0.0rc1, which the project's
# huggingface extra (5.23.0) excludes, so it lives in a venv of its own, outside the
# repository. pip resolves it with the project's pins as they are (torch 2.13.0,
# executorch 1.5.1, openvino 2026.4.1, nncf 3.4.0): optimum 2.0.0, torchao 0.18.0,
# `pip check` clean. Order and pins matter:
# - torch first and pinned: pip takes the CPU build this machine holds; an unpinned
#   torch (optimum-executorch's requirement through executorch) pulls a CUDA build;
# - this project next, without its dependencies (its huggingface extra would replace
#   transformers 5.0.0rc1) and without build isolation (the C++ runtime is built
#   against the executorch and openvino installed here: a minute or two);
# - the add-on executorch-openvino-optimum after it: its requirements
#   (optimum-executorch, executorch-openvino) are then met, and pip installs nothing else.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-/work/venvs/optimum-executorch}
PYTHON=${PYTHON:-python3.11}

if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check)

"${PIP[@]}" torch==2.13.0
"${PIP[@]}" torch==2.13.0 executorch==1.5.1 optimum-executorch==1.1.0
# This project's runtime and build requirements, NNCF for the recipe's weight_compression,
# pytest and tokenizers (a transformers requirement already) for the test.
"${PIP[@]}" torch==2.13.0 openvino==2026.4.1 nncf==3.4.0 "scikit-build-core>=0.10" "cmake>=3.28" ninja pytest
"${PIP[@]}" --no-deps --no-build-isolation "$REPO"
"${PIP[@]}" "$REPO/integrations/optimum-executorch"
"$VENV/bin/python" -m pip check

"$VENV/bin/python" - <<'EOF'
import sys
from importlib.metadata import version

import optimum.commands.register.register_executorch_openvino  # noqa: F401  what optimum-cli imports
from optimum.exporters.executorch.recipe_registry import recipe_registry

assert "openvino" in recipe_registry
names = ("torch", "executorch", "openvino", "transformers", "optimum", "optimum-executorch")
names += ("executorch-openvino", "executorch-openvino-optimum")
print(sys.prefix + ": " + ", ".join(f"{name} {version(name)}" for name in names))
EOF
echo "export: $VENV/bin/optimum-cli export executorch --model DIR --task text-generation --recipe openvino --output_dir OUT"
