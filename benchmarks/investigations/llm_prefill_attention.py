"""Where a long prompt's first-token time goes inside OpenVINO: per-node counters of one
prompt's prefill, our IR against the IR optimum-intel exports, each in the stateful form
and in PagedAttention form, OpenVINO alone, in one process and alternating rounds.

    python benchmarks/investigations/llm_prefill_attention.py --pte OURS.pte --genai-dir DIR \
        [--tokens 900] [--rounds 4] [--precision f32] [--engines ...]

OURS.pte is ``python -m executorch_openvino.llm.export --hf FOLDER --max-seq-len 1024``
(a dynamic-length export, without --paged-attention: the script rewrites its IR itself);
DIR is ``optimum-cli export openvino --task text-generation-with-past`` of the same folder
(benchmarks/llm_genai.py says how). Engines, each compiled once on the CPU with
INFERENCE_PRECISION_HINT and KV_CACHE_PRECISION set to ``--precision``:
- "ours stateful": the IR in the .pte as our runtime compiles it by default (the KV cache
  as OpenVINO state, attention one ScaledDotProductAttention with a mask read from the
  export's causal table);
- "ours paged": that IR through OpenVINO's SDPAToPagedAttention with the tokens laid out
  again as one sequence, as runtime/paged_attention.cpp does for the compile spec
  paged_attention (this script repeats that layout change in Python);
- "GenAI stateful": optimum-intel's IR as is (stateful, as OpenVINO GenAI's stateful
  pipeline would run it), with the output projection of the last position only;
- "GenAI paged": that IR through SDPAToPagedAttention and with the output projection of
  the sampled position only, as OpenVINO GenAI's continuous-batching pipeline (the one
  its LLMPipeline runs on a CPU) compiles it, fed one prompt as that pipeline feeds it.

Every round gives each engine a new prompt of ``--tokens`` random ids at position 0
(stateful engines reset their state first; paged ones start again in blocks 0, 1, ...),
after one warm-up prompt each. OpenVINO 2026.4.1's CPU plugin keeps, per node, the mean
time per call since the model was compiled, and the first call also prepares kernels:
so a node's time per prompt is (mean after the rounds x (rounds + 1) - mean after the
warm-up) / rounds. Printed: wall time per prompt (median of the rounds), the time in
nodes, the node types that take most, the attention nodes' total and the kernels (exec
types) the plugin chose for them, every node type's time in each engine, the max difference of "ours paged" logits from
"ours stateful" (the same prompt), and the share of the cores other processes kept busy
in each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import OthersLoad, environment, print_header, print_table, round_order  # noqa: E402

BLOCK = 32  # the CPU plugin's positions per block
ENGINES = ("ours stateful", "ours paged", "GenAI stateful", "GenAI paged")


def ir_in_pte(pte: Path) -> ov.Model:
    """The OpenVINO model in the .pte's one delegate."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch_openvino.serialization.blob import read_blob

    program = deserialize_pte_binary(pte.read_bytes()).program
    if len(program.backend_delegate_data) != 1:
        raise SystemExit(f"{pte}: {len(program.backend_delegate_data)} delegates; expected the one of an LLM export")
    blob = read_blob(bytes(program.backend_delegate_data[0].data))
    weights = ov.Tensor(np.frombuffer(blob.ir_weights, dtype=np.uint8).copy())
    return ov.Core().read_model(blob.ir_xml.decode(), weights)


def to_paged(model: ov.Model, tokens_name: str) -> None:
    """SDPAToPagedAttention, with the tokens of a call laid out again as one sequence of a
    batch of 1 (runtime/paged_attention.cpp, lay_out_as_one_sequence)."""
    from openvino._offline_transformations import paged_attention_transformation

    port = model.input(tokens_name)
    port.get_tensor().set_names({"input_ids"})
    port.get_node().set_friendly_name("input_ids")
    paged_attention_transformation(model)
    tokens = model.input("input_ids").get_node()
    for target in list(tokens.output(0).get_target_inputs()):
        unsqueeze = target.get_node()
        assert unsqueeze.get_type_name() == "Unsqueeze", unsqueeze
        unsqueeze.output(0).replace(ops.unsqueeze(tokens, ops.constant(np.array(0, np.int64))).output(0))
    for op in model.get_ordered_ops():
        if op.get_type_name() != "PagedAttentionExtension":
            continue
        shapes = []
        for index in range(3):
            source = op.input_value(index).get_node().input_value(0)  # [batch, tokens, heads, size]
            shape = source.get_partial_shape()
            shapes.append(shape)
            width = shape[2].get_length() * shape[3].get_length()
            flat = ops.reshape(source, ops.constant(np.array([-1, width], np.int64)), False)
            op.input(index).replace_source_output(flat.output(0))
        back = ops.constant(np.array([1, -1, shapes[0][2].get_length(), shapes[2][3].get_length()], np.int64))
        for target in op.output(0).get_target_inputs():
            reshape = target.get_node()
            reshape.input(1).replace_source_output(back.output(0))
            reshape.set_special_zero(False)
    model.validate_nodes_and_infer_types()


