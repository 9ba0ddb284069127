"""Lowering time with and without the partitioner's trial conversion, in one process.

The partitioner converts each partition it proposes once with OpenVINO's frontend
(partition/trial_conversion.py), so that a node the frontend refuses stays on the CPU
instead of failing the export. This measures what that costs a program that
converts at the first try: export + to_edge_transform_and_lower + to_executorch
+ serialization, in alternating rounds with the check on and switched off.

    python benchmarks/lowering_time.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import executorch_openvino.partitioner as partitioner_module  # noqa: E402
import torch  # noqa: E402
from common.bench import environment, lower, print_header, print_table, setup_logging  # noqa: E402
from common.example_models import small_llama  # noqa: E402
from common.small_models import MODELS  # noqa: E402
from executorch_openvino import OpenvinoPartitioner  # noqa: E402


def cases():
    for title, make_module, make_inputs in MODELS.values():
        yield title, make_module, make_inputs
    yield (
        "Llama dim 288, 6 layers, KV cache, 1 token",
        small_llama,
        lambda: (torch.tensor([[1]]), {"input_pos": torch.tensor([0])}),
    )


def lowering_seconds(module, inputs, check: bool) -> tuple:
    """(lowering seconds, seconds of it spent in the trial conversion)."""
    real_check = partitioner_module._unconvertible
    in_check = []

    def timed_check(*args):
        start = time.perf_counter()
        try:
            return real_check(*args)
        finally:
            in_check.append(time.perf_counter() - start)

    partitioner_module._unconvertible = timed_check if check else (lambda *args: {})
    try:
        start = time.perf_counter()
        with torch.no_grad():  # the Llama's KV cache is written in place
            lower(module, inputs, [OpenvinoPartitioner()])
        return time.perf_counter() - start, sum(in_check)
    finally:
        partitioner_module._unconvertible = real_check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    setup_logging()
    rows = []
    for title, make_module, make_inputs in cases():
        module, inputs = make_module().eval(), make_inputs()
        lowering_seconds(module, inputs, True)  # warm-up: imports and caches
        with_check, without, in_check = [], [], []
        for _ in range(options.rounds):
            without.append(lowering_seconds(module, inputs, False)[0])
            total, checking = lowering_seconds(module, inputs, True)
            with_check.append(total)
            in_check.append(checking)
        ratios = [a / b for a, b in zip(with_check, without)]
        rows.append(
            [
                title,
                statistics.median(without),
                statistics.median(with_check),
                statistics.median(ratios),
                statistics.median(in_check),
                statistics.median(in_check) / statistics.median(with_check),
            ]
        )
    print_header(
        f"Lowering time, trial conversion off / on ({options.rounds} alternating rounds, medians)", environment()
    )
    print_table(["model", "off (s)", "on (s)", "on/off", "trial (s)", "trial share"], rows)


if __name__ == "__main__":
    main()
