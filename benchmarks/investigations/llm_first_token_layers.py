"""Where a prompt's first token goes, layer by layer: our IR run by OpenVINO alone, our
program through ``executorch.runtime``'s ``Method.execute``, ExecuTorch's ``TextLLMRunner``
(tokenizing and sampling included) and OpenVINO GenAI's ``LLMPipeline`` on optimum-intel's
IR of the same folder, in one process and alternating rounds.

    python benchmarks/investigations/llm_first_token_layers.py --pte OURS.pte \
        --tokenizer FOLDER/tokenizer.json --genai-dir GENAI_IR [--tokens 900] [--rounds 8] \
        [--precision bf16] [--kv-cache-precision u8]

OURS.pte and GENAI_IR are llm_genai.py's exports (``--work`` keeps them): for example
``ours_speed_int4.pte`` and ``genai_int4`` with ``--precision bf16 --kv-cache-precision u8``
(what ``--speed`` compiles and GenAI's default on a CPU with bf16), or
``ours_default_int4.pte`` with ``--precision f32 --kv-cache-precision f32`` (GenAI then
runs with ``INFERENCE_PRECISION_HINT=f32``). OpenVINO alone compiles our IR in
PagedAttention form as the runtime compiles the compile spec paged_attention
(llm_joined_products_prefill.py's ``PagedEngine``) at those precisions; the other three
take the precisions their program or GenAI sets. Every round makes a new prompt text of
about ``--tokens`` tokens (llm_genai.py's, so GenAI's prefix cache finds nothing) and
gives it to each layer once at position 0, in order and reversed on alternate rounds. Printed:
the median first-token time of each layer and the median of its paired ratios to
OpenVINO alone: the runner's and the binding's cost are the steps between the rows, and
the last row is what GenAI's IR and pipeline do differently.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common and llm_genai
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for llm_joined_products_prefill
from common.bench import environment, print_header, print_table, round_order  # noqa: E402
from llm_genai import GenaiEngine, OursEngine, Prompts  # noqa: E402
from llm_joined_products_prefill import PagedEngine  # noqa: E402

#: A layer's first token, ms, from the prompt's text and its token ids.
FirstToken = Callable[[str, List[int]], float]


def layers(options: argparse.Namespace) -> Dict[str, FirstToken]:
    from executorch.runtime import Runtime

    alone = PagedEngine(options.pte, options.context, options.precision, options.kv_cache_precision)
    method = Runtime.get().load_program(options.pte).load_method("forward")
    runner = OursEngine(options.pte, options.tokenizer)
    genai = GenaiEngine(options.genai_dir, {} if options.precision == "bf16" else {"INFERENCE_PRECISION_HINT": "f32"})

    def openvino_alone(text: str, ids: List[int]) -> float:
        start = time.perf_counter()
        alone.call(np.array(ids, np.int64), 0)
        return (time.perf_counter() - start) * 1e3

    def method_execute(text: str, ids: List[int]) -> float:
        inputs = [torch.tensor([ids]), torch.tensor([0])]
        start = time.perf_counter()
        method.execute(inputs)
        return (time.perf_counter() - start) * 1e3

    return {
        "OpenVINO alone, our IR": openvino_alone,
        "Method.execute": method_execute,
        "TextLLMRunner": lambda text, ids: runner.generate(text, 1).first_token_ms,
        "GenAI LLMPipeline": lambda text, ids: genai.generate(text, 1).first_token_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pte", type=Path, required=True, help="our export of the folder")
    parser.add_argument("--tokenizer", type=Path, required=True, help="the folder's tokenizer.json")
    parser.add_argument("--genai-dir", type=Path, required=True, help="optimum-intel's IR of the folder")
    parser.add_argument("--tokens", type=int, default=900, help="prompt tokens (about)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--context", type=int, default=1024, help="positions OpenVINO alone's blocks hold")
    parser.add_argument("--precision", choices=["f32", "bf16"], default="bf16")
    parser.add_argument("--kv-cache-precision", choices=["f32", "bf16", "f16", "u8"], default="u8")
    options = parser.parse_args()
    print_header(f"First token of a {options.tokens}-token prompt, {options.pte.name}", environment())
    first_token = layers(options)
    names = list(first_token)
    prompts = Prompts(options.tokenizer)
    times: Dict[str, List[float]] = {name: [] for name in names}
    for index in range(options.rounds + 1):  # round 0 warms up
        text = prompts.make(options.tokens)
        ids = prompts.ids(text)
        for name in round_order(names, index):
            ms = first_token[name](text, ids)
            if index:
                times[name].append(ms)
    alone = times[names[0]]
    rows = [
        [
            name,
            f"{statistics.median(times[name]):.1f}",
            f"{statistics.median(t / a for t, a in zip(times[name], alone)):.3f}",
        ]
        for name in names
    ]
    print_table(["layer", "first token ms", f"/ {names[0]}"], rows)


if __name__ == "__main__":
    main()
