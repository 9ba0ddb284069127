#!/usr/bin/env bash
# Checks that a .pte lowered with one OpenVINO release runs on another.
#
#   env A: torch 2.13.0, executorch 1.5.1, openvino 2026.4.1 (the pinned release) and this
#          repo; lowers a small CNN with OpenvinoPartitioner and exports a small Llama with
#          the export command (dynamic lengths, KV cache in the delegate), and saves each
#          .pte with its inputs and eager's outputs.
#   env B: the same but another OpenVINO release (2025.4.1 unless PORTABILITY_OPENVINO
#          says), with this repo built against it; loads each of env A's programs three
#          times (no cache; a model cache, written then imported) and runs its inputs on
#          each load, the Llama's prompt and decode steps in order, against eager
#          (the CNN at rtol=atol=1e-5, the Llama's logits at 1e-4).
#
# Usage: bash scripts/portability.sh
#
# Environment:
#   PORTABILITY_WORK=DIR  work in DIR (created if missing) and keep it; venvs already in it
#                         are reused, which makes a second run fast.
#   PORTABILITY_KEEP=1    keep the temporary work folder (venvs, logs, model) after the run.
#   PORTABILITY_OPENVINO=2025.1.0
#                         the OpenVINO release of env B (default 2025.4.1).
#   PYTHON=python3.11     the interpreter for the venvs (default python3; torch's CPU wheel
#                         must exist for its version).
#
# Each venv installs from the pip cache or the package index; torch is pinned to 2.13.0 and
# a pip dry run refuses any resolution that would bring a CUDA build. The project is built
# with --no-build-isolation --no-deps, in a build folder inside the work folder, so the repo
# (and its build/) is not touched. Not run by CI: it downloads and builds two environments.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELPER="$REPO/scripts/portability_check.py"
PYTHON="${PYTHON:-python3}"
OV_A="2026.4.1"
OV_B="${PORTABILITY_OPENVINO:-2025.4.1}"
COMMON=(torch==2.13.0 executorch==1.5.1 numpy scikit-build-core cmake ninja)

if [[ -n "${PORTABILITY_WORK:-}" ]]; then
  mkdir -p "$PORTABILITY_WORK"
  WORK="$(cd "$PORTABILITY_WORK" && pwd)"
  REMOVE_WORK=0
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/etov-portability.XXXXXX")"
  [[ "${PORTABILITY_KEEP:-0}" == 1 ]] && REMOVE_WORK=0 || REMOVE_WORK=1
fi
LOGS="$WORK/logs"
OUT="$WORK/out"
mkdir -p "$LOGS" "$OUT"
STEP="setup"
STEP_LOG=""
START=$SECONDS

finish() {
  local rc=$?
  trap - EXIT
  if [[ $rc -ne 0 ]]; then
    if [[ -n "$STEP_LOG" && -f "$STEP_LOG" ]]; then
      echo "---- last lines of $STEP_LOG ----" >&2
      tail -n 80 "$STEP_LOG" >&2 || true
      echo "----" >&2
    fi
    echo "portability: FAIL at step '$STEP' after $((SECONDS - START)) s (exit $rc)"
  else
    echo "portability: PASS: a .pte lowered with OpenVINO $OV_A runs on OpenVINO $OV_B and matches eager ($((SECONDS - START)) s)"
  fi
  if [[ $REMOVE_WORK == 1 ]]; then
    rm -rf -- "$WORK"
  else
    echo "portability: work folder kept: $WORK (logs in $LOGS)"
  fi
  exit "$rc"
}
trap finish EXIT

# step NAME CMD...: runs CMD with its output in $LOGS/NAME.log, and says how long it took.
step() {
  STEP="$1"
  STEP_LOG="$LOGS/$1.log"
  shift
  local begin=$SECONDS
  echo "portability: $STEP ..."
  "$@" >"$STEP_LOG" 2>&1
  echo "portability: $STEP done in $((SECONDS - begin)) s"
}

# show NAME CMD...: like step, but the output also goes to the terminal.
show() {
  STEP="$1"
  STEP_LOG="$LOGS/$1.log"
  shift
  local begin=$SECONDS
  echo "portability: $STEP ..."
  "$@" 2>&1 | tee "$STEP_LOG"
  echo "portability: $STEP done in $((SECONDS - begin)) s"
}

make_venv() {
  local venv="$1"
  [[ -x "$venv/bin/python" ]] || "$PYTHON" -m venv "$venv"
}

# install_pinned VENV REQUIREMENTS...: a dry run first, so that no CUDA torch is downloaded.
install_pinned() {
  local venv="$1"
  shift
  local report="$venv/resolution.json"
  "$venv/bin/python" -m pip install --dry-run --quiet --report "$report" "$@"
  "$venv/bin/python" -I "$HELPER" resolution "$report"
  "$venv/bin/python" -m pip install "$@"
}

# install_project VENV NAME: builds this repo against the venv's wheels, in $WORK/build-NAME.
install_project() {
  local venv="$1" name="$2"
  "$venv/bin/python" -m pip install -v --no-build-isolation --no-deps --force-reinstall \
    --config-settings=build-dir="$WORK/build-$name" "$REPO"
}

echo "portability: repo $REPO, work folder $WORK"
"$PYTHON" --version

# The helper runs from the work folder, so that nothing in the repo is imported by accident.
cd "$WORK"

# Environment A: lower with the pinned OpenVINO.
step venv-a make_venv "$WORK/env-a"
step install-a install_pinned "$WORK/env-a" "${COMMON[@]}" "openvino==$OV_A"
step build-a install_project "$WORK/env-a" a
show export-a "$WORK/env-a/bin/python" -I "$HELPER" export "$OUT"

# Environment B: another OpenVINO release, the runtime rebuilt against it.
step venv-b make_venv "$WORK/env-b"
step install-b install_pinned "$WORK/env-b" "${COMMON[@]}" "openvino==$OV_B"
step build-b install_project "$WORK/env-b" b
show build-info-b "$WORK/env-b/bin/python" -I "$HELPER" build-info "$OV_B"
show run-b "$WORK/env-b/bin/python" -I "$HELPER" run "$OUT" "$OV_B"