def last_position_only(model: ov.Model, token_axis: int) -> ov.op.Parameter:
    """OpenVINO GenAI's apply_gather_before_matmul_transformation: the output projection
    reads the hidden states of the positions given in sampled_tokens_indices only.

    ``token_axis`` is the axis of the hidden states that runs over a call's tokens: 1 in
    the stateful form ([1, tokens, hidden]), 0 after SDPAToPagedAttention, which lays the
    tokens out as batch rows ([tokens, 1, hidden]).
    """
    matmul = [op for op in model.get_ordered_ops() if op.get_type_name() == "MatMul"][-1]
    indices = ov.op.Parameter(ov.Type.i64, ov.PartialShape([-1]))
    indices.output(0).get_tensor().set_names({"sampled_tokens_indices"})
    gathered = ops.gather(matmul.input_value(0), indices, ops.constant(np.array(token_axis, np.int64)))
    matmul.input(0).replace_source_output(gathered.output(0))
    model.add_parameters([indices])
    model.validate_nodes_and_infer_types()
    return indices


def bind_blocks(compiled: ov.CompiledModel, request: ov.InferRequest, positions: int) -> None:
    blocks = (positions + BLOCK - 1) // BLOCK
    for port in compiled.inputs:
        if port.get_any_name().startswith(("key_cache.", "value_cache.")):
            shape = port.get_partial_shape()
            sizes = [blocks] + [shape[d].get_length() for d in (1, 2, 3)]
            request.set_tensor(port, ov.Tensor(port.get_element_type(), sizes))


def paged_feeds(length: int) -> Dict[str, np.ndarray]:
    blocks = (length + BLOCK - 1) // BLOCK
    return {
        "position_ids": np.arange(length, dtype=np.int64),
        "max_context_len": np.array(length, np.int32),
        "past_lens": np.array([0], np.int32),
        "subsequence_begins": np.array([0, length], np.int32),
        "block_indices_begins": np.array([0, blocks], np.int32),
        "block_indices": np.arange(blocks, dtype=np.int32),
    }


def make_engines(options: argparse.Namespace) -> Dict[str, Tuple[ov.InferRequest, Callable[[np.ndarray], None]]]:
    core = ov.Core()
    config = {
        "PERF_COUNT": True,
        "INFERENCE_PRECISION_HINT": options.precision,
        "KV_CACHE_PRECISION": options.precision,
    }
    engines = {}
    for name in options.engines:
        if name.startswith("ours"):
            model = ir_in_pte(options.pte)
            tokens_name, positions_name = (port.get_any_name() for port in model.inputs)
            if name == "ours paged":
                to_paged(model, tokens_name)
        else:
            model = core.read_model(options.genai_dir / "openvino_model.xml")
            if name == "GenAI paged":
                from openvino._offline_transformations import paged_attention_transformation

                paged_attention_transformation(model)
            last_position_only(model, token_axis=0 if name == "GenAI paged" else 1)
        compiled = core.compile_model(model, "CPU", config)
        request = compiled.create_infer_request()
        if name.endswith("paged"):
            bind_blocks(compiled, request, options.context)

        def run(ids: np.ndarray, name=name, request=request, names=(tokens_name, positions_name)) -> None:
            length = len(ids)
            if name == "ours stateful":
                request.reset_state()
                request.infer({names[0]: ids[None], names[1]: np.array([0], np.int64)})
            elif name == "ours paged":
                request.infer({"input_ids": ids, names[1]: np.array([0], np.int64), **paged_feeds(length)})
            elif name == "GenAI stateful":
                request.reset_state()
                request.infer(
                    {
                        "input_ids": ids[None],
                        "attention_mask": np.ones((1, length), np.int64),
                        "position_ids": np.arange(length, dtype=np.int64)[None],
                        "beam_idx": np.zeros(1, np.int32),
                        "sampled_tokens_indices": np.array([length - 1], np.int64),
                    }
                )
            else:
                request.infer(
                    {
                        "input_ids": ids,
                        "sampled_tokens_indices": np.array([length - 1], np.int64),
                        **paged_feeds(length),
                    }
                )

        engines[name] = (request, run)
    return engines


