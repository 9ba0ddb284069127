#!/usr/bin/env bash
# Sets everything up, then runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
. "${VENV:-.venv}/bin/activate"
# Run from the repo root against the installed package (not the source folder).
python -m pytest "$@"
