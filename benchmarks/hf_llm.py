"""Decode of a Hugging Face Llama-shaped model: our export (``export_huggingface_llm``)
against XNNPACK through transformers' own ExecuTorch export, in one process and
alternating rounds.

    python benchmarks/hf_llm.py [--model DIR] [--context 512] [--rounds 3] \
        [--optimum "XNNPACK, optimum custom ops, f32=/path/model.pte" ...]

The model is ``LlamaForCausalLM`` with random weights, dim 1024, 8 layers, 16 heads,
4 KV heads, MLP 2816, vocab 32000 (156M parameters, 623 MB in f32), saved with
``save_pretrained`` and read back from its folder as a user's would be (``--model``
takes another folder). Every engine runs a static export (one token per call, the
fastest decode of each), fills the cache one token per call to 60% of the context
(untimed), then times ``--tokens`` greedy steps; the table gives the median over the
rounds. Engines:
- ours f32: ``export_huggingface_llm(folder, dynamic_shape=False)`` at f32 inference
  precision; ours int4: with ``weight_compression="int4"`` (NNCF's INT4_SYM in groups of
  128, every layer; docs/llm.md#quantized-llms), with the default compile specs (OpenVINO's
  int8 activations on CPUs with VNNI or AMX, as XNNPACK's 8da4w) and with
  ``dynamic_quantization_group_size=0`` (f32 activations);
- XNNPACK through transformers: ``TorchExportableModuleForDecoderOnlyLM`` (its static
  cache, sdpa attention), exported and lowered with ``XnnpackPartitioner``; INT4: torchao's
  ``Int8DynamicActivationIntxWeightConfig(int4, PerGroup(128))`` on the linear layers
  first (8da4w, as optimum-executorch's ``--qlinear 8da4w``);
- optimum-executorch (``--optimum NAME=PATH``): programs made by ``optimum-cli export
  executorch ... --recipe xnnpack --use_custom_sdpa --use_custom_kv_cache [--qlinear 8da4w
  --qlinear_group_size 128]`` in a venv where it installs (it pins transformers 5.0.0rc1;
  see docs/huggingface.md), loaded and timed here.
The "error" column is each engine's first-step logits against transformers' eager
model (max |difference| / max |eager|): INT4 engines differ by their quantization.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import torch  # noqa: E402
from common.bench import environment, max_rel_err, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.hf_llama import LLAMA_1024  # noqa: E402
from common.llm import decode_ms  # noqa: E402
from common.llm_engines import ExecutorchEngine  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch_openvino import openvino_compile_specs  # noqa: E402
from executorch_openvino.llm.huggingface import export_huggingface_llm  # noqa: E402


def save_llama(folder: Path) -> Path:
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**LLAMA_1024)).eval()
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2)
    model.save_pretrained(folder)
    return folder


def load(folder: Path) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()


def ours(folder: Path, context: int, path: Path, compression=None, **specs) -> Path:
    program = export_huggingface_llm(
        folder,
        max_seq_len=context,
        dynamic_shape=False,
        compile_specs=openvino_compile_specs(inference_precision="f32", **specs),
        weight_compression=compression,
    )
    path.write_bytes(program.buffer)
    return path


def xnnpack_through_transformers(model: torch.nn.Module, context: int, path: Path, int4: bool) -> Path:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from transformers import GenerationConfig
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    model = copy.deepcopy(model)
    if int4:
        from torchao.quantization.granularity import PerGroup
        from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_

        quantize_(
            model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(128))
        )
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": context}
    )
    exportable = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=context)
    with torch.no_grad():
        exported = exportable.export(input_ids=torch.tensor([[1]]), cache_position=torch.tensor([0]))
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
    path.write_bytes(program.buffer)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a Hugging Face model folder; the random dim-1024 Llama without it")
    parser.add_argument("--context", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=16, help="timed decode steps per round and engine")
    parser.add_argument(
        "--optimum", action="append", default=[], metavar="NAME=PTE", help="a program optimum-cli made, to time too"
    )
    options = parser.parse_args()
    setup_logging()
    torch.set_num_threads(1)  # torch only converts inputs and outputs here
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa, update_cache

    work = Path(tempfile.mkdtemp(prefix="hf_llm_"))
    folder = options.model or save_llama(work / "llama")
    model = load(folder)
    context = options.context
    programs = {
        "ours f32": ours(folder, context, work / "ours_f32.pte"),
        "ours int4": ours(folder, context, work / "ours_int4.pte", "int4"),
        "ours int4, f32 activations": ours(
            folder, context, work / "ours_int4_f32.pte", "int4", dynamic_quantization_group_size=0
        ),
        "XNNPACK via transformers, f32": xnnpack_through_transformers(model, context, work / "xnn_f32.pte", False),
        "XNNPACK via transformers, 8da4w": xnnpack_through_transformers(model, context, work / "xnn_int4.pte", True),
    }
    for entry in options.optimum:
        name, _, path = entry.partition("=")
        programs[name] = Path(path)
    engines = {name: ExecutorchEngine(path) for name, path in programs.items()}
    with torch.no_grad():
        eager_first = model(torch.tensor([[1]])).logits[0, -1]
    errors = {
        name: max_rel_err(engine(torch.tensor([[1]]), 0).reshape(-1), eager_first) for name, engine in engines.items()
    }

    start = int(0.6 * context)
    timings: Dict[str, List[float]] = {name: [] for name in engines}
    for round_index in range(options.rounds):
        names = round_order(list(engines), round_index)
        for name in names:
            timings[name].append(decode_ms(engines[name], start, options.tokens))
    reference = statistics.median(timings["ours f32"])
    rows = []
    for name in engines:
        median = statistics.median(timings[name])
        rows.append([name, median, reference / median, errors[name], programs[name].stat().st_size / 1e6])
    weights_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 1e6
    print_header(
        f"Hugging Face Llama ({folder}), {weights_mb:.0f} MB of f32 weights: decode from position {start} of "
        f"{context}, static exports, {options.rounds} alternating rounds of {options.tokens} tokens, medians",
        environment(),
    )
    print_table(["engine", "decode ms/token", "ours f32 time / its time", "error vs eager", ".pte MB"], rows)


if __name__ == "__main__":
    sys.exit(main())