def node_means(request: ov.InferRequest) -> Dict[str, float]:
    """Each node's counter, seconds by node name: OpenVINO 2026.4.1's CPU plugin keeps the
    mean time per call since the model was compiled, not the last call's."""
    return {info.node_name: info.real_time.total_seconds() for info in request.profiling_info}


def ms_per_call(
    request: ov.InferRequest, before: Dict[str, float], calls_before: int, calls: int
) -> List[Tuple[Any, float]]:
    """(profiling info, ms a call) of each node over the last `calls` calls, from the means
    `before` (node_means) read after the first `calls_before` calls: the counters are means
    since compilation, so the first calls (which also prepare kernels) are taken out."""
    total = calls_before + calls
    return [
        (info, (info.real_time.total_seconds() * total - before.get(info.node_name, 0.0) * calls_before) / calls * 1e3)
        for info in request.profiling_info
    ]


def print_node_types(types_by_engine: Dict[str, Dict[str, float]], least_ms: float = 0.5) -> None:
    """Each node type that took at least ``least_ms`` a prompt in some engine, ms per engine:
    where the engines' graphs differ (a type only one has, a type slower in one)."""
    kinds = {kind for by_type in types_by_engine.values() for kind, ms in by_type.items() if ms >= least_ms}
    order = sorted(kinds, key=lambda kind: -max(by_type.get(kind, 0.0) for by_type in types_by_engine.values()))
    rows = [[kind] + [f"{by_type.get(kind, 0.0):.1f}" for by_type in types_by_engine.values()] for kind in order]
    print()
    print_table(["node type, ms a prompt"] + list(types_by_engine), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pte", type=Path, required=True, help="our dynamic-length export of the folder")
    parser.add_argument("--genai-dir", type=Path, required=True, help="optimum-cli's export of the same folder")
    parser.add_argument("--tokens", type=int, default=900)
    parser.add_argument("--context", type=int, default=1024, help="positions the paged engines' blocks hold")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16"])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    options = parser.parse_args()
    print_header(f"Prefill of {options.tokens} tokens, OpenVINO alone, {options.precision}", environment())
    engines = make_engines(options)
    rng = np.random.default_rng(0)
    warm_ids = rng.integers(10, 990, size=options.tokens).astype(np.int64)
    after_warm_up = {}
    for name, (request, run) in engines.items():
        run(warm_ids)
        after_warm_up[name] = node_means(request)
    others = OthersLoad()
    walls: Dict[str, List[float]] = defaultdict(list)
    loads: List[float] = []
    differences: List[float] = []
    for index in range(options.rounds):
        ids = rng.integers(10, 990, size=options.tokens).astype(np.int64)
        logits = {}
        others.since_last()
        for name in round_order(list(engines), index):
            request, run = engines[name]
            begin = time.perf_counter()
            run(ids)
            walls[name].append((time.perf_counter() - begin) * 1e3)
            output = request.get_output_tensor(0)
            if output.size != output.shape[-1]:
                # Each engine projects the last position only, as GenAI's pipeline does.
                raise SystemExit(f"{name} returned logits of shape {output.shape}, not one position's")
            logits[name] = output.data.reshape(-1).copy()
        loads.append(others.since_last())
        if "ours stateful" in logits and "ours paged" in logits:
            differences.append(float(np.abs(logits["ours stateful"] - logits["ours paged"]).max()))
    rows = []
    types_by_engine: Dict[str, Dict[str, float]] = {}
    for name, (request, _) in engines.items():
        by_type: Dict[str, float] = defaultdict(float)
        types_by_engine[name] = by_type
        attention_ms, kernels = 0.0, set()
        for info, ms in ms_per_call(request, after_warm_up[name], 1, options.rounds):
            by_type[info.node_type] += ms
            if "Attention" in info.node_type:
                attention_ms += ms
                kernels.add(f"{info.node_type}/{info.exec_type}")
        top = ", ".join(f"{kind} {ms:.0f}" for kind, ms in sorted(by_type.items(), key=lambda item: -item[1])[:4])
        rows.append(
            [
                name,
                f"{statistics.median(walls[name]):.0f}",
                f"{sum(by_type.values()):.0f}",
                f"{attention_ms:.0f}",
                " ".join(sorted(kernels)),
                top,
            ]
        )
    print_table(
        ["engine", "wall ms", "in nodes ms", "attention ms", "attention kernels", "largest node types ms"], rows
    )
    print_node_types(types_by_engine)
    print("\nrounds' wall ms: " + "; ".join(f"{name} {[round(x) for x in walls[name]]}" for name in engines))
    print(f"others' load a round (share of the cores): {[round(x, 2) for x in loads]}")
    if differences:
        print(f"ours paged against ours stateful, max logit difference a round: {[f'{x:.1e}' for x in differences]}")


if __name__ == "__main__":
    sys.exit(main())
