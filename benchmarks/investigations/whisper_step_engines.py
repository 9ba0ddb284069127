"""A Whisper decoder step, one table: ours and OpenVINO alone from C++, from Python, and
OpenVINO GenAI's WhisperPipeline.

Where does the rest of ours' f32 decoder step over GenAI's come from: ExecuTorch's
method and our delegate, ExecuTorch's Python binding, or OpenVINO itself? For one
``text_decoder`` method of a .pte that ``benchmarks/seq2seq.py`` wrote (``--keep``), and
GenAI's model folder beside it:

1. the C++ runner (``benchmarks/call_overhead.py --steps``, call_overhead.cpp): ours'
   ``Method::execute`` against ``InferRequest::infer`` on the same IR, in one process;
2. in this process, alternating rounds of one sequence each (positions 0..START-1
   untimed, then ``--steps`` timed): ours through ``executorch.runtime``, OpenVINO
   alone through its Python API (inputs bound once, ``infer()`` timed), the same with
   ``start_async()`` + ``wait()`` timed (as GenAI runs its steps), and GenAI's
   ``WhisperPipeline`` (seq2seq.py's engine: its own ``decode_inference_durations``
   after the prompt's call, on the same weights);
3. the C++ runner again.
Each Python round's others' load is recorded (``common.bench.OthersLoad``).

    python benchmarks/investigations/whisper_step_engines.py KEEP/whisper-base_ours_f32.pte \\
        KEEP/whisper-base_genai [--precision f32] [--rounds 9] [--steps 32]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Dict, List  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from call_overhead import PythonSteps, token_at  # noqa: E402
from common.bench import OthersLoad, round_order  # noqa: E402
from common.cpp_runner import build_runner, measure  # noqa: E402
from seq2seq import GenaiEngine, synthesized_audio  # noqa: E402

METHOD = "text_decoder"


def run_cpp(runner: Path, options: argparse.Namespace, label: str) -> None:
    """The C++ runner's figures, with the others' load while it ran (its own CPU time left out)."""
    others = OthersLoad()
    begin, children = time.perf_counter(), os.times()
    figures = measure(runner, options.pte, options.precision, options.rounds, 300, METHOD, options.steps, options.start)
    wall, after = time.perf_counter() - begin, os.times()
    child = (after.children_user + after.children_system - children.children_user - children.children_system) / (
        wall * (os.cpu_count() or 1)
    )
    ours, alone = figures["ours"], figures["openvino"]
    print(
        f"C++ runner ({label}): ours {ours['median_us'] / 1e3:.3f} ms, OpenVINO alone {alone['median_us'] / 1e3:.3f} "
        f"ms, ratio {ours['median_us'] / alone['median_us']:.4f}; logits differ by {figures['max_rel_diff']:.2g}; "
        f"others' load {max(0.0, others.since_last() - child):.0%}"
    )
    print(f"  rounds: ours {[round(us / 1e3, 2) for us in ours['round_medians_us']]}")
    print(f"          alone {[round(us / 1e3, 2) for us in alone['round_medians_us']]}", flush=True)


def python_engines(options: argparse.Namespace) -> Dict[str, Callable[[], float]]:
    """Each engine's round: one sequence, the median of its timed steps in milliseconds."""
    steps = PythonSteps(options.pte, METHOD, options.precision)
    asynchronous = PythonSteps(options.pte, METHOD, options.precision)  # its own infer request and state

    def started_and_waited(position: int) -> float:
        if position == 0:
            asynchronous.request.reset_state()
        asynchronous.bound[asynchronous.token][...] = token_at(position)
        asynchronous.bound[asynchronous.position][...] = position
        begin = time.perf_counter_ns()
        asynchronous.request.start_async()
        asynchronous.request.wait()
        return (time.perf_counter_ns() - begin) / 1e6

    def sequence(step: Callable[[int], float]) -> Callable[[], float]:
        return lambda: statistics.median([step(p) for p in range(options.start + options.steps)][options.start :])

    genai = GenaiEngine(options.genai, {"INFERENCE_PRECISION_HINT": "f32"} if options.precision == "f32" else {})
    audio = synthesized_audio().tolist()

    def genai_round() -> float:
        _, decoder_ms, _, _ = genai.generate(audio, options.steps)
        return statistics.median(decoder_ms[1:])  # the first call takes the prompt

    return {
        "ours, Python": sequence(steps.executorch_step),
        "OpenVINO alone, Python, infer()": sequence(steps.openvino_step),
        "OpenVINO alone, Python, start_async()+wait()": sequence(started_and_waited),
        "GenAI f32" if options.precision == "f32" else "GenAI (default)": genai_round,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pte", type=Path)
    parser.add_argument("genai", type=Path, help="GenAI's model folder (seq2seq.py --keep: NAME_genai)")
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16"])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--start", type=int, default=4)
    options = parser.parse_args()
    torch.set_num_threads(1)
    runner = build_runner()
    if isinstance(runner, str):
        print(f"cannot build the runner: {runner}")
        return 1
    run_cpp(runner, options, "before")
    engines = python_engines(options)
    for engine in engines.values():
        engine()  # warm-up
    medians: Dict[str, List[float]] = {name: [] for name in engines}
    loads: Dict[str, List[float]] = {name: [] for name in engines}
    others = OthersLoad()
    for round_index in range(options.rounds):
        for name in round_order(list(engines), round_index):
            others.since_last()
            medians[name].append(engines[name]())
            loads[name].append(others.since_last())
    for name, values in medians.items():
        print(
            f"{name}: {statistics.median(values):.3f} ms a step (rounds {min(values):.2f}-{max(values):.2f}); "
            f"others' load {statistics.median(loads[name]):.0%}"
        )
    del engines
    run_cpp(runner, options, "after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
