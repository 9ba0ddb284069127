"""Where a quantized decode step's time goes inside OpenVINO: per-node counters of our
compressed stateful IR, compiled with our runtime's configuration and with OpenVINO's
own defaults, in one process and alternating rounds.

    python benchmarks/investigations/llm_quantized_profile.py [--shape 1024] [--form int4_sym:128:all] [--context 1024]
        [--folder DIR]   # reuse the IR that benchmarks/llm_quantized.py saved there

OpenVINO 2026.4.1's CPU plugin keeps, per node, the mean time per call since the
model was compiled, in whole microseconds. So each engine fills the cache one token
per call to 60% of the context, reads the counters, runs `--steps` more steps and
reads them again: a node's time per step over those steps is
(mean_after x calls_after - mean_before x calls_before) / steps. Tables: per
configuration, the step's wall time and its time inside nodes; per node type, time
per step and the kernels (exec types) the plugin chose; the compressed matrix
products together, with the bandwidth their weight bytes were read at. `--slots` adds
our configuration on the IR converted without the growth rewrite (the cache kept in
the model's slots, as benchmarks/investigations/llm_going_back.py compares it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import environment, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.llm import SHAPES, llama_of_shape  # noqa: E402
from common.llm_engines import runtime_config  # noqa: E402
from common.quantized_llm import converted_ir, kv_cache_kept_in_slots, nncf_compressed, programs_folder  # noqa: E402

CONFIGS = {
    "ours (default specs)": lambda: runtime_config(),
    "ours, f32 activations": lambda: runtime_config(dynamic_quantization_group_size=0),
    "ours, u8 KV cache": lambda: runtime_config(kv_cache_precision="u8"),
    "OpenVINO's defaults": lambda: {"PERFORMANCE_HINT": "LATENCY"},
}


def counters(request: ov.InferRequest) -> Dict[str, Tuple[str, str, float]]:
    """Executed node name -> (type, exec type, mean microseconds per call)."""
    return {
        info.node_name: (info.node_type, info.exec_type, info.real_time.total_seconds() * 1e6)
        for info in request.profiling_info
        if info.status == info.Status.EXECUTED
    }


class Profiled:
    def __init__(self, ir: ov.Model, config: Dict[str, object]) -> None:
        compiled = ov.Core().compile_model(ir, "CPU", {**config, "PERF_COUNT": True})
        self.request = compiled.create_infer_request()
        self.weight_bytes = _compressed_weight_bytes(compiled)

    def step(self, token: int, position: int) -> int:
        self.request.infer([np.array([[token]], np.int64), np.array([position], np.int64)], share_inputs=True)
        return int(self.request.get_output_tensor(0).data.reshape(-1)[-32000:].argmax())

    def profile(self, start: int, steps: int) -> Tuple[float, Dict[str, Tuple[str, str, float]]]:
        """(wall ms per step, node -> (type, exec type, us per step)) over `steps` steps from `start`."""
        self.request.reset_state()
        for position in range(start):
            self.step(1 + position % 100, position)
        before, calls_before = counters(self.request), start
        token, begin = 1, time.perf_counter()
        for position in range(start, start + steps):
            token = self.step(token, position)
        wall = 1e3 * (time.perf_counter() - begin) / steps
        after, calls_after = counters(self.request), start + steps
        per_step = {}
        for name, (kind, exec_type, mean_after) in after.items():
            mean_before = before.get(name, (kind, exec_type, 0.0))[2]
            per_step[name] = (kind, exec_type, (mean_after * calls_after - mean_before * calls_before) / steps)
        return wall, per_step


def _compressed_weight_bytes(compiled: ov.CompiledModel) -> Dict[str, int]:
    """Compressed matrix product layer -> bytes of its weight input as the plugin holds it."""
    sizes = {}
    for op in compiled.get_runtime_model().get_ops():
        # The runtime model calls them FullyConnected; the counters FullyConnectedCompressed.
        weight = op.input(1) if op.get_input_size() > 1 else None
        if not op.get_rt_info()["layerType"].astype(str).startswith("FullyConnected") or weight is None:
            continue
        if weight.get_element_type().is_real():
            continue
        shape = weight.get_partial_shape().to_shape()
        sizes[op.get_friendly_name()] = int(np.prod(shape)) * weight.get_element_type().bitwidth // 8
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=list(SHAPES), default="1024")
    parser.add_argument("--form", default="int4_sym:128:all", help="as benchmarks/llm_quantized.py takes it")
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--slots", action="store_true", help="also profile the IR with the cache kept in slots")
    options = parser.parse_args()
    setup_logging()
    folder = programs_folder(options.folder, "llm_quantized_profile_")
    stem = f"{options.form.replace(':', '_')}_{options.context}"
    path, slots_path = folder / f"ir_{stem}.xml", folder / f"ir_slots_{stem}.xml"
    module = None
    if not path.exists() or (options.slots and not slots_path.exists()):
        module = nncf_compressed(
            llama_of_shape(options.shape, options.context, False), options.form, False, options.context
        )
    ir = converted_ir(module, path)
    engines = {name: Profiled(ir, make()) for name, make in CONFIGS.items()}
    if options.slots:
        with kv_cache_kept_in_slots():
            slots_ir = converted_ir(module, slots_path)
        engines["ours (default specs), cache in slots"] = Profiled(slots_ir, runtime_config())
    start = int(0.6 * options.context)
    walls: Dict[str, List[float]] = defaultdict(list)
    nodes: Dict[str, List[Dict[str, Tuple[str, str, float]]]] = defaultdict(list)
    for round_index in range(options.rounds):
        names = round_order(list(engines), round_index)
        for name in names:
            wall, per_step = engines[name].profile(start, options.steps)
            walls[name].append(wall)
            nodes[name].append(per_step)
    env = environment()
    shape = SHAPES[options.shape]
    print_header(
        f"Quantized Llama dim {shape['dim']}, {shape['layers']} layers, {options.form}, decode steps at positions "
        f"{start}-{start + options.steps - 1} of {options.context}: OpenVINO's per-node counters, "
        f"{options.rounds} alternating rounds, medians",
        env,
    )
    summary, by_type, products = [], [], []
    for name in engines:
        last = nodes[name][-1]
        inside = statistics.median(sum(t for _, _, t in run.values()) for run in nodes[name]) / 1e3
        wall = statistics.median(walls[name])
        summary.append([name, wall, inside, wall - inside, len(last)])
        totals: Dict[Tuple[str, str], List[float]] = defaultdict(lambda: [0, 0.0])
        for kind, exec_type, micros in last.values():
            totals[(kind, exec_type)][0] += 1
            totals[(kind, exec_type)][1] += micros
        for (kind, exec_type), (count, micros) in sorted(totals.items(), key=lambda item: -item[1][1])[:8]:
            by_type.append([name, kind, exec_type, count, micros / 1e3])
        compressed_ms = sum(t for kind, _, t in last.values() if kind == "FullyConnectedCompressed") / 1e3
        weight_mb = sum(engines[name].weight_bytes.values()) / 1e6
        products.append([name, weight_mb, compressed_ms, weight_mb / compressed_ms if compressed_ms else "-"])
    print_table(["configuration", "step ms", "in nodes ms", "outside nodes ms", "executed nodes"], summary)
    print("\nBy node type and kernel (the last round)")
    print_table(["configuration", "node type", "exec type", "nodes", "ms per step"], by_type)
    print("\nCompressed matrix products (the last round): their weights as the plugin holds them, read once a step")
    print_table(["configuration", "weight MB", "ms per step", "GB/s"], products)


if __name__ == "__main__":
    main()
