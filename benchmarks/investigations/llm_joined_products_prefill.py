"""Matrix products of one input joined (conversion/rewrites/sibling_products.py) against
the same products apart, for prompts and decode steps of a Hugging Face LLM folder in
the form the export gives it by default (PagedAttention, f32): OpenVINO alone on our
IR converted both ways, in one process.

    python benchmarks/investigations/llm_joined_products_prefill.py --hf FOLDER \
        [--weight-compression int4] [--tokens 200 900] [--rounds 7]

The programs are ``export_huggingface_llm`` of FOLDER (``--context`` positions, dynamic
length); "apart" is converted without the rewrite (common.quantized_llm.conversion_without),
and "apart, activation out" is that IR with a reshape (of a shape read from the graph) put
between each product and the Sigmoid that reads it, which keeps OpenVINO 2026.4.1's CPU
plugin from fusing the SiLU into the gate product: a FullyConnected with a fused
activation runs on oneDNN's brgemm, one without on MLAS, and at one token a row MLAS
is the faster (for comparison only; no export does this). Each IR is compiled as the
runtime compiles the compile spec paged_attention (llm_prefill_attention.py repeats that
form in Python), at ``--precision`` with a ``--kv-cache-precision`` cache (f32 and f32 by
default). A round gives every way the same new prompt of ``--tokens`` random ids, the
first engine turning each round, then ``--steps`` decode steps of random tokens, each
way's steps in one block in the same order (until 2026-12-07 the ways alternated at
every step, which slowed every step). Printed per prompt length and way: the
median prompt and step times, and the medians of the paired ratios to "joined" (same
prompt or step), which cancel most of a shared machine's drift; and the largest logit
difference from "joined" (none of the ways may change values at f32; at bf16 fused
layers round differently). First it prints the layers that stand for several nodes in
each way's compiled model (on CPUs with AMX at bf16, the plugin's LLMMLP, which GenAI's
layout gets for float weights and the joined products do not).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for llm_prefill_attention
from common.bench import environment, print_header, print_table  # noqa: E402
from common.quantized_llm import conversion_without  # noqa: E402
from llm_prefill_attention import BLOCK, bind_blocks, ir_in_pte, to_paged  # noqa: E402

WAYS = ("joined", "apart", "apart, activation out")


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


def keep_activations_out(model: ov.Model) -> int:
    """Puts a reshape, to a shape read from the graph, between each Sigmoid and the value it
    reads, which the CPU plugin then cannot fuse into the product before it. Returns how many."""
    kept = 0
    for sigmoid in [op for op in model.get_ordered_ops() if op.get_type_name() == "Sigmoid"]:
        value = sigmoid.input_value(0)
        readers = list(value.get_target_inputs())
        flat = ops.reshape(
            value, ops.constant(np.array([-1, value.get_partial_shape()[-1].get_length()], np.int64)), False
        )
        again = ops.reshape(flat, ops.shape_of(value), False)
        for reader in readers:
            reader.replace_source_output(again.output(0))
        kept += 1
    return kept


#: Layers of the CPU plugin that stand for several of the IR's nodes: on CPUs with AMX at
#: bf16 it fuses an MLP's gate, up and down products into one LLMMLP (OpenVINO 2026.4.1;
#: seen with float weights and products apart, as in GenAI's IR, never with 4-bit weights
#: or joined products), and may fuse the products of queries, keys and values into a
#: QKVProjection (not seen in either IR here).
FUSED_LAYER_TYPES = ("LLMMLP", "QKVProjection")


def fused_layers(compiled: ov.CompiledModel) -> str:
    """How many of FUSED_LAYER_TYPES the compiled model runs, e.g. "LLMMLP 8" ("-": none)."""
    types = [op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()]
    counts = [f"{name} {types.count(name)}" for name in FUSED_LAYER_TYPES if name in types]
    return ", ".join(counts) or "-"


class PagedEngine:
    """Our IR in PagedAttention form, compiled at `precision` with a `cache` KV cache (and
    any `more_config`, CPU properties by name)."""

    def __init__(
        self,
        pte: Path,
        context: int,
        precision: str,
        cache: str,
        activation_out: bool = False,
        more_config: Optional[Dict[str, object]] = None,
    ) -> None:
        model = ir_in_pte(pte)
        if activation_out and not keep_activations_out(model):
            raise SystemExit(f"{pte}: no Sigmoid to keep out of its product")
        tokens_name, self.positions_name = (port.get_any_name() for port in model.inputs)
        to_paged(model, tokens_name)
        config = {"INFERENCE_PRECISION_HINT": precision, "KV_CACHE_PRECISION": cache, **(more_config or {})}
        compiled = ov.Core().compile_model(model, "CPU", config)
        self.fused = fused_layers(compiled)
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


def measure(engines: Dict[str, PagedEngine], tokens: int, rounds: int, steps: int) -> List[List[str]]:
    rng = np.random.default_rng(tokens)
    prompt_ms: Dict[str, List[float]] = {way: [] for way in WAYS}
    step_ms: Dict[str, List[float]] = {way: [] for way in WAYS}
    largest_difference = {way: 0.0 for way in WAYS}
    for index in range(rounds + 1):  # round 0 warms up
        ids = rng.integers(10, 990, size=tokens).astype(np.int64)
        order = WAYS[index % len(WAYS) :] + WAYS[: index % len(WAYS)]
        logits = {}
        for way in order:
            begin = time.perf_counter()
            logits[way] = engines[way].call(ids, 0)
            if index:
                prompt_ms[way].append((time.perf_counter() - begin) * 1e3)
        for way in WAYS:
            difference = float(np.abs(logits[way] - logits["joined"]).max())
            largest_difference[way] = max(largest_difference[way], difference)
        # Each way's steps in one block: a compiled model called right after another
        # one finds the caches holding the other's weights (every step slower).
        step_tokens = rng.integers(10, 990, size=steps).astype(np.int64)
        for way in order:
            for step, token in enumerate(step_tokens):
                ms = timed(engines[way].call, token[None], tokens + step)
                if index:
                    step_ms[way].append(ms)

    def ratio(times: Dict[str, List[float]], way: str) -> float:
        return statistics.median(a / j for a, j in zip(times[way], times["joined"]))

    return [
        [
            str(tokens),
            way,
            f"{statistics.median(prompt_ms[way]):.1f}",
            f"{ratio(prompt_ms, way):.3f}",
            f"{statistics.median(step_ms[way]):.2f}",
            f"{ratio(step_ms, way):.3f}",
            f"{largest_difference[way]:.1e}",
        ]
        for way in WAYS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf", type=Path, required=True, help="a Hugging Face LLM folder")
    parser.add_argument("--weight-compression", choices=["none", "int4", "int8"], default="none")
    parser.add_argument("--tokens", type=int, nargs="+", default=[200, 900])
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=48, help="decode steps a round")
    parser.add_argument("--precision", choices=["f32", "bf16"], default="f32", help="INFERENCE_PRECISION_HINT")
    parser.add_argument("--kv-cache-precision", choices=["f32", "bf16", "f16", "u8"], help="default: --precision")
    options = parser.parse_args()
    cache = options.kv_cache_precision or options.precision
    title = f"Joined and apart products, {options.weight_compression} weights, {options.precision}, {cache} cache"
    print_header(title + ", paged", environment())
    with tempfile.TemporaryDirectory() as work:
        joined = export(options.hf, options.context, options.weight_compression, True, Path(work) / "joined")
        apart = export(options.hf, options.context, options.weight_compression, False, Path(work) / "apart")
        engines = {
            "joined": PagedEngine(joined, options.context, options.precision, cache),
            "apart": PagedEngine(apart, options.context, options.precision, cache),
            "apart, activation out": PagedEngine(apart, options.context, options.precision, cache, activation_out=True),
        }
        print_table(["way", "fused layers of the CPU plugin"], [[way, engine.fused] for way, engine in engines.items()])
        rows = [row for tokens in options.tokens for row in measure(engines, tokens, options.rounds, options.steps)]
    print_table(
        ["prompt", "way", "prompt ms", "/ joined", "step ms", "/ joined", "max logit difference"],
        rows,
    )


if __name__ == "__main__":
    sys.exit(main())
