"""What ExecuTorch's Python runtime adds to a call of a lowered program, ours against XNNPACK.

    python benchmarks/investigations/runtime_call_parts.py [--models mlp cnn tiny] [--rounds 16]

compare.py's "ours/OV" ratio times `executorch.runtime`'s `Method.execute(inputs)`
against OpenVINO alone's `infer()` on pre-bound tensors. This script splits a call
into the parts ExecuTorch's binding does, for our .pte and for XNNPACK's .pte of the
same model, so a part that costs more with our delegate shows up beside one that
costs the same whatever the delegate:

- ``execute()``: the method alone, inputs set once before (the delegate's own call);
- ``set_inputs``: copying the inputs into the method's planned memory;
- ``set_inputs + execute()`` and ``execute() + get_outputs``: each part with the call;
- ``execute(inputs)``: what `Method.execute(inputs)` does (set, execute, clone outputs).

Both programs are lowered here from benchmarks/common/small_models.py and loaded in one
process; every round runs each engine's parts in turn (the engines' order alternates),
and a part's figure is the median over rounds of the round's median call. Printed per
model and engine: each part in us, and what each way adds to ``execute()``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from common.bench import environment, lower, print_header, print_table, round_order  # noqa: E402
from common.small_models import build  # noqa: E402

WAYS = ("execute()", "set_inputs", "set_inputs + execute()", "execute() + get_outputs", "execute(inputs)")
CALLS_PER_ROUND = 40


def load_both(model_name: str, folder: Path) -> Tuple[List[torch.Tensor], Dict[str, Any]]:
    """Our .pte and XNNPACK's of one model, loaded, inputs set once."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.runtime import Runtime
    from executorch_openvino import OpenvinoPartitioner

    module, inputs = build(model_name)
    args = list(inputs)
    methods = {}
    for engine, partitioner in (("ours", OpenvinoPartitioner()), ("XNNPACK", XnnpackPartitioner())):
        path = folder / f"{model_name}_{engine}.pte"
        path.write_bytes(lower(module, inputs, [partitioner]).buffer)
        program = Runtime.get().load_program(path)
        method = program.load_method("forward")
        method._method.set_inputs(args)  # ExecuTorch's binding under executorch.runtime
        methods[engine] = (program, method)
    return args, methods


def way_calls(args: List[torch.Tensor], method: Any) -> Dict[str, Callable[[], Any]]:
    bound = method._method
    return {
        "execute()": bound.execute,
        "set_inputs": lambda: bound.set_inputs(args),
        "set_inputs + execute()": lambda: (bound.set_inputs(args), bound.execute()),
        "execute() + get_outputs": lambda: (bound.execute(), bound.get_outputs(clone_outputs=True)),
        "execute(inputs)": lambda: method.execute(args),
    }


def median_call_us(call: Callable[[], Any]) -> float:
    for _ in range(5):
        call()
    times = []
    for _ in range(CALLS_PER_ROUND):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", nargs="+", default=["mlp", "cnn", "tiny"], choices=["mlp", "cnn", "transformer", "tiny"]
    )
    parser.add_argument("--rounds", type=int, default=16)
    options = parser.parse_args()
    torch.set_num_threads(1)
    import executorch_openvino  # noqa: F401  (registers our backend with the runtime)

    print_header("A call through ExecuTorch's Python runtime, part by part (us)", environment())
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for model_name in options.models:
            args, methods = load_both(model_name, Path(folder))
            calls = {engine: way_calls(args, method) for engine, (_, method) in methods.items()}
            figures: Dict[Tuple[str, str], List[float]] = {(e, w): [] for e in calls for w in WAYS}
            for index in range(options.rounds):
                for engine in round_order(list(calls), index):
                    for way in WAYS:
                        figures[(engine, way)].append(median_call_us(calls[engine][way]))
            for engine in calls:
                us = {way: statistics.median(figures[(engine, way)]) for way in WAYS}
                rows.append(
                    [model_name, engine]
                    + [f"{us[way]:.1f}" for way in WAYS]
                    + [f"+{us[way] - us['execute()']:.1f}" for way in WAYS[2:]]
                )
    print_table(
        ["model", "engine"] + list(WAYS) + [f"{way} - execute()" for way in WAYS[2:]],
        rows,
    )


if __name__ == "__main__":
    sys.exit(main())
