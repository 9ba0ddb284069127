"""Matrix products of one input joined (conversion/rewrites/sibling_products.py) against
the same products apart, for prompts and decode steps of a Hugging Face LLM folder in
the form the export gives it by default (PagedAttention, f32): OpenVINO alone on our
IR converted both ways, in one process.

    python benchmarks/investigations/llm_joined_products_prefill.py --hf FOLDER \
        [--weight-compression int4] [--tokens 200 900] [--rounds 7]

Both programs are ``export_huggingface_llm`` of FOLDER (``--context`` positions, dynamic
length); "apart" is converted without the rewrite (common.quantized_llm.conversion_without).
Each IR is compiled as the runtime compiles the compile spec paged_attention
(llm_prefill_attention.py repeats that form in Python), at f32 with an f32 cache. A
round gives both the same new prompt of ``--tokens`` random ids, the engine going first
turning each round, then ``--steps`` decode steps with the engines alternating at every
step. Printed per prompt length: the median prompt and step times, and the median of the
paired ratios (apart / joined, same prompt or step), which cancel most of a shared
machine's drift; and the largest logit difference between the two (the rewrite must not
change values).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for llm_prefill_attention
from common.bench import environment, print_header, print_table  # noqa: E402
from common.quantized_llm import conversion_without  # noqa: E402
from llm_prefill_attention import BLOCK, bind_blocks, ir_in_pte, to_paged  # noqa: E402

WAYS = ("joined", "apart")


def export(folder: Path, context: int, compression: str, joined: bool, output: Path) -> Path:
    from executorch_openvino.llm.huggingface import export_huggingface_llm

    weight_compression = compression if compression != "none" else None  # the export's named forms
    if joined:
        program = export_huggingface_llm(folder, max_seq_len=context, weight_compression=weight_compression)
    else:
        with conversion_without("fuse_sibling_products"):
            program = export_huggingface_llm(folder, max_seq_len=context, weight_compression=weight_compression)
    output.write_bytes(program.buffer)
    return output


class PagedEngine:
    """Our IR in PagedAttention form, compiled at f32 with an f32 cache."""

    def __init__(self, pte: Path, context: int) -> None:
        model = ir_in_pte(pte)
        tokens_name, self.positions_name = (port.get_any_name() for port in model.inputs)
        to_paged(model, tokens_name)
        config = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}
        compiled = ov.Core().compile_model(model, "CPU", config)
        self.request = compiled.create_infer_request()
        bind_blocks(compiled, self.request, context)

    def call(self, ids: np.ndarray, start: int) -> np.ndarray:
        count, end = len(ids), start + len(ids)
        blocks = (end + BLOCK - 1) // BLOCK
        self.request.infer(
            {
                "input_ids": ids,
                self.positions_name: np.array([start], np.int64),
                "position_ids": np.arange(start, end, dtype=np.int64),
                "max_context_len": np.array(end, np.int32),
                "past_lens": np.array([start], np.int32),
                "subsequence_begins": np.array([0, count], np.int32),
                "block_indices_begins": np.array([0, blocks], np.int32),
                "block_indices": np.arange(blocks, dtype=np.int32),
            }
        )
        return self.request.get_output_tensor(0).data.reshape(-1).copy()


def timed(call, *args) -> float:
    begin = time.perf_counter()
    call(*args)
    return (time.perf_counter() - begin) * 1e3


def measure(engines: Dict[str, PagedEngine], tokens: int, rounds: int, steps: int) -> List[str]:
    rng = np.random.default_rng(tokens)
    prompt_ms: Dict[str, List[float]] = {way: [] for way in WAYS}
    step_ms: Dict[str, List[float]] = {way: [] for way in WAYS}
    largest_difference = 0.0
    for index in range(rounds + 1):  # round 0 warms up
        ids = rng.integers(10, 990, size=tokens).astype(np.int64)
        order = WAYS if index % 2 == 0 else WAYS[::-1]
        logits = {}
        for way in order:
            begin = time.perf_counter()
            logits[way] = engines[way].call(ids, 0)
            if index:
                prompt_ms[way].append((time.perf_counter() - begin) * 1e3)
        largest_difference = max(largest_difference, float(np.abs(logits["joined"] - logits["apart"]).max()))
        for step in range(steps):
            token = np.array([int(logits["joined"].argmax())], np.int64)
            for way in WAYS if step % 2 == 0 else WAYS[::-1]:
                ms = timed(engines[way].call, token, tokens + step)
                if index:
                    step_ms[way].append(ms)
    ratio = lambda times: statistics.median(a / j for a, j in zip(times["apart"], times["joined"]))  # noqa: E731
    return [
        str(tokens),
        f"{statistics.median(prompt_ms['joined']):.1f}",
        f"{statistics.median(prompt_ms['apart']):.1f}",
        f"{ratio(prompt_ms):.3f}",
        f"{statistics.median(step_ms['joined']):.2f}",
        f"{statistics.median(step_ms['apart']):.2f}",
        f"{ratio(step_ms):.3f}",
        f"{largest_difference:.1e}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf", type=Path, required=True, help="a Hugging Face LLM folder")
    parser.add_argument("--weight-compression", choices=["none", "int4", "int8"], default="none")
    parser.add_argument("--tokens", type=int, nargs="+", default=[200, 900])
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=48, help="decode steps a round")
    options = parser.parse_args()
    print_header(f"Joined and apart products, {options.weight_compression} weights, f32, paged", environment())
    with tempfile.TemporaryDirectory() as work:
        engines = {
            way: PagedEngine(
                export(options.hf, options.context, options.weight_compression, way == "joined", Path(work) / way),
                options.context,
            )
            for way in WAYS
        }
        rows = [measure(engines, tokens, options.rounds, options.steps) for tokens in options.tokens]
    print_table(
        [
            "prompt",
            "prompt ms, joined",
            "prompt ms, apart",
            "apart / joined",
            "step ms, joined",
            "step ms, apart",
            "apart / joined",
            "max logit difference",
        ],
        rows,
    )


if __name__ == "__main__":
    sys.exit(main())
