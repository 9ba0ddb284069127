"""Resident memory over many calls of one method whose output size changes per call.

The model returns x * 2 + 1 for x of shape (n, 64), exported with
torch.export.Dim("n", min=1, max=512), so the output's size depends on the input.
One loaded method runs CALLS calls, cycling through SIZES; the outputs of some
calls are checked against eager PyTorch. The resident set size (VmRSS from
/proc/self/status) is read after the first WARM_CALLS calls, every CHECK_EVERY
calls and at the end. The script exits with status 1 when it grew by more than
THRESHOLD_MIB from the warm reading to the end, which would point to a leak in
how the delegate resizes or hands back its output.

Run: python benchmarks/dynamic_output_memory.py
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import torch  # noqa: E402

torch.set_num_threads(1)

import logging  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from common import bench  # noqa: E402

# No n=1: to_edge narrows the exported range [1, 512] to [2, 512] and the delegate refuses n=1.
SIZES = (7, 500, 63, 300, 2, 512, 128, 33)
CALLS, WARM_CALLS, CHECK_EVERY, VERIFY_EVERY = 1000, 10, 250, 97
THRESHOLD_MIB = 20.0
PTE = Path(__file__).parent / "results" / "dynamic_output.pte"
logger = logging.getLogger("benchmarks.dynamic_output_memory")


class ScaleShift(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # the line reads "VmRSS:   123456 kB"
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> int:
    bench.setup_logging()
    torch.manual_seed(0)
    model = ScaleShift()
    PTE.parent.mkdir(exist_ok=True)
    dynamic_shapes = {"x": {0: torch.export.Dim("n", min=1, max=512)}}
    bench.lower_to_pte(model, (torch.randn(16, 64),), PTE, dynamic_shapes=dynamic_shapes)
    method = bench.load_method(PTE)
    inputs = [torch.randn(n, 64) for n in SIZES]  # made once, so only the method allocates per call

    readings, verified = [], 0
    for call in range(1, CALLS + 1):
        x = inputs[(call - 1) % len(inputs)]
        out = method.execute([x])[0]
        if out.shape != x.shape:
            raise AssertionError(f"call {call}: output shape {tuple(out.shape)} for input {tuple(x.shape)}")
        if call % VERIFY_EVERY == 0:
            torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
            verified += 1
        if call == WARM_CALLS or call % CHECK_EVERY == 0:
            readings.append((call, rss_mib()))
            logger.info("after %d calls: RSS %.1f MiB", call, readings[-1][1])

    growth = readings[-1][1] - readings[0][1]
    bench.print_header(
        f"x * 2 + 1, x of shape (n, 64), n in {SIZES}: {CALLS} calls on one method, {verified} checked against eager",
        bench.environment(),
    )
    bench.print_table(
        ["after calls", "RSS MiB", "vs warm MiB"], [[call, rss, rss - readings[0][1]] for call, rss in readings]
    )
    failed = growth > THRESHOLD_MIB
    print(
        f"\nRSS growth from call {readings[0][0]} to call {CALLS}: {growth:+.2f} MiB "
        f"(threshold {THRESHOLD_MIB:g} MiB): {'FAIL' if failed else 'ok'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
