"""LLM decode and prefill: our delegate against XNNPACK with ExecuTorch's custom
sdpa / KV-cache ops (its LLM recipe), OpenVINO alone on the same stateful IR, and
eager PyTorch, in one process and alternating rounds.

    python benchmarks/llm_engines.py [--contexts 256 1024] [--rounds 5] [--layers 6]
    python benchmarks/llm_engines.py --dim 2048 --layers 16 --dtype bf16 --contexts 256 \
        --engines ours openvino --precisions bf16 --no-prefill --tokens 8   # the 0.85B row

The model is the Llama of ExecuTorch's examples with random weights (dim 288,
6 heads, 2 KV heads, vocab 32000 unless changed; at dim 2048 and 16 layers it has 32
heads, 8 KV heads and 0.85B parameters, Llama 3.2 1B's shape with a smaller vocabulary).
`--dtype` sets the dtype of its weights and activations. For each context size:
- decode: static exports (one token per call, the fastest decode of each engine),
  the cache filled to about 60% of the context, then `--tokens` greedy steps;
- prefill: dynamic-shape exports, `--prompt` tokens in one call, from position 0;
- resident memory: a fresh process per engine loads its program from its path and
  decodes a few steps; the growth of its resident set over the weights' size, the
  anonymous part of it (what the process allocated; the rest is file-backed, mostly
  library code, which varies with the page cache) and the seconds `load_program` +
  `load_method` took (ours also with a model cache, written by a first load and read
  by a second).
Targets: decode <= 0.9x XNNPACK custom ops and <= 1.05x OpenVINO alone; resident
growth <= 1.2x the weights; a load from a model cache <= 0.3 s. The rows "weights read
once" time one matrix product over as many weight bytes as a decode step reads: no
engine that reads its weights at that precision decodes faster. The rows "matrix
products alone" time the model's own linear layers, one token each, with nothing
around them: the part of a decode step that reading the weights decides.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from common.bench import (  # noqa: E402
    cpu_ops,
    delegate_ids,
    environment,
    lower,
    print_header,
    print_table,
    round_order,
    setup_logging,
)
from common.llm import (  # noqa: E402
    decode_ms,
    dynamic_shapes,
    example_inputs,
    fresh_load,
    llama,
    prefill_ms,
    with_xnnpack_custom_ops,
    xnnpack_partitioner,
)
from common.llm_engines import (  # noqa: E402
    Eager,
    ExecutorchEngine,
    OpenvinoAloneLogitsView,
    ir_with_attention_whole,
    runtime_config,
)
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
ENGINES = ("ours", "xnnpack", "openvino", "eager", "floor")


def export(model: torch.nn.Module, partitioner, dynamic: bool, context: int):
    with torch.no_grad():
        manager = lower(
            model,
            example_inputs(dynamic),
            [partitioner] if partitioner else [],
            dynamic_shapes=dynamic_shapes(dynamic, context),
        )
    return manager


class WeightsReadOnceEngine:
    """The floor under any engine's decode step: one OpenVINO MatMul of a token's
    activations by a weight as large as every weight a decode step reads (all but the
    embedding table, of which a step reads one row), at the inference precision. A
    decode step reads each of those weights once; at 1 token a call, reading them is
    most of its time."""

    def __init__(self, model: torch.nn.Module, precision: str) -> None:
        import numpy as np
        import openvino.opset13 as ov_ops

        embedding = model.tok_embeddings.weight
        read = sum(p.numel() for p in model.parameters() if p is not embedding)
        width = embedding.shape[1]
        self.activations = np.random.default_rng(0).random((1, width), dtype=np.float32)
        weight = np.random.default_rng(1).random((read // width, width), dtype=np.float32)
        tokens = ov_ops.parameter([1, width], ov.Type.f32)
        product = ov_ops.matmul(tokens, ov_ops.constant(weight), False, True)
        config = {"INFERENCE_PRECISION_HINT": precision, "PERFORMANCE_HINT": "LATENCY"}
        self.request = ov.Core().compile_model(ov.Model([product], [tokens]), "CPU", config).create_infer_request()

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        self.request.infer([self.activations], share_inputs=True)
        return torch.from_numpy(self.request.get_output_tensor(0).data)


class MatrixProductsAloneEngine:
    """A decode step's matrix products and nothing else: each of the model's linear
    layers as an OpenVINO MatMul of one token by its own weights, at the inference
    precision, in one compiled model. What a decode step takes beyond this is
    attention, the other nodes and the call."""

    def __init__(self, model: torch.nn.Module, precision: str) -> None:
        import numpy as np
        import openvino.opset13 as ov_ops

        layers = [module for module in model.modules() if isinstance(module, torch.nn.Linear)]
        widths = sorted({layer.in_features for layer in layers})
        inputs = {width: ov_ops.parameter([1, width], ov.Type.f32) for width in widths}
        self.activations = [np.random.default_rng(width).random((1, width), dtype=np.float32) for width in widths]
        products = []
        for layer in layers:
            weight = ov_ops.constant(layer.weight.detach().float().numpy())
            products.append(ov_ops.matmul(inputs[layer.in_features], weight, False, True))
        config = {"INFERENCE_PRECISION_HINT": precision, "PERFORMANCE_HINT": "LATENCY"}
        compiled = ov.Core().compile_model(ov.Model(products, list(inputs.values())), "CPU", config)
        self.request = compiled.create_infer_request()

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        self.request.infer(self.activations, share_inputs=True)
        return torch.from_numpy(self.request.get_output_tensor(len(self.request.model_outputs) - 1).data)


def loads_with_cache(pte: Path, weights_mb: float, cache: Path) -> List[List[object]]:
    """Our delegate's resident and anonymous growth over the weights and load seconds
    when it loads through a model cache: the first load writes the cache, the second
    reads it."""
    rows = []
    for load in ("first load", "cached"):
        resident, anonymous, seconds = fresh_load(pte, cache_dir=str(cache))
        rows.append([load, resident / weights_mb, anonymous / weights_mb, seconds])
    return rows


def write_programs(
    model: torch.nn.Module, kind: str, context: int, options: argparse.Namespace, folder: Path
) -> Dict[str, Path]:
    """The .pte of each ExecuTorch engine asked for, by engine name; `kind` "prefill" exports
    a dynamic sequence length."""
    dynamic = kind == "prefill"
    programs = [
        (f"ours {precision}", model, OpenvinoPartitioner(openvino_compile_specs(inference_precision=precision)))
        for precision in (options.precisions if "ours" in options.engines else [])
    ]
    if "xnnpack" in options.engines:
        programs.append(("XNNPACK custom ops", with_xnnpack_custom_ops(model), xnnpack_partitioner()))
    paths = {}
    for name, module, partitioner in programs:
        manager = export(module, partitioner, dynamic, context)
        path = folder / f"{name.replace(' ', '_')}_{kind}_{context}.pte"
        path.write_bytes(manager.buffer)
        print(f"{path.name}: delegates {delegate_ids(manager)}, CPU ops {cpu_ops(manager)}")
        del manager  # the 0.85B configuration's program would be in memory twice
        paths[name] = path
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=288)
    parser.add_argument("--dtype", choices=list(DTYPES), default="f32", help="of the model's weights and activations")
    parser.add_argument("--tokens", type=int, default=16, help="decode steps per round and engine")
    parser.add_argument("--prompt", type=int, default=128, help="prompt tokens for the prefill timing")
    parser.add_argument("--precisions", nargs="+", default=["f32", "bf16"])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--no-prefill", action="store_true", help="decode only (no dynamic exports)")
    parser.add_argument("--no-memory", action="store_true")
    options = parser.parse_args()
    setup_logging()
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa

    folder = Path(tempfile.mkdtemp(prefix="llm_engines_"))
    env = environment()
    dtype = DTYPES[options.dtype]
    kinds = ("decode",) if options.no_prefill else ("decode", "prefill")
    ours_name = f"ours {options.precisions[0]}"
    results: List[List[object]] = []
    loads: List[List[object]] = []
    for context in options.contexts:
        models = {"decode": llama(context, False, layers=options.layers, dim=options.dim, dtype=dtype)}
        if "prefill" in kinds:
            models["prefill"] = llama(context, True, layers=options.layers, dim=options.dim, dtype=dtype)
        weights_mb = sum(p.numel() * p.element_size() for p in models["decode"].parameters()) / 1e6
        # Programs are written and their fresh-process loads measured before this process
        # holds any engine: the 0.85B configuration would not fit twice in memory.
        ptes = {kind: write_programs(models[kind], kind, context, options, folder) for kind in kinds}
        memory: Dict[str, Tuple[float, float, float]] = {}
        if not options.no_memory:
            memory = {name: fresh_load(path) for name, path in ptes["decode"].items()}
            if ours_name in ptes["decode"]:
                cache = folder / f"cache_{context}"
                loads.extend([context, *row] for row in loads_with_cache(ptes["decode"][ours_name], weights_mb, cache))
        engines: Dict[str, Dict[str, Callable]] = {}
        for kind in kinds:
            engines[kind] = {name: ExecutorchEngine(path) for name, path in ptes[kind].items()}
            for precision in options.precisions if "openvino" in options.engines else []:
                ir = ir_with_attention_whole(models[kind], kind == "prefill", context)
                engines[kind][f"OpenVINO alone {precision}"] = OpenvinoAloneLogitsView(
                    ir, runtime_config(inference_precision=precision)
                )
            if "eager" in options.engines:
                engines[kind]["eager"] = Eager(models[kind])
            for precision in options.precisions if "floor" in options.engines and kind == "decode" else []:
                engines[kind][f"weights read once, {precision}"] = WeightsReadOnceEngine(models[kind], precision)
                engines[kind][f"matrix products alone, {precision}"] = MatrixProductsAloneEngine(
                    models[kind], precision
                )
        start = int(0.6 * context)
        prompt = torch.randint(
            0, 32000, (1, min(options.prompt, context - 1)), generator=torch.Generator().manual_seed(1)
        )
        timings: Dict[str, Dict[str, List[float]]] = {kind: {name: [] for name in engines[kind]} for kind in kinds}
        for round_index in range(options.rounds):
            for name in round_order(list(engines["decode"]), round_index):
                timings["decode"][name].append(decode_ms(engines["decode"][name], start, options.tokens))
                if "prefill" in kinds and name in engines["prefill"]:
                    timings["prefill"][name].append(prefill_ms(engines["prefill"][name], prompt))
        decode = timings["decode"]
        reference = statistics.median(decode[ours_name]) if ours_name in decode else None
        for name in decode:
            median = statistics.median(decode[name])
            results.append(
                [
                    context,
                    name,
                    median,
                    reference / median if reference is not None else "-",
                    statistics.median(timings["prefill"][name]) if timings.get("prefill", {}).get(name) else "-",
                    memory[name][0] / weights_mb if name in memory else "-",
                    memory[name][1] / weights_mb if name in memory else "-",
                    memory[name][2] if name in memory else "-",
                ]
            )
        print(f"context {context}: weights {weights_mb:.1f} MB ({options.dtype}), decode from position {start}")
    print_header(
        f"Llama dim {options.dim}, {options.layers} layers, {options.dtype} random weights: decode (static exports)"
        + ("" if options.no_prefill else f" and prefill of {options.prompt} tokens (dynamic exports)")
        + f", {options.rounds} alternating rounds, medians",
        env,
    )
    print_table(
        [
            "context",
            "engine",
            "decode ms/token",
            f"{ours_name} time / engine time",
            "prefill ms",
            "RSS growth / weights",
            "anonymous / weights",
            "load s",
        ],
        results,
    )

    if loads:
        print(f"\n{ours_name} (decode export) with a cache_dir: resident growth and load time")
        print_table(["context", "load", "RSS growth / weights", "anonymous / weights", "load s"], loads)


if __name__ == "__main__":
    main()
