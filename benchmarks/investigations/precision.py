"""Per-call latency of OpenVINO's f32 against its bf16 inference precision.

One model, an MLP of 4 x Linear(1024, 1024) with ReLU between them, is lowered
twice in this run, with openvino_compile_specs(inference_precision="f32") and
"bf16", and both programs are loaded with executorch.runtime. Each method is
warmed up, then timed over ROUNDS rounds of CALLS_PER_ROUND calls at batch 64,
the two alternating (f32 first in even rounds, bf16 first in odd ones) so
machine noise hits both.
The table gives the median, p10 and p90 of the per-call time (time.perf_counter_ns
around method.execute), the ratio of the bf16 median to the f32 one, and the
error against eager PyTorch in float32: max |out - eager| / max |eager|.
The figures go to benchmarks/results/precision.json, the programs to
benchmarks/results/mlp_{f32,bf16}.pte.

Run: python benchmarks/investigations/precision.py
"""

import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import torch  # noqa: E402

torch.set_num_threads(1)

import json  # noqa: E402
import logging  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common import bench  # noqa: E402

PRECISIONS = ("f32", "bf16")
BATCH, WIDTH, LAYERS = 64, 1024, 4
WARMUP, ROUNDS, CALLS_PER_ROUND, ROUND_WARMUP = 30, 6, 50, 5  # 300 timed calls per precision
RESULTS = Path(__file__).resolve().parents[1] / "results" / "precision.json"
logger = logging.getLogger("benchmarks.precision")


def mlp() -> torch.nn.Module:
    layers = []
    for index in range(LAYERS):
        layers.append(torch.nn.Linear(WIDTH, WIDTH))
        if index < LAYERS - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).eval()


def main() -> None:
    bench.setup_logging()
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(BATCH, WIDTH)
    with torch.no_grad():
        expected = model(x)

    RESULTS.parent.mkdir(exist_ok=True)
    methods, errors = {}, {}
    for precision in PRECISIONS:
        path = bench.lower_to_pte(model, (x,), RESULTS.parent / f"mlp_{precision}.pte", inference_precision=precision)
        methods[precision] = method = bench.load_method(path)
        out = method.execute([x])[0]
        errors[precision] = ((out - expected).abs().max() / expected.abs().max()).item()
        for _ in range(WARMUP):
            method.execute([x])

    timings = {precision: bench.Timing() for precision in PRECISIONS}
    for round_index in range(ROUNDS):
        order = bench.round_order(PRECISIONS, round_index)
        for precision in order:
            method = methods[precision]
            timings[precision] += bench.measure(lambda: method.execute([x]), ROUND_WARMUP, CALLS_PER_ROUND)
        logger.info(
            "round %d/%d: %s", round_index + 1, ROUNDS, ", ".join(f"{p} {timings[p].median:.3f} ms" for p in PRECISIONS)
        )

    env = bench.environment()
    ratio = timings["bf16"].median / timings["f32"].median
    bench.print_header(
        f"MLP {LAYERS} x Linear({WIDTH}) + ReLU, batch {BATCH}: "
        f"{ROUNDS} alternating rounds x {CALLS_PER_ROUND} calls per precision",
        env,
    )
    bench.print_table(
        ["precision", "median ms", "p10 ms", "p90 ms", "vs f32", "max rel err vs eager"],
        [
            [p, timings[p].median, timings[p].p10, timings[p].p90, timings[p].median / timings["f32"].median, errors[p]]
            for p in PRECISIONS
        ],
    )
    print(f"\nbf16/f32 median ratio: {ratio:.3f}")

    RESULTS.write_text(
        json.dumps(
            {
                "environment": env,
                "model": {"layers": LAYERS, "width": WIDTH, "batch": BATCH},
                "method": {
                    "warmup": WARMUP,
                    "rounds": ROUNDS,
                    "calls_per_round": CALLS_PER_ROUND,
                    "round_warmup": ROUND_WARMUP,
                },
                "precisions": {p: {**timings[p].summary(), "max_rel_err_vs_eager": errors[p]} for p in PRECISIONS},
                "bf16_over_f32_median": ratio,
            },
            indent=2,
        )
        + "\n"
    )
    logger.info("wrote %s", RESULTS)


if __name__ == "__main__":
    main()
