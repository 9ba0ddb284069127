#!/usr/bin/env bash
# A venv for optimum-intel, whose `optimum-cli export openvino` writes the Whisper
# model OpenVINO GenAI's WhisperPipeline runs (benchmarks/seq2seq.py calls it).
#
#     bash benchmarks/genai_env.sh [VENV]        # default /work/venvs/optimum-intel
#
# optimum-intel 2.2.0 pins transformers < 5.6, below the project's transformers, so it
# lives in a venv of its own, outside the repository. Order and pins matter:
# - torch first and pinned: pip takes the CPU build this machine holds; an unpinned
#   torch (optimum's requirement) pulls a multi-GB CUDA build;
# - optimum-intel without its dependencies: it requires torchvision, whose wheel here
#   needs CUDA, and its Whisper export does not use it;
# - openvino and openvino-tokenizers at the release the project and GenAI use: the
#   tokenizer and detokenizer IRs optimum-cli writes (with openvino-tokenizers in this
#   venv) must load in openvino-genai 2026.4.1 in the project's venv.
# The project's venv gets GenAI itself:
#     pip install openvino-genai==2026.4.1.0 openvino-tokenizers==2026.4.1.0
set -euo pipefail

VENV=${1:-/work/venvs/optimum-intel}
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check)

"${PIP[@]}" torch==2.13.0
"${PIP[@]}" --no-deps optimum-intel==2.2.0
# optimum-intel's own requirements but torchvision, and what its Whisper export imports.
"${PIP[@]}" \
    "optimum~=2.3.0" \
    "transformers<5.6" \
    "huggingface-hub<1.22" \
    openvino==2026.4.1 \
    openvino-tokenizers==2026.4.1.0 \
    nncf==3.4.0 \
    setuptools \
    "requests>=2.33,<3.0" \
    torch==2.13.0

if "$VENV/bin/python" -c "import torchvision" 2>/dev/null; then
    echo "torchvision is installed in $VENV; its wheel here needs CUDA: pip uninstall torchvision" >&2
    exit 1
fi
"$VENV/bin/python" - <<'EOF'
import openvino, openvino_tokenizers, optimum.intel, torch, transformers

print(f"{__import__('sys').prefix}: openvino {openvino.__version__}, torch {torch.__version__}, "
      f"transformers {transformers.__version__}")
EOF
echo "optimum-cli: $VENV/bin/optimum-cli"
