"""Which length of activation groups is faster for a 4-bit LLM on this CPU: our IR run by
OpenVINO alone with DYNAMIC_QUANTIZATION_GROUP_SIZE set to each length, a prompt and then
decode steps, in one process and alternating rounds.

    python benchmarks/investigations/llm_activation_groups.py --pte OURS.pte \
        [--groups 32 128] [--tokens 200] [--steps 32] [--rounds 8] [--precision f32]

OURS.pte is ``python -m executorch_openvino.llm.export --hf FOLDER --max-seq-len 1024
--weight-compression int4`` (4-bit weights in groups of 128). The CPU plugin quantizes the
activations of layers with compressed weights to int8 in groups of its
DYNAMIC_QUANTIZATION_GROUP_SIZE (its default 32) on CPUs with VNNI or AMX. Each engine
compiles the IR in the .pte once, in PagedAttention form as runtime/paged_attention.cpp
compiles it for the compile spec paged_attention (llm_joined_products_prefill.py's
``PagedEngine``), with INFERENCE_PRECISION_HINT and KV_CACHE_PRECISION ``--precision``
and one group length.

Every round makes a prompt of ``--tokens`` random ids and gives it to each engine at
position 0, then ``--steps`` greedy decode steps of one token; the engines' order
alternates between rounds, and each engine runs its prompt and steps in one block (an
engine alternating at every step with another compiled model runs slower: the caches go
to the other's weights). Printed: per group length, the median prompt time and decode
step, and the median over rounds of the paired ratio to the last length given.
``--counters`` then compiles each length again with PERF_COUNT and prints OpenVINO's
per-node counters of a prompt summed by node and exec type (the largest, mean of 3
prompts after a warm-up, taken out of the plugin's running means), which show where the
lengths differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order  # noqa: E402
from llm_joined_products_prefill import PagedEngine  # noqa: E402
from llm_prefill_attention import ms_per_call, node_means  # noqa: E402


def prompt_and_steps(engine: PagedEngine, prompt: np.ndarray, steps: int) -> Tuple[float, float]:
    """The prompt's time and the median decode step, ms."""
    start = time.perf_counter()
    token = int(engine.call(prompt, 0).argmax())
    prompt_ms = (time.perf_counter() - start) * 1e3
    step_ms = []
    for step in range(steps):
        start = time.perf_counter()
        token = int(engine.call(np.array([token], np.int64), len(prompt) + step).argmax())
        step_ms.append((time.perf_counter() - start) * 1e3)
    return prompt_ms, statistics.median(step_ms)


def counters_of_prompts(pte: Path, options: argparse.Namespace, group: int, shown: int = 8) -> List[List[str]]:
    """OpenVINO's per-node counters of a prompt at one group length, summed by node and exec
    type: the `shown` largest, ms (mean of 3 prompts after a warm-up)."""
    config = {"DYNAMIC_QUANTIZATION_GROUP_SIZE": group, "PERF_COUNT": True}
    engine = PagedEngine(pte, options.context, options.precision, options.precision, more_config=config)
    rng = np.random.default_rng(1)
    engine.call(rng.integers(10, 990, options.tokens).astype(np.int64), 0)  # warms up, prepares kernels
    warmed = node_means(engine.request)
    for _ in range(3):
        engine.call(rng.integers(10, 990, options.tokens).astype(np.int64), 0)
    totals: Counter = Counter()
    for node, ms in ms_per_call(engine.request, warmed, 1, 3):
        totals[(node.node_type, node.exec_type)] += ms
    rows = [[group, "all nodes", "", f"{sum(totals.values()):.1f}"]]
    rows += [[group, kind, exec_type, f"{ms:.1f}"] for (kind, exec_type), ms in totals.most_common(shown)]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pte", type=Path, required=True, help="our int4 export of an LLM folder")
    parser.add_argument("--groups", type=int, nargs="+", default=[32, 128], help="activation group lengths")
    parser.add_argument("--tokens", type=int, default=200, help="prompt tokens")
    parser.add_argument("--steps", type=int, default=32, help="decode steps a round")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--context", type=int, default=1024, help="positions the blocks hold")
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16"])
    parser.add_argument("--counters", action="store_true", help="also print per-node counters of a prompt")
    options = parser.parse_args()
    print_header(f"Activation groups, {options.pte.name}, prompt {options.tokens}", environment())
    engines: Dict[int, PagedEngine] = {
        group: PagedEngine(
            options.pte,
            options.context,
            options.precision,
            options.precision,
            more_config={"DYNAMIC_QUANTIZATION_GROUP_SIZE": group},
        )
        for group in options.groups
    }
    rng = np.random.default_rng(0)
    prompt_and_steps(engines[options.groups[0]], rng.integers(10, 990, options.tokens).astype(np.int64), 2)  # warm-up
    rounds: List[Dict[int, Tuple[float, float]]] = []
    for index in range(options.rounds):
        prompt = rng.integers(10, 990, options.tokens).astype(np.int64)
        rounds.append(
            {g: prompt_and_steps(engines[g], prompt, options.steps) for g in round_order(options.groups, index)}
        )
    reference = options.groups[-1]
    rows = []
    for group in options.groups:
        prompt_ratio = statistics.median(r[group][0] / r[reference][0] for r in rounds)
        step_ratios = sorted(r[group][1] / r[reference][1] for r in rounds)
        rows.append(
            [
                group,
                f"{statistics.median(r[group][0] for r in rounds):.1f}",
                f"{prompt_ratio:.3f}",
                f"{statistics.median(r[group][1] for r in rounds):.3f}",
                f"{statistics.median(step_ratios):.3f} ({step_ratios[0]:.2f}-{step_ratios[-1]:.2f})",
            ]
        )
    print_table(["group", "prompt ms", f"/ {reference}", "step ms", f"/ {reference} (range)"], rows)
    if options.counters:
        del engines  # one compiled model at a time
        print(f"\nPer-node counters of a {options.tokens}-token prompt, by node and exec type (ms)")
        rows = [row for group in options.groups for row in counters_of_prompts(options.pte, options, group)]
        print_table(["group", "node type", "exec type", "ms"], rows)


if __name__ == "__main__":
    main()
