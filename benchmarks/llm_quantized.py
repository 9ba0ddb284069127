"""Quantized LLM decode: our delegate on NNCF-compressed weights against XNNPACK's LLM recipe
(8da4w with ExecuTorch's custom sdpa / KV-cache ops) and OpenVINO alone on the same
compressed stateful IR, in one process and alternating rounds.

    python benchmarks/llm_quantized.py                        # dim 1024 x 8 layers, contexts 256 and 1024
    python benchmarks/llm_quantized.py --shape 1b --contexts 1024 --no-prefill --no-accuracy
    python benchmarks/llm_quantized.py --forms int4_sym:128 int4_sym:128:all int4_asym:128 int8_asym
    python benchmarks/llm_quantized.py --contexts 1024 --forms int4_sym:128:all --kv-cache-u8 --accuracy-prompt 896

The model is the Llama of ExecuTorch's examples with random weights: `--shape 1024`
is dim 1024, 8 layers, 16 heads, 4 KV heads; `--shape 1b` is Llama 3.2 1B's shape
(dim 2048, 16 layers, 32 heads, 8 KV heads); both with a 32000-token vocabulary.
A form is `mode[:group[:all]]`: NNCF's `compress_weights` mode, its group size (-1 per
channel) and `all` for `all_layers=True` (the embedding and the output projection in
4 bits too, as XNNPACK's 8da4w quantizes the output projection; NNCF's default keeps
them in 8 bits). For each context and form:
- decode: static exports (one token per call), the cache filled to 60% of the context,
  then `--tokens` greedy steps; rows for ours with the compile specs export_llm gives
  those weights (the defaults: activations quantized in OpenVINO's groups) and with
  `dynamic_quantization_group_size=0` (f32 activations), XNNPACK 8da4w (group 128) and
  OpenVINO alone compiled from the same IR with our runtime's configuration, with
  OpenVINO's own defaults (its precision hint, u8 KV cache and dynamic quantization, as
  OpenVINO GenAI runs a stateful LLM on a CPU) and with `--extra-config`;
- prefill: dynamic-length exports, `--prompt` tokens in one call (ours and XNNPACK);
- with `--kv-cache-u8`, a row of ours per form with `kv_cache_precision="u8"` (OpenVINO's
  CPU default for the KV cache, as OpenVINO GenAI runs it);
- accuracy: 64 greedy tokens after a 16-token prompt (`--accuracy-prompt` for a longer
  one, to see a long context) through one loaded method, against
  the quantized eager model each engine was made from (NNCF's compressed model, or the
  8da4w model): how many of the 64 tokens agree with eager's greedy tokens (stopping at
  the first difference), and the largest relative logit error over the steps where the
  inputs agreed;
- size and memory: the .pte's size, and the resident and anonymous growth of a fresh
  process that loads it and decodes 4 steps, over the .pte's size (its weight bytes).
Decode rows give the median and the fastest and slowest round. A machine shared with
others can slow both engines for minutes at a time, XNNPACK more than ours (a KVM Zen 5
here): rounds far apart, or XNNPACK slower than in a quiet run, mean a busy machine.
Targets (the quantized-LLM issue): INT4 decode <= 0.8x XNNPACK 8da4w's time on CPUs with
AMX, <= 0.9x elsewhere; <= 1.05x OpenVINO alone on the same IR; prefill no slower than
XNNPACK's; resident growth <= 1.2x the weight bytes.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
from pathlib import Path
from typing import Callable, Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from common.bench import environment, max_rel_err, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.llm import SHAPES, decode_ms, fresh_load, llama_of_shape, next_token, prefill_ms, xnnpack_partitioner  # noqa: E402
from common.llm_engines import Eager, ExecutorchEngine, OpenvinoAloneLogitsCopy, compile_config  # noqa: E402
from common.quantized_llm import (  # noqa: E402
    add_model_arguments,
    converted_ir,
    nncf_compressed,
    programs_folder,
    write_pte,
    xnnpack_8da4w,
)
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402


def accuracy(
    engine: Callable, reference: Callable, context: int, steps: int = 64, prompt_length: int = 16
) -> Tuple[int, float]:
    """(greedy tokens that agree with the reference's, largest relative logit error) over
    `steps` greedy steps (fewer where the context is shorter) after a `prompt_length`-token
    prompt fed one token per call."""
    prompt = torch.randint(0, 32000, (prompt_length,), generator=torch.Generator().manual_seed(2)).tolist()
    steps = min(steps, context - len(prompt))
    worst, agreed, token = 0.0, 0, None
    for position in range(len(prompt) + steps):
        feed = prompt[position] if position < len(prompt) else token
        got = engine(torch.tensor([[feed]]), position).float().reshape(-1)[-32000:]
        want = reference(torch.tensor([[feed]]), position).float().reshape(-1)[-32000:]
        worst = max(worst, max_rel_err(got, want))
        if position >= len(prompt) - 1:
            token = next_token(want)
            if next_token(got) != token:
                break
            agreed += position >= len(prompt)
    return agreed, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, contexts=[256, 1024], rounds=3)
    parser.add_argument("--forms", nargs="+", default=["int4_sym:128", "int8_asym"], help="mode[:group[:all]]")
    parser.add_argument("--tokens", type=int, default=8, help="decode steps per round and engine")
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--no-prefill", action="store_true")
    parser.add_argument("--no-accuracy", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--no-xnnpack", action="store_true")
    parser.add_argument(
        "--kv-cache-u8", action="store_true", help="one more row of ours per form with kv_cache_precision='u8'"
    )
    parser.add_argument(
        "--accuracy-prompt", type=int, default=16, help="prompt tokens before the accuracy's 64 greedy steps"
    )
    parser.add_argument("--extra-config", default="", help="KEY=VALUE,... for one more OpenVINO-alone row")
    options = parser.parse_args()
    setup_logging()
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa
    import executorch.kernels.quantized  # noqa: F401 - 8da4w's quantize ops outside XNNPACK, if any

    folder = programs_folder(options.folder, "llm_quantized_")
    env = environment()
    rows: List[List[object]] = []
    accuracy_rows: List[List[object]] = []
    for context in options.contexts:
        decode_model = llama_of_shape(options.shape, context, dynamic=False)
        ptes: Dict[str, Path] = {}
        references: Dict[str, Callable] = {}
        alone: Dict[str, Callable] = {}
        prefill_ptes: Dict[str, Path] = {}
        for form in options.forms:
            compressed = nncf_compressed(decode_model, form, False, context)
            stem = form.replace(":", "_")
            ours_specs = openvino_compile_specs()
            ptes[f"ours {form}"] = write_pte(
                compressed, OpenvinoPartitioner(ours_specs), False, context, folder / f"ours_{stem}_{context}.pte"
            )
            ptes[f"ours {form}, f32 activations"] = write_pte(
                compressed,
                OpenvinoPartitioner(openvino_compile_specs(dynamic_quantization_group_size=0)),
                False,
                context,
                folder / f"ours_{stem}_dq0_{context}.pte",
            )
            references[f"ours {form}"] = references[f"ours {form}, f32 activations"] = Eager(compressed)
            if options.kv_cache_u8:
                ptes[f"ours {form}, u8 KV cache"] = write_pte(
                    compressed,
                    OpenvinoPartitioner(openvino_compile_specs(kv_cache_precision="u8")),
                    False,
                    context,
                    folder / f"ours_{stem}_kvu8_{context}.pte",
                )
                references[f"ours {form}, u8 KV cache"] = references[f"ours {form}"]
            ir = converted_ir(compressed, folder / f"ir_{stem}_{context}.xml")
            our_config = compile_config(ours_specs)
            alone[f"OpenVINO alone {form}, our config"] = OpenvinoAloneLogitsCopy(ir, our_config)
            alone[f"OpenVINO alone {form}, its defaults"] = OpenvinoAloneLogitsCopy(ir, {"PERFORMANCE_HINT": "LATENCY"})
            if options.extra_config:
                extra = dict(item.split("=", 1) for item in options.extra_config.split(","))
                name = f"OpenVINO alone {form}, {options.extra_config}"
                alone[name] = OpenvinoAloneLogitsCopy(ir, {**our_config, **extra})
            if not options.no_prefill:
                prefill_model = llama_of_shape(options.shape, context, dynamic=True)
                prefill_ptes[f"ours {form}"] = write_pte(
                    nncf_compressed(prefill_model, form, True, context),
                    OpenvinoPartitioner(ours_specs),
                    True,
                    context,
                    folder / f"ours_{stem}_prefill_{context}.pte",
                )
            del compressed
        if not options.no_xnnpack:
            quantized = xnnpack_8da4w(decode_model)
            ptes["XNNPACK 8da4w"] = write_pte(
                quantized, xnnpack_partitioner(), False, context, folder / f"xnnpack_{context}.pte"
            )
            references["XNNPACK 8da4w"] = Eager(quantized)
            if not options.no_prefill:
                prefill_ptes["XNNPACK 8da4w"] = write_pte(
                    xnnpack_8da4w(llama_of_shape(options.shape, context, dynamic=True)),
                    xnnpack_partitioner(),
                    True,
                    context,
                    folder / f"xnnpack_prefill_{context}.pte",
                )
        memory = {} if options.no_memory else {name: fresh_load(path) for name, path in ptes.items()}
        engines: Dict[str, Callable] = {name: ExecutorchEngine(path) for name, path in ptes.items()}
        engines.update(alone)
        prefill_engines = {name: ExecutorchEngine(path) for name, path in prefill_ptes.items()}
        start = int(0.6 * context)
        prompt = torch.randint(
            0, 32000, (1, min(options.prompt, context - 1)), generator=torch.Generator().manual_seed(1)
        )
        decode: Dict[str, List[float]] = {name: [] for name in engines}
        prefill: Dict[str, List[float]] = {name: [] for name in prefill_engines}
        for round_index in range(options.rounds):
            names = round_order(list(engines), round_index)
            for name in names:
                decode[name].append(decode_ms(engines[name], start, options.tokens))
                if name in prefill_engines:
                    prefill[name].append(prefill_ms(prefill_engines[name], prompt))
        xnnpack = statistics.median(decode["XNNPACK 8da4w"]) if "XNNPACK 8da4w" in decode else None
        for name, times in decode.items():
            median = statistics.median(times)
            size = ptes[name].stat().st_size / 1e6 if name in ptes else None
            rows.append(
                [
                    context,
                    name,
                    median,
                    f"{min(times):.3f}-{max(times):.3f}",
                    1e3 / median,
                    median / xnnpack if xnnpack else "-",
                    statistics.median(prefill[name]) if prefill.get(name) else "-",
                    size / 1.048576 if size else "-",
                    memory[name][0] / size if name in memory else "-",
                    memory[name][1] / size if name in memory else "-",
                ]
            )
        if not options.no_accuracy:
            for name, reference in references.items():
                agreed, worst = accuracy(
                    ExecutorchEngine(ptes[name]), reference, context, prompt_length=options.accuracy_prompt
                )
                accuracy_rows.append([context, name, f"{agreed}/64", worst])
        print(f"context {context}: decode from position {start}")
        # Nothing of this context held while the next one's models are built: at the 1B
        # shape two contexts' models and engines did not fit in 24 GB.
        del decode_model, references, alone, engines, prefill_engines
        quantized = None
        gc.collect()
    shape = SHAPES[options.shape]
    print_header(
        f"Quantized Llama, dim {shape['dim']}, {shape['layers']} layers, {shape['heads']} heads, "
        f"{shape['kv_heads']} KV heads, vocab 32000, random weights: decode (static exports)"
        + ("" if options.no_prefill else f" and prefill of {options.prompt} tokens (dynamic exports)")
        + f", {options.rounds} alternating rounds, medians",
        env,
    )
    print_table(
        [
            "context",
            "engine",
            "decode ms/token",
            "rounds, ms",
            "tokens/s",
            "time / XNNPACK 8da4w",
            "prefill ms",
            ".pte MiB",
            "RSS growth / .pte",
            "anonymous / .pte",
        ],
        rows,
    )
    if accuracy_rows:
        print(
            "\nAgainst the quantized eager model each engine was made from "
            f"(64 greedy tokens after a {options.accuracy_prompt}-token prompt)"
        )
        print_table(["context", "engine", "greedy tokens agreeing", "max relative logit error"], accuracy_rows)


if __name__ == "__main__":
    main()
