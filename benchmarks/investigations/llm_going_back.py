"""Going back in a quantized LLM's KV cache: a call at an earlier position against the
next decode step, for ours, OpenVINO alone on the same IR and XNNPACK 8da4w, in one
process and alternating rounds.

    python benchmarks/investigations/llm_going_back.py                      # dim 1024 x 8 layers, contexts 256 and 1024
    python benchmarks/investigations/llm_going_back.py --shape 1b --contexts 1024 --folder DIR

A chat application that regenerates an answer calls again at the position where the
answer began. The cache is filled to 60% of the context plus `--cut` positions; each
repeat then times a decode step at the next position, and a call `--cut` positions
back (going back), and refills the cut positions untimed. Engines:
- ours: the runtime cuts each grown cache to the kept positions before the call
  (runtime/kv_cache.cpp);
- ours with the compile spec paged_attention: the runtime rewrites the IR into the
  PagedAttention form and owns the blocks (runtime/paged_attention.cpp), so going back
  is a call with a smaller count (`--no-paged` leaves it out, with OpenVINO alone's);
- OpenVINO alone, compiled from our IR with our runtime's configuration, cut as OpenVINO
  GenAI trims a stateful LLM's cache (`get_state`, a dense copy of the kept part,
  `set_state`), with each part timed;
- XNNPACK 8da4w with ExecuTorch's custom KV-cache op, whose cache keeps every slot and
  writes at the call's position: going back is a plain call for it;
- OpenVINO alone on the IR converted without our growth rewrite (the model's own
  cache of max_seq_len slots as OpenVINO state, written at the call's position and
  masked), the design in which going back is a plain call for OpenVINO too
  (`--no-slots` leaves it out);
- OpenVINO alone on our IR turned into the PagedAttention form by OpenVINO's own
  `paged_attention_transformation` (the form OpenVINO GenAI's CPU pipeline runs): the
  caller owns the caches as block tensors and says how many positions they hold
  (`past_lens`), so going back is a call with a smaller count (`--no-paged` leaves it
  out).
Target (the quantized-LLM issue): going back costs no more than a decode step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.llm import SHAPES, llama_of_shape, xnnpack_partitioner  # noqa: E402
from common.llm_engines import ExecutorchEngine, OpenvinoAloneLogitsCopy, compile_config  # noqa: E402
from common.quantized_llm import (  # noqa: E402
    add_form_argument,
    add_model_arguments,
    converted_ir,
    kv_cache_kept_in_slots,
    nncf_compressed,
    programs_folder,
    write_pte,
    xnnpack_8da4w,
)
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402


class OpenvinoAloneCut:
    """Our IR compiled by ov.Core alone; a call before the cache's end first cuts every
    state of four dimensions along its position axis (2), the way OpenVINO GenAI's
    `trim_kv_cache` does, and records how long each part took."""

    def __init__(self, ir: ov.Model, config: Dict[str, object]) -> None:
        self.request = ov.Core().compile_model(ir, "CPU", config).create_infer_request()
        self.filled = 0
        self.parts: Dict[str, List[float]] = {"get_state": [], "dense copy": [], "set_state": []}

    def cut(self, kept: int) -> None:
        spent = {name: 0.0 for name in self.parts}
        for state in self.request.query_state():
            begin = time.perf_counter()
            held = state.state
            got = time.perf_counter()
            shape = list(held.shape)
            if len(shape) != 4:
                continue
            shape[2] = kept
            dense = ov.Tensor(held.element_type, ov.Shape(shape))
            ov.Tensor(held, ov.Coordinate([0, 0, 0, 0]), ov.Coordinate(shape)).copy_to(dense)
            copied = time.perf_counter()
            state.state = dense
            spent["get_state"] += got - begin
            spent["dense copy"] += copied - got
            spent["set_state"] += time.perf_counter() - copied
        for name, seconds in spent.items():
            self.parts[name].append(1e3 * seconds)

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        if position == 0:
            self.request.reset_state()
        elif position < self.filled:
            self.cut(position)
        self.request.infer([tokens.numpy(), np.array([position])], share_inputs=True)
        self.filled = position + tokens.shape[1]
        return torch.from_numpy(self.request.get_output_tensor(0).data)


class OpenvinoAlonePaged:
    """Our IR after OpenVINO's `paged_attention_transformation`, one sequence in the
    blocks 0, 1, ... of caches this object owns; a call passes the position it starts at
    as `past_lens`, so it attends over the positions before it and writes its own."""

    def __init__(self, ir: ov.Model, config: Dict[str, object], context: int) -> None:
        from openvino._offline_transformations import paged_attention_transformation

        variable = ir.get_variables()[0].get_info().data_shape  # [1, KV heads, positions, head size]
        tokens = ir.inputs[0]
        tokens.get_tensor().set_names({"input_ids"})  # the name the transformation looks for
        tokens.get_node().set_friendly_name("input_ids")
        paged_attention_transformation(ir)
        cache_type = getattr(ov.Type, str(config.get("KV_CACHE_PRECISION", "f32")))
        for parameter in ir.get_parameters():
            if parameter.get_friendly_name().startswith(("key_cache.", "value_cache.")):
                parameter.set_element_type(cache_type)
                parameter.set_partial_shape(ov.PartialShape([-1, variable[1], -1, variable[3]]))
        ir.validate_nodes_and_infer_types()
        compiled = ov.Core().compile_model(ir, "CPU", config)
        self.request = compiled.create_infer_request()
        self.inputs = {port.get_any_name() for port in compiled.inputs}
        self.caches: List[ov.Tensor] = []
        for port in compiled.inputs:
            if port.get_any_name().startswith(("key_cache.", "value_cache.")):
                block_shape = [dim.get_length() for dim in list(port.get_partial_shape())[1:]]
                self.block_size = block_shape[1]  # the CPU plugin picks the block size and layout
                cache = ov.Tensor(port.get_element_type(), [-(-context // self.block_size), *block_shape])
                cache.data[...] = 0
                self.request.set_tensor(port.get_any_name(), cache)
                self.caches.append(cache)

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        count = tokens.shape[1]
        blocks = -(-(position + count) // self.block_size)
        feed = {
            "input_ids": tokens.reshape(-1).numpy(),
            "attn_options_input_pos": np.array([position]),
            "position_ids": np.arange(position, position + count),
            "past_lens": np.array([position], np.int32),
            "subsequence_begins": np.array([0, count], np.int32),
            "block_indices": np.arange(blocks, dtype=np.int32),
            "block_indices_begins": np.array([0, blocks], np.int32),
            "max_context_len": np.array(position + count, np.int32),
        }
        self.request.infer({name: value for name, value in feed.items() if name in self.inputs}, share_inputs=True)
        return torch.from_numpy(self.request.get_output_tensor(0).data.copy())


def token_at(position: int) -> torch.Tensor:
    return torch.tensor([[1 + position % 100]])


def step_and_going_back_ms(engine: Callable, back: int, cut: int, repeats: int) -> Tuple[List[float], List[float]]:
    """The times (ms) of `repeats` decode steps at back + cut and of as many calls at
    back, the cache holding positions 0..back + cut - 1 before each; the cut positions
    are refilled untimed."""
    steps, goings_back = [], []
    for _ in range(repeats):
        begin = time.perf_counter()
        engine(token_at(back + cut), back + cut)
        steps.append(1e3 * (time.perf_counter() - begin))
        begin = time.perf_counter()
        engine(token_at(back), back)
        goings_back.append(1e3 * (time.perf_counter() - begin))
        for position in range(back + 1, back + cut):
            engine(token_at(position), position)
    return steps, goings_back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, contexts=[256, 1024], rounds=5)
    add_form_argument(parser)
    parser.add_argument("--cut", type=int, default=15, help="positions a call goes back")
    parser.add_argument("--repeats", type=int, default=4, help="steps and goings back per round and engine")
    parser.add_argument("--no-xnnpack", action="store_true")
    parser.add_argument("--no-slots", action="store_true", help="leave out OpenVINO alone with the cache in slots")
    parser.add_argument("--no-paged", action="store_true", help="leave out the PagedAttention engines")
    options = parser.parse_args()
    setup_logging()
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa

    folder = programs_folder(options.folder, "llm_going_back_")
    env = environment()
    stem = options.form.replace(":", "_")
    rows: List[List[object]] = []
    part_rows: List[List[object]] = []
    for context in options.contexts:
        model = llama_of_shape(options.shape, context, dynamic=False)
        compressed = nncf_compressed(model, options.form, False, context)
        # The compile specs export_llm gives these weights, and the configuration they make.
        ours_specs = openvino_compile_specs()
        our_config = compile_config(ours_specs)
        engines: Dict[str, Callable] = {
            f"ours {options.form}": ExecutorchEngine(
                write_pte(
                    compressed, OpenvinoPartitioner(ours_specs), False, context, folder / f"ours_{stem}_{context}.pte"
                )
            ),
        }
        if not options.no_paged:
            paged_specs = openvino_compile_specs(paged_attention=True)
            engines[f"ours {options.form}, paged_attention"] = ExecutorchEngine(
                write_pte(
                    compressed,
                    OpenvinoPartitioner(paged_specs),
                    False,
                    context,
                    folder / f"ours_{stem}_pa_{context}.pte",
                )
            )
        alone = OpenvinoAloneCut(converted_ir(compressed, folder / f"ir_{stem}_{context}.xml"), our_config)
        engines[f"OpenVINO alone {options.form}, GenAI's cut"] = alone
        if not options.no_paged:
            # Read again from the file just written: the transformation changes the model it is given.
            paged_ir = converted_ir(compressed, folder / f"ir_{stem}_{context}.xml")
            engines[f"OpenVINO alone {options.form}, PagedAttention"] = OpenvinoAlonePaged(
                paged_ir, our_config, context
            )
        if not options.no_slots:
            with kv_cache_kept_in_slots():
                slots_ir = converted_ir(compressed, folder / f"ir_slots_{stem}_{context}.xml")
            engines[f"OpenVINO alone {options.form}, cache in slots"] = OpenvinoAloneLogitsCopy(slots_ir, our_config)
        if not options.no_xnnpack:
            pte = write_pte(
                xnnpack_8da4w(model), xnnpack_partitioner(), False, context, folder / f"xnnpack_{context}.pte"
            )
            engines["XNNPACK 8da4w"] = ExecutorchEngine(pte)
        del compressed
        back = int(0.6 * context)
        if back + options.cut >= context:
            raise SystemExit(f"--cut {options.cut} does not fit after position {back} in a context of {context}")
        for engine in engines.values():
            for position in range(back + options.cut):
                engine(token_at(position), position)
        steps: Dict[str, List[float]] = {name: [] for name in engines}
        goings_back: Dict[str, List[float]] = {name: [] for name in engines}
        for round_index in range(options.rounds):
            names = round_order(list(engines), round_index)
            for name in names:
                step, going_back = step_and_going_back_ms(engines[name], back, options.cut, options.repeats)
                steps[name] += step
                goings_back[name] += going_back
        for name in engines:
            step, going_back = statistics.median(steps[name]), statistics.median(goings_back[name])
            rows.append([context, name, step, going_back, going_back / step])
        part_rows.append([context] + [statistics.median(times) for times in alone.parts.values()])
    shape = SHAPES[options.shape]
    print_header(
        f"Going back {options.cut} positions to 60% of the context, quantized Llama dim {shape['dim']}, "
        f"{shape['layers']} layers, {shape['kv_heads']} KV heads, random weights: {options.rounds} alternating "
        f"rounds of {options.repeats}, medians",
        env,
    )
    print_table(["context", "engine", "decode step ms", "going back ms", "going back / step"], rows)
    print("\nOpenVINO alone: the parts of GenAI's cut over all states (ms, medians)")
    print_table(["context", "get_state", "dense copy", "set_state"], part_rows)


if __name__ == "__main__":
    main()
