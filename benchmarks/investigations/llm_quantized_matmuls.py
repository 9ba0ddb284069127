"""A quantized decode step split in two: its matrix products alone, and the rest of the step,
ours against XNNPACK's 8da4w, in one process and alternating rounds.

    python benchmarks/investigations/llm_quantized_matmuls.py                  # dim 1024 x 8 layers, context 256
    python benchmarks/investigations/llm_quantized_matmuls.py --shape 1b --contexts 1024
    python benchmarks/investigations/llm_quantized_matmuls.py --by-kind            # and the products of each kind alone

The model is llm_quantized.py's Llama (random weights). Each engine times two programs:
- the whole decode step (a static export, the cache filled to 60% of the context);
- the step's matrix products alone: every linear layer of the model (the same weights,
  quantized the same way: NNCF's `--form` for ours, 8da4w in groups of 128 for XNNPACK)
  applied once to one token's activations, in one program that returns each product.
Ours is lowered with the compile specs export_llm gives those weights (the defaults:
activations quantized in OpenVINO's groups).
What a step takes beyond its matrix products (attention, the KV cache, norms, rotary
embedding, the embedding row, the call) is the difference. The quantized-LLM issue's
target: that part of ours no slower than XNNPACK's on every CPU.
With `--by-kind`, a second table times the products of each kind alone (every layer's
queries, keys and values; attention outputs; gate and up; down; the output projection),
one program per kind and engine: which shapes of 4-bit products the CPU plugin runs
slower than XNNPACK.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order, setup_logging
from common.llm import SHAPES, decode_ms, llama_of_shape, xnnpack_partitioner
from common.llm_engines import ExecutorchEngine
from common.quantized_llm import (
    XNNPACK_GROUP,
    add_form_argument,
    add_model_arguments,
    nncf_compressed,
    nncf_settings,
    programs_folder,
    write_pte,
    xnnpack_8da4w,
)
from executorch.runtime import Runtime
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs


class MatrixProductsOfAStep(torch.nn.Module):
    """Every linear layer of `model` (the same modules), each applied once to one token.

    Layers that read one input in the model (a layer's queries, keys and values; its gate
    and up projections) read one input here too, and the others an input each: our
    conversion joins the products of one input (conversion/rewrites/sibling_products.py)
    as it joins them in the step, and no others.
    """

    # Linear layers of the Llama of ExecuTorch's examples that read one input, by name.
    SHARED_INPUTS = {"wq": "qkv", "wk": "qkv", "wv": "qkv", "w1": "gate_up", "w3": "gate_up"}
    # What each kind of product computes (a kind is a layer name or a SHARED_INPUTS group).
    KINDS = {
        "qkv": "queries, keys, values",
        "wo": "attention output",
        "gate_up": "gate and up",
        "w2": "down",
        "output": "output projection",
    }

    def __init__(self, model: torch.nn.Module, kind: Optional[str] = None) -> None:
        """All of `model`'s linear layers, or those of one of KINDS."""
        super().__init__()
        linears = [
            (name, m)
            for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and kind in (None, self.kind_of(name))
        ]
        self.layers = torch.nn.ModuleList(m for _, m in linears)
        inputs: Dict[str, int] = {}
        self.input_of_layer: List[int] = []
        self.widths: List[int] = []
        for name, layer in linears:
            group = f"{name.rpartition('.')[0]}:{self.kind_of(name)}"
            if group not in inputs:
                inputs[group] = len(self.widths)
                self.widths.append(layer.in_features)
            self.input_of_layer.append(inputs[group])

    @classmethod
    def kind_of(cls, name: str) -> str:
        leaf = name.rpartition(".")[2]
        return cls.SHARED_INPUTS.get(leaf, leaf)

    def shape(self) -> str:
        """`in x out` of the first product, as the step runs it (joined with those of its input)."""
        first = [layer for layer, index in zip(self.layers, self.input_of_layer) if index == 0]
        return f"{self.widths[0]} x {sum(layer.out_features for layer in first)}"

    def forward(self, *activations: torch.Tensor) -> List[torch.Tensor]:
        return [layer(activations[index]) for layer, index in zip(self.layers, self.input_of_layer)]

    def example(self, seed: int = 0) -> tuple:
        generator = torch.Generator().manual_seed(seed)
        return tuple(torch.randn(1, 1, width, generator=generator) for width in self.widths)


def products_pte(module: MatrixProductsOfAStep, quantized: torch.nn.Module, partitioner, path: Path) -> Path:
    """Lowers the matrix products (`quantized`, called like `module`) to `path`."""
    from executorch.exir import to_edge_transform_and_lower

    if not path.exists():
        with torch.no_grad():
            exported = torch.export.export(quantized, module.example())
            path.write_bytes(to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch().buffer)
    return path


def nncf_products(module: MatrixProductsOfAStep, form: str) -> torch.nn.Module:
    import nncf

    with torch.no_grad():
        exported = torch.export.export(module, module.example())
    return nncf.compress_weights(exported.module(), **nncf_settings(form))


def xnnpack_products(module: MatrixProductsOfAStep) -> torch.nn.Module:
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    return quantize(copy.deepcopy(module), "8da4w", group_size=XNNPACK_GROUP)


