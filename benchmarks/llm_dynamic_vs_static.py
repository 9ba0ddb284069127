"""Decode and prefill of the wheel's Llama exported with a dynamic sequence length,
against the same weights exported with static shapes (one token per call), in one
process and alternating rounds.

    python benchmarks/llm_dynamic_vs_static.py [--rounds 8] [--layers 6] [--dim 288]

Decode: each round loads each program, prefills the same prompt and runs `--tokens`
greedy steps at the same positions. A step's time is the median of its steps after
the first. The first step after the prompt is shown on its own: in the dynamic
program it is the first call of that shape, and OpenVINO prepares its kernels for it
then (once per loaded program: later generations find them prepared). Prefill: the
dynamic program takes the prompt in one call; the static program takes it one token
per call, its only way. The target: dynamic decode within 1.10x of static decode.

`--dim 1024` (32 heads, 8 KV heads) shows the ratio on a wider model: OpenVINO's
dynamic-shape path costs a few microseconds per node and call, which weighs most on
a narrow model, and its matrix multiplications run somewhat slower as well.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

torch.set_num_threads(1)

import executorch_openvino  # noqa: E402,F401 - registers the delegate
from _common import delegate_ids, environment, lower, print_header, print_table, setup_logging  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import OpenvinoPartitioner  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from models import small_llama  # noqa: E402


def export(dim: int, layers: int, dynamic: bool, folder: Path) -> Path:
    torch.manual_seed(0)  # the same weights for both programs
    model = small_llama(enable_dynamic_shape=dynamic, layers=layers, dim=dim)
    tokens = torch.tensor([[1, 2, 3]] if dynamic else [[1]])
    shapes = ({1: torch.export.Dim("sequence", min=1, max=255)}, {"input_pos": None}) if dynamic else None
    with torch.no_grad():
        manager = lower(
            model, (tokens, {"input_pos": torch.tensor([0])}), [OpenvinoPartitioner()], dynamic_shapes=shapes
        )
    path = folder / f"llama_{'dynamic' if dynamic else 'static'}.pte"
    path.write_bytes(manager.buffer)
    print(f"{path.name}: {len(delegate_ids(manager))} delegate(s)")
    return path


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
    paths = {dynamic: export(options.dim, options.layers, dynamic, folder) for dynamic in (False, True)}
    prompt = torch.randint(0, 32000, (1, options.prompt), generator=torch.Generator().manual_seed(1))
    decode = {False: [], True: []}
    first_step = {False: [], True: []}
    prefill = {False: [], True: []}
    for round_index in range(options.rounds):
        order = (False, True) if round_index % 2 == 0 else (True, False)
        for dynamic in order:
            session = Session(paths[dynamic], dynamic)
            start = time.perf_counter()
            token = session.prefill(prompt)
            prefill[dynamic].append(time.perf_counter() - start)
            steps = []
            for _ in range(options.tokens):
                start = time.perf_counter()
                token = session.call(torch.tensor([[token]]))
                steps.append(time.perf_counter() - start)
            first_step[dynamic].append(steps[0])
            decode[dynamic].append(statistics.median(steps[1:]))
    decode_ratio, first_ratio, prefill_ratio = (
        statistics.median(d / s for d, s in zip(times[True], times[False])) for times in (decode, first_step, prefill)
    )
    print_header(
        f"Llama dim {options.dim}, {options.layers} layers, f32: dynamic against static export "
        f"({options.rounds} alternating rounds, medians)",
        environment(),
    )
    print_table(
        ["", "static", "dynamic", "dynamic/static"],
        [
            [
                f"decode ms/token (positions {options.prompt + 1}-{options.prompt + options.tokens - 1})",
                1e3 * statistics.median(decode[False]),
                1e3 * statistics.median(decode[True]),
                decode_ratio,
            ],
            [
                f"first decode step after the prompt, ms (position {options.prompt})",
                1e3 * statistics.median(first_step[False]),
                1e3 * statistics.median(first_step[True]),
                first_ratio,
            ],
            [
                f"prefill ms for {options.prompt} tokens",
                1e3 * statistics.median(prefill[False]),
                1e3 * statistics.median(prefill[True]),
                prefill_ratio,
            ],
        ],
    )
    rounds = sorted(d / s for d, s in zip(decode[True], decode[False]))
    print(f"\ndecode dynamic/static by round (the ratio above is their median): {' '.join(f'{r:.2f}' for r in rounds)}")
    print(f"target: dynamic decode <= 1.10x static: {'met' if decode_ratio <= 1.10 else 'MISSED'}")


if __name__ == "__main__":
    main()
