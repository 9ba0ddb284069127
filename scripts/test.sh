#!/usr/bin/env bash
# Sets everything up, then runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
. "${VENV:-.venv}/bin/activate"
# Run from the repo root against the installed package (not the source folder).
# Two workers, each taking whole files (module fixtures export a model once): the
# exports are single-threaded Python, so this cuts the wall time by about a third
# on two cores. PYTEST_WORKERS=0 runs in one process.
python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile "$@"
