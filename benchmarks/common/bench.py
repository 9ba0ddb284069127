"""What nearly every benchmark uses: lowering to a .pte file, loading it with
executorch.runtime, timing calls, describing the machine and printing tables.

Each script sets the thread policy itself before it imports torch (and so before
this module), because torch's OpenMP threads otherwise spin after every torch op
that executorch.runtime runs to convert inputs and outputs, and take the cores
OpenVINO needs::

    import os
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    torch.set_num_threads(1)
"""

from __future__ import annotations

import logging
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple, TypeVar

# libgomp reads OMP_WAIT_POLICY once, when torch loads it. The headers print the policy
# torch loaded with, so that one set too late (after `import torch`) shows as unset.
if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
OMP_WAIT_POLICY_AT_TORCH_LOAD = os.environ.get("OMP_WAIT_POLICY", "(unset)")

import openvino  # noqa: E402
import torch  # noqa: E402
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower  # noqa: E402
from executorch.runtime import Method, Runtime  # noqa: E402
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs  # noqa: E402

logger = logging.getLogger("benchmarks")


def setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")


def lower(
    module: torch.nn.Module, example_inputs: Tuple[Any, ...], partitioners: Sequence[Any], *, dynamic_shapes: Any = None
) -> ExecutorchProgramManager:
    """Exports `module` and lowers it with `partitioners` (none: ExecuTorch's CPU kernels only).

    The program is serialized before returning (`manager.buffer` is then free to read),
    so that timing this call covers export, lowering, to_executorch and serialization.
    """
    exported = torch.export.export(module.eval(), example_inputs, dynamic_shapes=dynamic_shapes)
    manager = to_edge_transform_and_lower(exported, partitioner=list(partitioners)).to_executorch()
    manager.buffer  # noqa: B018 - serializes now; later reads return the cached bytes
    return manager


def delegate_ids(manager: ExecutorchProgramManager) -> List[str]:
    return [delegate.id for delegate in manager.executorch_program.execution_plan[0].delegates]


def cpu_ops(manager: ExecutorchProgramManager) -> List[str]:
    """The ops left to ExecuTorch's CPU kernels, such as "aten::add.out"."""
    return [
        op.name + (f".{op.overload}" if op.overload else "")
        for op in manager.executorch_program.execution_plan[0].operators
    ]


def lower_to_pte(
    module: torch.nn.Module, example_inputs: Tuple[Any, ...], path: Path, *, dynamic_shapes: Any = None, **specs: str
) -> Path:
    """Exports `module`, lowers it with OpenvinoPartitioner(openvino_compile_specs(**specs)), writes `path`."""
    partitioner = OpenvinoPartitioner(openvino_compile_specs(**specs))
    manager = lower(module, example_inputs, [partitioner], dynamic_shapes=dynamic_shapes)
    if BACKEND_ID not in delegate_ids(manager):
        raise RuntimeError(f"nothing of {type(module).__name__} was delegated to OpenVINO")
    if cpu_ops(manager):
        logger.warning("ops left to ExecuTorch's CPU kernels: %s", cpu_ops(manager))
    path.write_bytes(manager.buffer)
    logger.info("wrote %s (%s, %d bytes)", path, specs or "default specs", path.stat().st_size)
    return path


def load_method(path: Path) -> Method:
    return Runtime.get().load_program(path).load_method("forward")


@dataclass
class Timing:
    """Per-call times in milliseconds; `+` pools the samples of two measurements."""

    samples_ms: List[float] = field(default_factory=list)

    def __add__(self, other: "Timing") -> "Timing":
        return Timing(self.samples_ms + other.samples_ms)

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p10(self) -> float:
        return statistics.quantiles(self.samples_ms, n=10, method="inclusive")[0]

    @property
    def p90(self) -> float:
        return statistics.quantiles(self.samples_ms, n=10, method="inclusive")[-1]

    def summary(self) -> Dict[str, float]:
        return {"median_ms": self.median, "p10_ms": self.p10, "p90_ms": self.p90, "calls": len(self.samples_ms)}


