"""The slowest OpenVINO layers of an LLM decode step, read as a user reads them: from an
ETDump and an ETRecord, through executorch.devtools.Inspector (docs/profiling.md).

    python benchmarks/investigations/llm_decode_layers.py [--layers 6] [--dim 288] [--context 256]
        [--prompt 32] [--steps 64] [--precision f32] [--top 12] [--folder DIR]

The wheel's Llama (random weights, vocab 32000; dim 288 and 6 layers is the shape of
stories15M) is exported with executorch_openvino.llm.export_llm for a dynamic number
of tokens with the model of one token (one_token_model) and an ETRecord; it is loaded
with an ETDump, given a prompt in one call, then `--steps` greedy decode steps, which
run on the model of one token. OpenVINO's CPU plugin keeps each layer's mean time over
its model's calls, so the last decode step's events hold each layer's mean over the
decode steps. Prints the decode step's delegate call (median), the sum of the layers'
means, and the `--top` slowest layers with their kernels and the edge operators they
compute, as a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

torch.set_num_threads(1)

from executorch.devtools import Inspector  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import openvino_compile_specs  # noqa: E402
from executorch_openvino.llm import export_llm  # noqa: E402
from executorch_openvino.profiling import layer_metadata  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, setup_logging  # noqa: E402
from common.example_models import small_llama  # noqa: E402


def export(folder: Path, layers: int, dim: int, context: int, precision: str) -> tuple:
    torch.manual_seed(0)
    model = small_llama(enable_dynamic_shape=True, layers=layers, max_seq_len=context, dim=dim)
    specs = openvino_compile_specs(one_token_model=True, inference_precision=precision)
    program = export_llm(model, model.params, compile_specs=specs, generate_etrecord=True)
    pte, etrecord = folder / "llama.pte", folder / "llama.etrecord"
    pte.write_bytes(program.buffer)
    program.get_etrecord().save(str(etrecord))
    return pte, etrecord


def generate(pte: Path, etdump: Path, prompt: int, steps: int) -> None:
    program = Runtime.get().load_program(pte, enable_etdump=True)
    method = program.load_method("forward")
    logits = method.execute([torch.arange(1, prompt + 1).reshape(1, -1) % 100 + 1, torch.tensor([0])])[0]
    for position in range(prompt, prompt + steps):
        token = int(logits.reshape(-1, logits.shape[-1])[-1].argmax())
        logits = method.execute([torch.tensor([[token]]), torch.tensor([position])])[0]
    program.write_etdump_result_to_file(str(etdump), str(etdump.with_suffix(".debug")))


def short_ops(op_types: List[str]) -> str:
    """The edge operators of a layer, once each, without the "aten." prefix and overload."""
    names = Counter(op.removeprefix("aten.").rsplit(".", 1)[0] for op in op_types)
    return ", ".join(f"{name} x{count}" if count > 1 else name for name, count in names.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=288)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16", "f16"])
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--folder", type=Path, help="where the .pte, ETRecord and ETDump go (a temporary folder)")
    options = parser.parse_args()
    setup_logging()
    folder = options.folder or Path(tempfile.mkdtemp(prefix="llm-decode-layers-"))
    folder.mkdir(parents=True, exist_ok=True)
    pte, etrecord = export(folder, options.layers, options.dim, options.context, options.precision)
    etdump = folder / "llama.etdp"
    generate(pte, etdump, options.prompt, options.steps)
    inspector = Inspector(etdump_path=str(etdump), etrecord=str(etrecord), delegate_metadata_parser=layer_metadata)

    # The decode steps: the event block whose delegate call ran most often (the prompt's
    # call joins it when both models name their layers alike; it is the first then).
    def calls(block) -> int:
        return max((len(e.perf_data.raw) for e in block.events if e.name == "DELEGATE_CALL"), default=0)

    block = max(inspector.event_blocks, key=calls)
    [delegate_call] = [event for event in block.events if event.name == "DELEGATE_CALL"]
    decode_calls = delegate_call.perf_data.raw[-options.steps :]
    layers = sorted(
        (event for event in block.events if event.is_delegated_op), key=lambda e: e.perf_data.raw[-1], reverse=True
    )
    total = sum(layer.perf_data.raw[-1] for layer in layers)
    env = environment()
    print(
        f"\nLlama dim {options.dim}, {options.layers} layers, vocab 32000, context {options.context}, "
        f"{options.precision}: {options.steps} decode steps after a prompt of {options.prompt} tokens"
    )
    print(f"CPU: {env['cpu']} ({env['cores']} cores), OpenVINO {env['openvino']}, ExecuTorch {env['executorch']}")
    print(
        f"decode step: delegate call median {1e3 * statistics.median(decode_calls):.1f} us; "
        f"{len(layers)} OpenVINO layers, their means sum to {1e3 * total:.1f} us\n"
    )
    print("| OpenVINO layer | type | kernel | precision | mean, us | share | edge operators |")
    print("| --- | --- | --- | --- | ---: | ---: | --- |")
    for layer in layers[: options.top]:
        metadata = layer.delegate_debug_metadatas
        mean = layer.perf_data.raw[-1]
        print(
            f"| `{layer.name}` | {metadata.get('node_type', '')} | {metadata.get('exec_type', '')} | "
            f"{metadata.get('runtime_precision', '')} | {1e3 * mean:.1f} | {mean / total:.1%} | "
            f"{short_ops(layer.op_types)} |"
        )


if __name__ == "__main__":
    main()
