"""Matrix products of one input joined (conversion/rewrites/sibling_products.py) against
the same products apart: a quantized decode step, OpenVINO alone on our IR converted both
ways, in one process and alternating rounds.

    python benchmarks/investigations/llm_joined_products.py         # dim 1024 x 8 layers, contexts 256 and 1024
    python benchmarks/investigations/llm_joined_products.py --shape 1b --rounds 11

The model is llm_quantized.py's Llama (random weights) with `--form`'s NNCF-compressed
weights (every layer 4-bit by default), compiled with the configuration our runtime
uses for the compile specs export_llm gives those weights. Decode steps are timed from
60% of the context, as llm_quantized.py times them; the logits of both IRs are compared
on the first steps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Dict, List

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import openvino as ov
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order, setup_logging
from common.llm import SHAPES, decode_ms, llama_of_shape
from common.llm_engines import OpenvinoAloneLogitsCopy, compile_config
from common.quantized_llm import (
    add_form_argument,
    add_model_arguments,
    conversion_without,
    converted_ir,
    nncf_compressed,
    programs_folder,
)
from executorch_openvino import openvino_compile_specs
from executorch_openvino.conversion.rewrites.sibling_products import fuse_sibling_products


def fully_connected_layers(ir: ov.Model, config: Dict[str, object]) -> int:
    compiled = ov.Core().compile_model(ir, "CPU", config)
    layers = compiled.get_runtime_model().get_ordered_ops()
    return sum(layer.get_rt_info()["layerType"].astype(str) == "FullyConnected" for layer in layers)


def largest_logit_difference(first: OpenvinoAloneLogitsCopy, second: OpenvinoAloneLogitsCopy, steps: int = 4) -> float:
    difference = 0.0
    for position in range(steps):
        tokens = torch.tensor([[1 + position]])
        difference = max(difference, float((first(tokens, position) - second(tokens, position)).abs().max()))
    return difference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, contexts=[256, 1024], rounds=7)
    add_form_argument(parser)
    parser.add_argument("--tokens", type=int, default=8, help="decode steps per round and IR")
    options = parser.parse_args()
    setup_logging()
    folder = programs_folder(options.folder, "llm_joined_products_")
    env = environment()
    config = compile_config(openvino_compile_specs())
    rows: List[List[object]] = []
    for context in options.contexts:
        compressed = nncf_compressed(
            llama_of_shape(options.shape, context, dynamic=False), options.form, False, context
        )
        stem = f"{options.form.replace(':', '_')}_{context}"
        joined_ir = converted_ir(compressed, folder / f"ir_joined_{stem}.xml")
        with conversion_without(fuse_sibling_products.__name__):
            apart_ir = converted_ir(compressed, folder / f"ir_apart_{stem}.xml")
        engines = {
            "joined": OpenvinoAloneLogitsCopy(joined_ir, config),
            "apart": OpenvinoAloneLogitsCopy(apart_ir, config),
        }
        difference = largest_logit_difference(engines["joined"], engines["apart"])
        start = int(context * 0.6)
        times: Dict[str, List[float]] = {name: [] for name in engines}
        for round_index in range(options.rounds):
            order = round_order(list(engines), round_index)
            for name in order:
                times[name].append(decode_ms(engines[name], start, options.tokens))
        apart = statistics.median(times["apart"])
        for name, ir in (("apart", apart_ir), ("joined", joined_ir)):
            median = statistics.median(times[name])
            rows.append(
                [context, name, fully_connected_layers(ir, config), median, median / apart, difference, times[name]]
            )
    shape = SHAPES[options.shape]
    print_header(
        f"Joined products: Llama dim {shape['dim']}, {shape['layers']} layers, {options.form}, OpenVINO alone "
        f"with our runtime's configuration {config}, {options.rounds} alternating rounds, medians",
        env,
    )
    print_table(
        [
            "context",
            "products",
            "FullyConnected layers",
            "decode ms/token",
            "/ apart",
            "largest logit difference",
            "rounds (ms)",
        ],
        [[*row[:6], " ".join(f"{value:.2f}" for value in row[6])] for row in rows],
    )


if __name__ == "__main__":
    main()
