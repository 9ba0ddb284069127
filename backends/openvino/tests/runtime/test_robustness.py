"""Long runs and concurrent use stay right."""

import os
import subprocess
import sys
import threading

import torch
from harness import assert_close, eager, lower, run


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class ScaledAndTotal(torch.nn.Module):
    """A dynamic output next to a 0-d one."""

    def forward(self, x):
        return x * 2 + 1, x.sum()


def test_ten_thousand_calls_mixing_sizes_and_scalars_stay_right_and_flat(tmp_path):
    model = ScaledAndTotal()
    rows = torch.export.Dim("rows", min=2, max=256)
    method = lower(model, (torch.randn(8, 16),), tmp_path, dynamic_shapes=({0: rows},)).load_method()
    sizes = [2, 256, 17, 130, 3, 64]
    inputs = {size: torch.randn(size, 16) for size in sizes}
    expected = {size: eager(model, (x,)) for size, x in inputs.items()}
    warm_rss = None
    for call in range(10_000):
        size = sizes[call % len(sizes)]
        got = method.execute([inputs[size]])
        assert got[0].shape == (size, 16)
        torch.testing.assert_close(got[0], expected[size][0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got[1], expected[size][1], rtol=1e-5, atol=1e-4)
        if call == 100:
            warm_rss = _rss_mib()
    growth = _rss_mib() - warm_rss
    assert growth < 16, f"resident memory grew by {growth:.1f} MiB over 9,900 calls"


class Affine(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.linear = torch.nn.Linear(32, 32)
        self.scale = scale

    def forward(self, x):
        return self.linear(x) * self.scale


def test_two_programs_executing_at_once_from_two_threads_give_right_results(tmp_path):
    models = [Affine(1.0).eval(), Affine(-3.0).eval()]
    methods = [
        lower(model, (torch.randn(4, 32),), tmp_path, name=f"m{i}").load_method() for i, model in enumerate(models)
    ]
    failures = []
    start = threading.Barrier(2)

    def work(model, method):
        try:
            start.wait()
            for _ in range(300):
                inputs = (torch.randn(4, 32),)
                assert_close(run(method, inputs), eager(model, inputs))
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=pair) for pair in zip(models, methods)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]


# Runs in its own process: the failure it guards against crashed the process when it exited.
_LOAD_FROM_FOUR_THREADS = """
import sys, threading, torch
import executorch_openvino
from executorch.runtime import Runtime

pte, weights = sys.argv[1], sys.argv[2]
model = torch.nn.Linear(32, 8)
model.load_state_dict(torch.load(weights))
methods, start = [], threading.Barrier(4)

def load():
    start.wait()
    methods.append(Runtime.get().load_program(pte).load_method("forward"))

threads = [threading.Thread(target=load) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert len(methods) == 4, f"{len(methods)} of 4 loads returned"
for method in methods:
    for seed in (1, 2):
        x = torch.randn(4, 32, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(method.execute([x])[0], model(x).detach(), rtol=1e-5, atol=1e-5)
print("loaded and matched eager in 4 threads")
"""


def test_four_threads_loading_methods_at_once_leave_a_process_that_exits_cleanly(tmp_path):
    # ExecuTorch's Python runtime points std::cerr at Python during each call; a line the
    # delegate logged while loading let the threads' loads interleave and leave std::cerr
    # on a freed buffer, which crashed the process at exit (6 of 6 runs before the fix).
    torch.manual_seed(0)
    model = torch.nn.Linear(32, 8).eval()
    torch.save(model.state_dict(), tmp_path / "weights.pt")
    lowered = lower(model, (torch.randn(4, 32),), tmp_path)
    script = tmp_path / "load_from_four_threads.py"
    script.write_text(_LOAD_FROM_FOUR_THREADS)
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, str(script), str(lowered.path), str(tmp_path / "weights.pt")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, f"exit status {result.returncode}\n{result.stderr[-2000:]}"
        assert "loaded and matched eager in 4 threads" in result.stdout


def test_import_without_openvino_says_what_to_install():
    """Without the openvino package `import executorch_openvino` does not fail (a host may
    import it before it lowers or runs anything) and warns once, naming what to install."""
    script = (
        "import importlib.metadata as metadata, logging, sys\n"
        "sys.modules['openvino'] = None\n"  # makes `import openvino` fail
        "found = metadata.version\n"
        "def version(name):\n"
        "    if name == 'openvino':\n"
        "        raise metadata.PackageNotFoundError(name)\n"
        "    return found(name)\n"
        "metadata.version = version\n"  # as if the openvino wheel were not installed
        "logging.basicConfig()\n"
        "import executorch_openvino\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env={**os.environ}
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("pip install openvino") == 1, result.stderr[-2000:]
