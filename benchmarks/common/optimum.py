"""optimum-intel's export of a saved Hugging Face folder to the IRs OpenVINO GenAI runs, for
the benchmarks that compare ours with GenAI's pipelines (llm_genai.py, seq2seq.py, vlm.py).

optimum-intel pins a transformers below the project's, so it lives in a venv of its own
that ``benchmarks/genai_env.sh`` makes; its ``optimum-cli`` runs as a subprocess.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from pathlib import Path
from typing import Sequence

logger = logging.getLogger("benchmarks.optimum")

#: The optimum-cli of the venv benchmarks/genai_env.sh makes by default.
OPTIMUM_CLI = "/work/venvs/optimum-intel/bin/optimum-cli"
#: What GenAI's pipelines read besides the model: optimum-cli writes them with
#: openvino-tokenizers installed in its venv.
TOKENIZER_IRS = ("openvino_tokenizer.xml", "openvino_detokenizer.xml")


def optimum_export(
    optimum_cli: str,
    folder: Path,
    task: str,
    out: Path,
    weight_args: Sequence[str] = ("--weight-format", "fp32"),
) -> Path:
    """``optimum-cli export openvino --model folder --task task weight_args out``, offline,
    its output in ``out``'s sibling ``<name>.log``. Raises with the log's end if the export
    fails or writes no tokenizer IRs. Returns ``out``."""
    log = out.parent / f"{out.name}.log"
    command = [optimum_cli, "export", "openvino", "--model", str(folder), "--task", task, *weight_args, str(out)]
    logger.info("optimum-cli export: %s (log %s)", " ".join(command), log)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    environment.pop("OMP_WAIT_POLICY", None)  # the benchmark's setting for its own torch, not the export's
    begin = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as written:
        done = subprocess.run(command, stdout=written, stderr=subprocess.STDOUT, env=environment)
    if done.returncode:
        raise RuntimeError(f"optimum-cli failed ({done.returncode}); see {log}:\n" + log.read_text()[-3000:])
    missing = [name for name in TOKENIZER_IRS if not (out / name).is_file()]
    if missing:
        raise RuntimeError(f"optimum-cli wrote no {missing}: is openvino-tokenizers installed in its venv?")
    logger.info("optimum-cli export took %.0f s", time.perf_counter() - begin)
    return out
