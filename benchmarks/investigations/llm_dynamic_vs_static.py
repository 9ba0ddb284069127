"""Decode and prefill of the wheel's Llama exported with a dynamic sequence length,
with and without the compile spec one_token_model, against the same weights
exported with static shapes (one token per call), in one process and alternating
rounds; and each program's resident memory.

    python benchmarks/investigations/llm_dynamic_vs_static.py [--rounds 8] [--layers 6] [--dim 288]

Decode: each program is loaded once; each round starts a new sequence in each
program (position 0), prefills the same prompt and runs `--tokens` greedy steps at
the same positions, the programs in a rotating order. A step's time is the median of
its steps after the first. The first step after the prompt is shown on its own: with
one_token_model it is where the KV cache moves to the model of one token, and in the
first round it is where OpenVINO prepares kernels for one token (the first round is
left out of the medians for that reason). Prefill: the dynamic programs take the
prompt in one call; the static program takes it one token
per call, its only way. The target: dynamic decode within 1.10x of static decode.
With one_token_model the dynamic program also holds a model compiled for one token
a call, which runs decode; resident memory shows what that costs: the growth of a
fresh process's resident set over a load, a 64-token prefill and 4 decode steps,
over the size of the weights in the program; and the seconds a fresh process takes to
load each program through a model cache (`cache_dir`) that a first load filled.

`--dim 1024` (32 heads, 8 KV heads) shows the ratio on a wider model: OpenVINO's
dynamic-shape path costs a few microseconds per node and call, which weighs most on
a narrow model, and its matrix multiplications run somewhat slower as well.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

torch.set_num_threads(1)

import executorch_openvino  # noqa: E402,F401 - registers the delegate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for common
from common.bench import (  # noqa: E402
    delegate_ids,
    environment,
    growth_in_fresh_process,
    lower,
    print_header,
    print_table,
    round_order,
    setup_logging,
)
from common.example_models import small_llama  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402

STATIC, DYNAMIC, ONE_TOKEN = "static", "dynamic", "dynamic, one_token_model"
PROGRAMS = (STATIC, DYNAMIC, ONE_TOKEN)


def export(dim: int, layers: int, program: str, folder: Path) -> Path:
    torch.manual_seed(0)  # the same weights for every program
    dynamic = program != STATIC
    model = small_llama(enable_dynamic_shape=dynamic, layers=layers, dim=dim)
    tokens = torch.tensor([[1, 2, 3]] if dynamic else [[1]])
    shapes = ({1: torch.export.Dim("sequence", min=1, max=255)}, {"input_pos": None}) if dynamic else None
    partitioner = OpenvinoPartitioner(openvino_compile_specs(one_token_model=program == ONE_TOKEN))
    with torch.no_grad():
        manager = lower(model, (tokens, {"input_pos": torch.tensor([0])}), [partitioner], dynamic_shapes=shapes)
    path = folder / f"llama_{PROGRAMS.index(program)}.pte"
    path.write_bytes(manager.buffer)
    print(f"{program}: {len(delegate_ids(manager))} delegate(s)")
    return path


def weights_mb(model_dim: int, layers: int) -> float:
    torch.manual_seed(0)
    model = small_llama(enable_dynamic_shape=False, layers=layers, dim=model_dim)
    return sum(p.numel() * p.element_size() for p in model.parameters()) / 1e6


def resident_growth_mb(path: Path, dynamic: bool, prompt: int) -> tuple[float, float]:
    """(resident, anonymous) growth in MB of a fresh process over a load, a prefill and
    4 decode steps."""
    setup = (
        "import os, torch; os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE');"
        "import executorch_openvino; from executorch.runtime import Runtime"
    )
    work = (
        "m = Runtime.get().load_program(%r).load_method('forward');"
        "calls = [(list(range(1, %d + 1)), 0)] if %r else [([t + 1], t) for t in range(%d)];"
        "[m.execute([torch.tensor([tokens]), torch.tensor([start])]) for tokens, start in calls];"
        "[m.execute([torch.tensor([[5]]), torch.tensor([%d + step])]) for step in range(4)]"
        % (str(path), prompt, dynamic, prompt, prompt)
    )
    resident, anonymous, _ = growth_in_fresh_process(setup, work)
    return resident, anonymous


def cached_load_seconds(path: Path, cache: Path, loads: int = 3) -> float:
    """Seconds a fresh process takes to load the program through a model cache that a
    first load filled: the median of `loads` such processes."""
    code = (
        "import sys, time, executorch_openvino; from executorch.runtime import Runtime;"
        "executorch_openvino.set_load_options(cache_dir=sys.argv[2]); start=time.perf_counter();"
        "Runtime.get().load_program(sys.argv[1]).load_method('forward'); print(time.perf_counter() - start)"
    )
    seconds = []
    for _ in range(loads + 1):  # the first load fills the cache
        command = [sys.executable, "-c", code, str(path), str(cache)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        seconds.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(seconds[1:])


class Session:
    """One loaded method and the position its KV cache is filled to."""

    def __init__(self, path: Path, dynamic: bool) -> None:
        self.method = Runtime.get().load_program(path).load_method("forward")
        self.dynamic, self.position = dynamic, 0

    def call(self, tokens: torch.Tensor) -> int:
        logits = self.method.execute([tokens, torch.tensor([self.position])])[0]
        self.position += tokens.shape[1]
        return int(logits.reshape(-1, logits.shape[-1])[-1].argmax())

    def prefill(self, prompt: torch.Tensor) -> int:
        self.position = 0  # a new sequence
        if self.dynamic:
            return self.call(prompt)
        for index in range(prompt.shape[1]):
            token = self.call(prompt[:, index : index + 1])
        return token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=288, help="model width (288: stories15M)")
    parser.add_argument("--tokens", type=int, default=12, help="decode steps per round and program")
    parser.add_argument("--prompt", type=int, default=64, help="prompt tokens for the prefill timing")
    options = parser.parse_args()
    setup_logging()
    folder = Path(tempfile.mkdtemp(prefix="llm_dynamic_"))
    paths = {program: export(options.dim, options.layers, program, folder) for program in PROGRAMS}
    prompt = torch.randint(0, 32000, (1, options.prompt), generator=torch.Generator().manual_seed(1))
    decode, first_step, prefill = ({program: [] for program in PROGRAMS} for _ in range(3))
    sessions = {program: Session(paths[program], program != STATIC) for program in PROGRAMS}
    for round_index in range(options.rounds + 1):
        # Each program goes first, middle and last equally often.
        order = PROGRAMS[round_index % 3 :] + PROGRAMS[: round_index % 3]
        for program in round_order(order, round_index):
            session = sessions[program]
            start = time.perf_counter()
            token = session.prefill(prompt)
            prefill[program].append(time.perf_counter() - start)
            steps = []
            for _ in range(options.tokens):
                start = time.perf_counter()
                token = session.call(torch.tensor([[token]]))
                steps.append(time.perf_counter() - start)
            if round_index > 0:  # the first round prepares OpenVINO's kernels
                first_step[program].append(steps[0])
                decode[program].append(statistics.median(steps[1:]))
    weights = weights_mb(options.dim, options.layers)
    growth = {program: resident_growth_mb(paths[program], program != STATIC, options.prompt) for program in PROGRAMS}
    cached_load = {program: cached_load_seconds(paths[program], folder / f"cache_{program}") for program in PROGRAMS}

    def ratio(times: dict, program: str) -> float:
        return statistics.median(p / s for p, s in zip(times[program], times[STATIC]))

    print_header(
        f"Llama dim {options.dim}, {options.layers} layers, f32: dynamic against static export "
        f"({options.rounds} alternating rounds, medians; ratios are medians of per-round ratios)",
        environment(),
    )
    rows = []
    for label, times in (
        (f"decode ms/token (positions {options.prompt + 1}-{options.prompt + options.tokens - 1})", decode),
        (f"first decode step after the prompt, ms (position {options.prompt})", first_step),
        (f"prefill ms for {options.prompt} tokens", prefill),
    ):
        rows.append(
            [label]
            + [1e3 * statistics.median(times[program]) for program in PROGRAMS]
            + [ratio(times, DYNAMIC), ratio(times, ONE_TOKEN)]
        )
    for label, part in (("resident", 0), ("anonymous", 1)):
        rows.append(
            [f"{label} growth / weights ({weights:.0f} MB)"]
            + [growth[program][part] / weights for program in PROGRAMS]
            + [growth[DYNAMIC][part] / growth[STATIC][part], growth[ONE_TOKEN][part] / growth[STATIC][part]]
        )
    rows.append(
        ["load through a filled cache_dir, s"]
        + [cached_load[program] for program in PROGRAMS]
        + [cached_load[DYNAMIC] / cached_load[STATIC], cached_load[ONE_TOKEN] / cached_load[STATIC]]
    )
    print_table(["", *PROGRAMS, "dynamic/static", "one_token_model/static"], rows)
    for program in (DYNAMIC, ONE_TOKEN):
        rounds = sorted(d / s for d, s in zip(decode[program], decode[STATIC]))
        print(f"\ndecode {program}/static by round: {' '.join(f'{r:.2f}' for r in rounds)}")
    for program in (DYNAMIC, ONE_TOKEN):
        met = ratio(decode, program) <= 1.10
        print(f"target: {program} decode <= 1.10x static: {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