def measure(call: Callable[[], Any], warmup: int, calls: int) -> Timing:
    """Runs `call` `warmup` times untimed, then `calls` times, each timed on its own."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return Timing(samples)


def measure_for(
    call: Callable[[], Any],
    budget_s: float,
    *,
    min_warmup: int = 10,
    warmup_s: float = 0.2,
    min_calls: int = 50,
    max_calls: int = 20000,
) -> Tuple[Timing, int]:
    """Warms `call` up for at least `min_warmup` calls and `warmup_s` seconds, then times
    as many calls as fit in about `budget_s` seconds, within [min_calls, max_calls].

    Returns the timing and the number of warm-up calls.
    """
    warmup, start = 0, time.perf_counter()
    while warmup < min_warmup or time.perf_counter() - start < warmup_s:
        call()
        warmup += 1
    # The rate of the warm calls, not of the first ones, sets the number of timed calls.
    probe, start = max(1, warmup // 4), time.perf_counter()
    for _ in range(probe):
        call()
    per_call_s = (time.perf_counter() - start) / probe
    calls = max(min_calls, min(max_calls, int(budget_s / per_call_s)))
    return measure(call, 0, calls), warmup + probe


Name = TypeVar("Name")


def round_order(names: Sequence[Name], round_index: int) -> List[Name]:
    """`names` in order on even rounds and reversed on odd ones, so that in alternating
    rounds no engine always runs first or right after the same other one."""
    return list(names) if round_index % 2 == 0 else list(reversed(list(names)))


def max_rel_err(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """max |actual - expected| / max |expected|, computed in float32."""
    actual, expected = actual.float(), expected.float()
    return ((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-30)).item()


# Run in a fresh process: `memory()` gives its resident set and the anonymous part of it,
# in MB. Anonymous memory is what the process allocated (weights OpenVINO repacks, the
# heap); the rest is file-backed, mostly library code, whose resident size varies with
# how the page cache holds the files: OpenVINO's CPU plugin took 40 MB right after pip
# wrote it and 23 MB once it had been read back from disk (2026-12-04).
_MEMORY_SOURCE = """
def memory():
    fields = {}
    for line in open("/proc/self/smaps_rollup").readlines()[1:]:
        key, value = line.split(":", 1)
        fields[key] = int(value.split()[0]) * 1024 / 1e6
    return fields["Rss"], fields["Anonymous"]
"""


def growth_in_fresh_process(setup: str, work: str) -> Tuple[float, float, str]:
    """(resident growth MB, anonymous growth MB, `result`) of a fresh Python process
    that runs `setup` and then `work`, measured across `work` only; `work` may set
    `result` to a string to hand back.

    Example::

        resident, anonymous, seconds = growth_in_fresh_process(
            "import time", "begin = time.perf_counter(); x = bytearray(10**8); "
            "result = str(time.perf_counter() - begin)")
    """
    code = "\n".join(
        [
            _MEMORY_SOURCE,
            setup,
            "result = ''",
            "before = memory()",
            work,
            "after = memory()",
            "print(after[0] - before[0], after[1] - before[1], result)",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    resident, anonymous, *result = out.stdout.strip().splitlines()[-1].split(" ", 2)
    return float(resident), float(anonymous), result[0] if result else ""


class OthersLoad:
    """The share of the machine's cores that other processes kept busy since the last
    call: /proc/stat's busy time less this process's CPU time. On a machine shared with
    others, a round run beside their work is slower, and more so for an engine whose
    threads wait for one another at every layer."""

    def __init__(self) -> None:
        self._tick = os.sysconf("SC_CLK_TCK")
        self._last = self._now()

    def _now(self) -> Tuple[float, float, float]:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
        busy = (sum(fields[:8]) - fields[3] - fields[4]) / self._tick  # all but idle and iowait
        own = os.times()
        return time.perf_counter(), busy, own.user + own.system

    def since_last(self) -> float:
        now = self._now()
        wall, busy, own = (b - a for a, b in zip(self._last, now))
        self._last = now
        return min(1.0, max(0.0, (busy - own) / (wall * (os.cpu_count() or 1)))) if wall > 0 else 0.0


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


# The instruction sets the CPU plugin's and XNNPACK's kernels choose by, in the order printed.
_KERNEL_FLAGS = ("amx_int8", "amx_bf16", "avx512_vnni", "avx512_bf16", "avx512f", "avx_vnni", "avx2")


def cpu_model() -> str:
    """The CPU's name with its family, model and kernel-relevant flags: under a hypervisor
    the name alone ("AMD EPYC") covers machines whose kernels differ."""
    fields: Dict[str, str] = {}
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if not line.strip():
                break  # the first processor's fields are enough
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    kernel_flags = " ".join(flag for flag in _KERNEL_FLAGS if flag in flags) or "no AVX2"
    name = fields.get("model name", "unknown")
    return f"{name}, family {fields.get('cpu family', '?')} model {fields.get('model', '?')}, {kernel_flags}"


def environment() -> Dict[str, Any]:
    """What the numbers depend on: CPU, versions and the torch thread settings in force."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "openvino": openvino.__version__,
        "torch": torch.__version__,
        "executorch": package_version("executorch"),
        "executorch_openvino": package_version("executorch-openvino"),
        "torch_num_threads": torch.get_num_threads(),
        "OMP_WAIT_POLICY": OMP_WAIT_POLICY_AT_TORCH_LOAD,
    }


def print_header(title: str, env: Dict[str, Any]) -> None:
    print(f"\n{title}")
    print(
        f"CPU: {env['cpu']} ({env['cores']} cores), OpenVINO {env['openvino']}, torch {env['torch']}, "
        f"ExecuTorch {env.get('executorch', '?')}, executorch-openvino {env.get('executorch_openvino', '?')}"
    )
    print(f"threads: torch.set_num_threads({env['torch_num_threads']}), OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']}\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Prints rows under headers, columns right-aligned; floats with 4 significant digits."""
    cells = [[f"{value:.4g}" if isinstance(value, float) else str(value) for value in row] for row in rows]
    widths = [max(len(str(header)), *(len(row[i]) for row in cells)) for i, header in enumerate(headers)]
    print("  ".join(str(header).rjust(width) for header, width in zip(headers, widths)))
    print("  ".join("-" * width for width in widths))
    for row in cells:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