class ProductsEngine:
    """Calls a matrix-products program with one token's activations."""

    def __init__(self, pte: Path, module: MatrixProductsOfAStep) -> None:
        self.method = Runtime.get().load_program(pte).load_method("forward")
        self.inputs = list(module.example(1))

    def ms(self, calls: int) -> float:
        self.method.execute(self.inputs)
        begin = time.perf_counter()
        for _ in range(calls):
            self.method.execute(self.inputs)
        return 1e3 * (time.perf_counter() - begin) / calls


def products_engines(
    products: MatrixProductsOfAStep, form: str, ours_specs, folder: Path, prefix: str
) -> Dict[str, "ProductsEngine"]:
    """Ours (NNCF's `form`) and XNNPACK 8da4w on `products`, their programs kept in
    `folder` under `prefix`."""
    stem = form.replace(":", "_")
    ours = nncf_products(products, form)
    xnnpack = xnnpack_products(products)
    return {
        "ours": ProductsEngine(
            products_pte(products, ours, OpenvinoPartitioner(ours_specs), folder / f"{prefix}_ours_{stem}.pte"),
            products,
        ),
        "XNNPACK 8da4w": ProductsEngine(
            products_pte(products, xnnpack, xnnpack_partitioner(), folder / f"{prefix}_xnnpack.pte"), products
        ),
    }


def products_by_kind(
    model: torch.nn.Module, form: str, ours_specs, folder: Path, rounds: int, calls: int
) -> List[List[object]]:
    """Rows of the --by-kind table: each kind's products alone, ours against XNNPACK's,
    alternating rounds, medians."""
    rows: List[List[object]] = []
    for kind, what in MatrixProductsOfAStep.KINDS.items():
        products = MatrixProductsOfAStep(model, kind)
        engines = products_engines(products, form, ours_specs, folder, f"products_{kind}")
        ms: Dict[str, List[float]] = {name: [] for name in engines}
        for round_index in range(rounds):
            names = round_order(list(engines), round_index)
            for name in names:
                ms[name].append(engines[name].ms(calls))
        ours, xnnpack = statistics.median(ms["ours"]), statistics.median(ms["XNNPACK 8da4w"])
        rows.append([what, products.shape(), len(products.widths), ours, xnnpack, ours / xnnpack])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, contexts=[256], rounds=5)
    add_form_argument(parser)
    parser.add_argument("--tokens", type=int, default=16, help="decode steps (and product calls) per round")
    parser.add_argument("--by-kind", action="store_true", help="also time the products of each kind alone")
    options = parser.parse_args()
    setup_logging()
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa
    import executorch.kernels.quantized  # noqa: F401 - 8da4w's quantize ops outside XNNPACK, if any

    folder = programs_folder(options.folder, "llm_quantized_matmuls_")
    env = environment()
    stem = options.form.replace(":", "_")
    ours_specs = openvino_compile_specs()
    rows: List[List[object]] = []
    for context in options.contexts:
        model = llama_of_shape(options.shape, context, dynamic=False)
        products = MatrixProductsOfAStep(model)
        steps: Dict[str, Callable] = {
            "ours": ExecutorchEngine(
                write_pte(
                    nncf_compressed(model, options.form, False, context),
                    OpenvinoPartitioner(ours_specs),
                    False,
                    context,
                    folder / f"ours_{stem}_{context}.pte",
                )
            ),
            "XNNPACK 8da4w": ExecutorchEngine(
                write_pte(
                    xnnpack_8da4w(model), xnnpack_partitioner(), False, context, folder / f"xnnpack_{context}.pte"
                )
            ),
        }
        alone = products_engines(products, options.form, ours_specs, folder, "products")
        start = int(0.6 * context)
        step_ms: Dict[str, List[float]] = {name: [] for name in steps}
        products_ms: Dict[str, List[float]] = {name: [] for name in steps}
        for round_index in range(options.rounds):
            names = round_order(list(steps), round_index)
            for name in names:
                step_ms[name].append(decode_ms(steps[name], start, options.tokens))
                products_ms[name].append(alone[name].ms(options.tokens))
        for name in steps:
            step, matmuls = statistics.median(step_ms[name]), statistics.median(products_ms[name])
            rows.append([context, name, step, matmuls, step - matmuls])
        xnnpack_rest = rows[-1][4]
        rows[-2].append(rows[-2][4] / xnnpack_rest)
        rows[-1].append(1.0)
    shape = SHAPES[options.shape]
    print_header(
        f"Quantized Llama, dim {shape['dim']}, {shape['layers']} layers, vocab 32000, random weights: a decode "
        f"step and its {len(products.layers)} matrix products alone (ours {options.form}), "
        f"{options.rounds} alternating rounds, medians",
        env,
    )
    print_table(
        ["context", "engine", "step ms", "matrix products alone ms", "rest of the step ms", "rest / XNNPACK's"], rows
    )
    if options.by_kind:
        print(f"\nEach kind of product alone, one program per kind and engine (ours {options.form}, XNNPACK 8da4w)")
        print_table(
            ["products", "in x out", "of a step", "ours ms", "XNNPACK ms", "ours / XNNPACK"],
            products_by_kind(model, options.form, ours_specs, folder, options.rounds, options.tokens),
        )


if __name__ == "__main__":
    main()
