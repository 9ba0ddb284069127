#!/usr/bin/env bash
# Creates (or reuses) the virtual environment .venv and installs the project into
# it with a plain `pip install`, which builds the C++ runtime. Used by demo.sh,
# test.sh and CI. Set VENV to use another folder.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
# shellcheck disable=SC1091
. "$VENV/bin/activate"
# Install only when what the package is built from changed since the last install
# into this venv: a pip install rebuilds the C++ runtime, a minute or more.
stamp="$VENV/.executorch_openvino-sources"
sources=$(find CMakeLists.txt pyproject.toml backends/openvino -path backends/openvino/tests -prune \
            -o -type f ! -name '*.pyc' -print | LC_ALL=C sort | xargs sha256sum | sha256sum)
if [ "$(cat "$stamp" 2>/dev/null)" = "$sources" ]; then
  exit 0
fi
python -m pip install --quiet --upgrade pip
# torch first and pinned: the CPU build of 2.13.0 works with executorch 1.5.1, while
# an unpinned torch resolves to a CUDA build of several GB.
python -m pip install --quiet torch==2.13.0
python -m pip install --quiet ".[test,quantization,huggingface,llm]"
echo "$sources" > "$stamp"
