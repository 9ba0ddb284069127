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
  those weights (`compile_specs_for_compressed_weights`: for 4-bit weights in groups,
  activations quantized in groups as long) and with
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
import contextlib
import copy
import gc
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import openvino as ov  # noqa: E402
import torch  # noqa: E402
from _common import (  # noqa: E402
    cpu_ops,
    delegate_ids,
    environment,
    max_rel_err,
    print_header,
    print_table,
    round_order,
    setup_logging,
)
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch.exir.backend.compile_spec_schema import CompileSpec  # noqa: E402
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402
from executorch_openvino.compile_specs import parse_compile_specs  # noqa: E402
from executorch_openvino.llm import compile_specs_for_compressed_weights  # noqa: E402
from llm_engines import (  # noqa: E402
    SEQUENCE_NAME,
    ExecutorchEngine,
    decode_ms,
    fresh_load,
    next_token,
    prefill_ms,
    with_xnnpack_custom_ops,
    xnnpack_partitioner,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from models import small_llama  # noqa: E402

SHAPES = {"1024": dict(dim=1024, layers=8, heads=16, kv_heads=4), "1b": dict(dim=2048, layers=16, heads=32, kv_heads=8)}
XNNPACK_GROUP = 128


def llama(shape: str, context: int, dynamic: bool) -> torch.nn.Module:
    torch.manual_seed(0)  # the same weights for every engine
    return small_llama(enable_dynamic_shape=dynamic, max_seq_len=context, **SHAPES[shape]).eval()


def example(dynamic: bool):
    return (torch.tensor([[1, 2]] if dynamic else [[1]]), {"input_pos": torch.tensor([0])})


def dynamic_shapes(dynamic: bool, context: int):
    return ({1: torch.export.Dim(SEQUENCE_NAME, min=1, max=context - 1)}, {"input_pos": None}) if dynamic else None


def nncf_settings(form: str) -> Dict[str, object]:
    """`mode[:group[:all]]` as arguments of nncf.compress_weights."""
    import nncf

    mode, *rest = form.split(":")
    settings: Dict[str, object] = {"mode": nncf.CompressWeightsMode(mode)}
    if rest and rest[0]:
        settings["group_size"] = int(rest[0])
    if len(rest) > 1 and rest[1] == "all":
        settings["all_layers"] = True
    if mode.startswith("int4"):
        settings["ratio"] = 1.0
    return settings


def nncf_compressed(model: torch.nn.Module, form: str, dynamic: bool, context: int) -> torch.nn.Module:
    """The model with NNCF-compressed weights, as a module called like the model."""
    import nncf

    with torch.no_grad():
        exported = torch.export.export(model, example(dynamic), dynamic_shapes=dynamic_shapes(dynamic, context))
        return nncf.compress_weights(exported.module(), **nncf_settings(form))


def xnnpack_8da4w(model: torch.nn.Module) -> torch.nn.Module:
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    return with_xnnpack_custom_ops(quantize(copy.deepcopy(model), "8da4w", group_size=XNNPACK_GROUP))


def write_pte(module: torch.nn.Module, partitioner, dynamic: bool, context: int, path: Path) -> Path:
    """Lowers `module` to `path`, or keeps the file a run with the same --folder wrote."""
    if path.exists():
        print(f"{path.name}: kept from an earlier run")
        return path
    # Not _common.lower: a module exported before (NNCF's) refuses .eval().
    with torch.no_grad():
        exported = torch.export.export(module, example(dynamic), dynamic_shapes=dynamic_shapes(dynamic, context))
        manager = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()
    path.write_bytes(manager.buffer)
    size = path.stat().st_size / 2**20
    print(f"{path.name}: {size:.1f} MiB, delegates {delegate_ids(manager)}, CPU ops {cpu_ops(manager)}")
    return path


def converted_ir(module: torch.nn.Module, path: Path) -> ov.Model:
    """Our IR of the compressed decode program (KV cache as state, grown by concatenation),
    saved at `path` (or read from it when a run with the same --folder saved it)."""
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch_openvino.conversion import to_openvino_model
    from executorch_openvino.partition.kept_whole import ops_kept_whole

    if path.exists():
        return ov.Core().read_model(path)
    with torch.no_grad():
        exported = torch.export.export(module, example(False))
    exported = OpenvinoPartitioner().transform_for_pre_decomposition(exported)
    kept, _ = ops_kept_whole(exported, (), ())
    edge = to_edge(exported, compile_config=EdgeCompileConfig(_check_ir_validity=False, preserve_ops=kept))
    ir = to_openvino_model(edge.exported_program())
    ov.save_model(ir, path, compress_to_fp16=False)
    return ir


@contextlib.contextmanager
def conversion_without(rewrite_name: str) -> Iterator[None]:
    """Conversion without the rewrite of conversion/rewrites/ named `rewrite_name`, for
    comparison only."""
    from executorch_openvino.conversion import rewrites

    every_rewrite = list(rewrites.REWRITES)
    rewrites.REWRITES[:] = [rewrite for rewrite in every_rewrite if rewrite.__name__ != rewrite_name]
    if len(rewrites.REWRITES) == len(every_rewrite):
        raise ValueError(f"no rewrite named {rewrite_name}")
    try:
        yield
    finally:
        rewrites.REWRITES[:] = every_rewrite


def kv_cache_kept_in_slots() -> ContextManager[None]:
    """Conversion without the rewrite that makes the KV cache grow
    (conversion/rewrites/kv_cache_growth.py), for comparison only: the cache stays the
    slots the model writes at its positions."""
    from executorch_openvino.conversion.rewrites.kv_cache_growth import grow_kv_caches

    return conversion_without(grow_kv_caches.__name__)


class OpenvinoAlone:
    """An IR compiled by ov.Core alone with `config`, called as our delegate is."""

    def __init__(self, ir: ov.Model, config: Dict[str, object]) -> None:
        self.request = ov.Core().compile_model(ir, "CPU", config).create_infer_request()

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        if position == 0:
            self.request.reset_state()
        self.request.infer([tokens.numpy(), torch.tensor([position]).numpy()], share_inputs=True)
        logits = self.request.get_output_tensor(0)
        if logits.element_type == ov.Type.bf16:
            return torch.from_numpy(logits.data.view("int16")).view(torch.bfloat16).float()
        return torch.from_numpy(logits.data.copy())


class Eager:
    def __init__(self, module: torch.nn.Module) -> None:
        self.module = copy.deepcopy(module)

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        with torch.no_grad():
            return self.module(tokens, {"input_pos": torch.tensor([position])})


def compile_config(specs: Optional[List[CompileSpec]]) -> Dict[str, object]:
    """The configuration our runtime compiles with for these compile specs."""
    return parse_compile_specs(specs).compile_config()


def runtime_config(**specs) -> Dict[str, object]:
    """The configuration our runtime compiles with for ``openvino_compile_specs(**specs)``."""
    return compile_config(openvino_compile_specs(**specs))


def export_llm_specs(form: str, compile_specs: Optional[List[CompileSpec]] = None) -> List[CompileSpec]:
    """The compile specs export_llm lowers weights compressed as `form` with
    (`compile_specs_for_compressed_weights`: for 4-bit weights in groups, activations
    quantized in groups as long)."""
    return compile_specs_for_compressed_weights(compile_specs, nncf_settings(form))


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


def add_form_argument(parser: argparse.ArgumentParser) -> None:
    """--form, for the benchmarks that take one form of weights."""
    parser.add_argument(
        "--form",
        default="int4_sym:128:all",
        help="mode[:group[:all]]: NNCF's mode, group size (-1 per channel), all for every layer in 4 bits",
    )


def add_model_arguments(parser: argparse.ArgumentParser, contexts: List[int], rounds: int) -> None:
    """--shape, --contexts, --rounds and --folder, as every quantized-LLM benchmark takes them."""
    parser.add_argument("--shape", choices=list(SHAPES), default="1024")
    parser.add_argument("--contexts", type=int, nargs="+", default=contexts)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument(
        "--folder",
        type=Path,
        help="where the programs and IRs go; files a run with the same folder wrote are kept, so that a "
        "second run only times them (a new temporary folder without it)",
    )


def programs_folder(folder: Optional[Path], prefix: str) -> Path:
    """The --folder given, or a new temporary folder named with `prefix`."""
    folder = folder or Path(tempfile.mkdtemp(prefix=prefix))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


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
        decode_model = llama(options.shape, context, dynamic=False)
        ptes: Dict[str, Path] = {}
        references: Dict[str, Callable] = {}
        alone: Dict[str, Callable] = {}
        prefill_ptes: Dict[str, Path] = {}
        for form in options.forms:
            compressed = nncf_compressed(decode_model, form, False, context)
            stem = form.replace(":", "_")
            ours_specs = export_llm_specs(form)
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
                    OpenvinoPartitioner(export_llm_specs(form, openvino_compile_specs(kv_cache_precision="u8"))),
                    False,
                    context,
                    folder / f"ours_{stem}_kvu8_{context}.pte",
                )
                references[f"ours {form}, u8 KV cache"] = references[f"ours {form}"]
            ir = converted_ir(compressed, folder / f"ir_{stem}_{context}.xml")
            our_config = compile_config(ours_specs)
            alone[f"OpenVINO alone {form}, our config"] = OpenvinoAlone(ir, our_config)
            alone[f"OpenVINO alone {form}, its defaults"] = OpenvinoAlone(ir, {"PERFORMANCE_HINT": "LATENCY"})
            if options.extra_config:
                extra = dict(item.split("=", 1) for item in options.extra_config.split(","))
                name = f"OpenVINO alone {form}, {options.extra_config}"
                alone[name] = OpenvinoAlone(ir, {**our_config, **extra})
            if not options.no_prefill:
                prefill_model = llama(options.shape, context, dynamic=True)
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
                    xnnpack_8da4w(llama(options.shape, context, dynamic=True)),
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
