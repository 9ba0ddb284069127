"""Where a decode step's time goes inside OpenVINO: per-node counters of the wheel's
Llama, static and dynamic-length exports, at each inference precision, in one
process and alternating rounds.

    python benchmarks/investigations/llm_decode_profile.py [--rounds 4] [--precisions f32 bf16] [--context 256]

Each engine is our IR (common.llm_engines.OpenvinoAloneLogitsView: the same IR and compile
config our delegate compiles) compiled with OpenVINO's PERF_COUNT on. The cache is
filled to 60% of the context, then `--tokens` greedy steps are timed one by one;
for each step the executed nodes' own times are summed. Three tables:
- per engine: the call's wall time, the time inside nodes, the rest (dispatch,
  shape bookkeeping of a dynamic graph, the counters themselves), executed nodes;
- per engine and node type: nodes per step and their time;
- matrix products by weight shape: time per node and the bandwidth it reached
  (weight bytes at the type OpenVINO holds them in, over the node's time).
A step that reads its weights near the machine's bandwidth cannot be made faster by
any engine at that precision; what is above it is per-call and per-node work.
Medians over rounds of the per-step medians.

Compare exports by their call times. The dynamic program takes the filled positions
as one prompt (static: one token per call); after such a call of another length, its
counters for matrix products came out about twice the static ones, yet its call
took 1.15x the static call's time, as it did when filled one token per call (1.14x,
with counters equal to the static ones; Zen 4, 2 cores, f32): after a change of
shape, a dynamic graph's counters hold more than the nodes' own work. `--fill-by-token`
fills the dynamic program one token per call too.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import openvino as ov  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.llm import llama, next_token  # noqa: E402
from common.llm_engines import OpenvinoAloneLogitsView, ir_with_attention_whole, runtime_config  # noqa: E402

EXPORTS = {"static": False, "dynamic": True}


class ProfiledEngine:
    """Our IR compiled with per-node counters, and what its steps spent where."""

    def __init__(self, context: int, layers: int, dim: int, dynamic: bool, precision: str) -> None:
        ir = ir_with_attention_whole(llama(context, dynamic, layers=layers, dim=dim), dynamic, context)
        self.engine = OpenvinoAloneLogitsView(ir, {**runtime_config(inference_precision=precision), "PERF_COUNT": True})
        self.dynamic = dynamic
        runtime = self.engine.request.get_compiled_model().get_runtime_model()
        # FC name -> weight shape, the precision the node runs at (its weights are
        # repacked to it: the IR's f32 weights become bf16 for bf16) and weight bytes.
        self.weights: Dict[str, Tuple[str, str, int]] = {}
        for op in runtime.get_ordered_ops():
            info = op.get_rt_info()
            if info["layerType"].astype(str) == "FullyConnected":
                shape = op.input(1).get_partial_shape().to_shape()
                precision = info["runtimePrecision"].astype(str)
                size = math.prod(shape) * getattr(ov.Type, precision).size
                self.weights[op.get_friendly_name()] = (str(list(shape)), precision, size)
        self.kernels: Dict[str, str] = {}  # FC name -> the kernel that ran it

    def fill(self, length: int, by_token: bool) -> None:
        self.engine.request.reset_state()
        if self.dynamic and not by_token:
            self.engine(torch.arange(1, length + 1).reshape(1, -1) % 100 + 1, 0)
        else:
            for position in range(length):
                self.engine(torch.tensor([[1 + position % 100]]), position)

    def steps(self, start: int, count: int) -> Dict[str, object]:
        """Times `count` greedy steps from `start`; medians per step of each figure."""
        walls, inside, executed = [], [], []
        by_type: Dict[str, List[float]] = defaultdict(list)
        nodes_by_type: Dict[str, int] = {}
        by_fc: Dict[str, List[float]] = defaultdict(list)
        token = 1
        for position in range(start, start + count):
            begin = time.perf_counter()
            logits = self.engine(torch.tensor([[token]]), position)
            walls.append(1e3 * (time.perf_counter() - begin))
            token = next_token(logits)
            step_types: Dict[str, float] = defaultdict(float)
            step_nodes: Dict[str, int] = defaultdict(int)
            for node in self.engine.request.profiling_info:
                if node.status != node.Status.EXECUTED:
                    continue
                us = node.real_time.total_seconds() * 1e6
                step_types[node.node_type] += us
                step_nodes[node.node_type] += 1
                if node.node_name in self.weights:
                    by_fc[node.node_name].append(us)
                    self.kernels[node.node_name] = node.exec_type
            inside.append(sum(step_types.values()) / 1e3)
            executed.append(sum(step_nodes.values()))
            for kind, us in step_types.items():
                by_type[kind].append(us)
            nodes_by_type.update(step_nodes)
        return {
            "wall": statistics.median(walls),
            "inside": statistics.median(inside),
            "executed": statistics.median(executed),
            "types": {kind: (nodes_by_type[kind], statistics.median(us)) for kind, us in by_type.items()},
            "fc": {name: statistics.median(us) for name, us in by_fc.items()},
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=288)
    parser.add_argument("--tokens", type=int, default=24, help="timed decode steps per round and engine")
    parser.add_argument("--precisions", nargs="+", default=["f32", "bf16"])
    parser.add_argument("--fill-by-token", action="store_true", help="no prompt call in the dynamic program")
    options = parser.parse_args()
    setup_logging()
    engines = {
        (export, precision): ProfiledEngine(options.context, options.layers, options.dim, dynamic, precision)
        for precision in options.precisions
        for export, dynamic in EXPORTS.items()
    }
    start = int(0.6 * options.context)
    rounds: Dict[Tuple[str, str], List[Dict[str, object]]] = defaultdict(list)
    for round_index in range(options.rounds):
        names = round_order(list(engines), round_index)
        for name in names:
            engines[name].fill(start, options.fill_by_token)
            rounds[name].append(engines[name].steps(start, options.tokens))

    def median_of(name: Tuple[str, str], pick) -> float:
        return statistics.median(pick(result) for result in rounds[name])

    print_header(
        f"Llama dim {options.dim}, {options.layers} layers, context {options.context}: one decode step from "
        f"position {start} inside OpenVINO (PERF_COUNT on), {options.rounds} alternating rounds",
        environment(),
    )
    summary = []
    for name in engines:
        wall, inside = median_of(name, lambda r: r["wall"]), median_of(name, lambda r: r["inside"])
        summary.append([*name, wall, inside, wall - inside, int(median_of(name, lambda r: r["executed"]))])
    print_table(["export", "precision", "call, ms", "inside nodes, ms", "outside nodes, ms", "executed nodes"], summary)

    print()
    per_type = []
    for name in engines:
        kinds = rounds[name][-1]["types"]
        for kind in sorted(kinds, key=lambda k: -kinds[k][1]):
            us = median_of(name, lambda r, kind=kind: r["types"].get(kind, (0, 0.0))[1])
            per_type.append([*name, kind, kinds[kind][0], us])
    print_table(["export", "precision", "node type", "nodes", "us per step"], per_type)

    print()
    per_shape = []
    for name, engine in engines.items():
        groups: Dict[Tuple[str, str, int, str], List[float]] = defaultdict(list)
        for fc, (shape, precision, size) in engine.weights.items():
            key = (shape, precision, size, engine.kernels.get(fc, "-"))
            groups[key].append(median_of(name, lambda r, fc=fc: r["fc"].get(fc, 0.0)))
        for (shape, precision, size, kernel), times in sorted(groups.items(), key=lambda item: -item[0][2]):
            us = statistics.median(times)
            per_shape.append([*name, shape, precision, kernel, len(times), us, size / us / 1e3 if us else "-"])
    print_table(["export", "precision", "weights", "held as", "kernel", "nodes", "us per node", "GB/s"], per_shape)


if __name__ == "__main__":
    main()
