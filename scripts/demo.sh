#!/usr/bin/env bash
# Sets everything up, then runs the demo: export, lower, save, load, compare, time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
. "${VENV:-.venv}/bin/activate"
python examples/demo.py "$@"
