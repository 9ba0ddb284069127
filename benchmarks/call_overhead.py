"""Per-call cost of ExecuTorch and our delegate over OpenVINO alone, measured from C++.

benchmarks/cpp/call_overhead.cpp loads a .pte as a C++ application would and, in the
same process, compiles the delegate's IR with OpenVINO alone; it then times
Method::execute() against InferRequest::infer() in alternating rounds. No Python layer
is timed on either side, so the difference is what ExecuTorch's method and our
delegate add per call. compare.py runs it on the .pte files it writes; on its own:

    python benchmarks/call_overhead.py program.pte [--precision bf16] [--rounds 10] [--round-ms 300]

A decoder step with its KV cache kept as state (export_encoder_decoder's
``text_decoder``, say) is timed step by step instead: each round one sequence,
positions 0..START-1 untimed, then ``--steps`` positions each timed, the token id
changing each step (see call_overhead.cpp). ``--python`` then times the same steps from
Python in this process, alternating rounds: the method through ``executorch.runtime``
(``Method.execute``, its token and position tensors made before the timer) against
OpenVINO's Python API on the same delegate IR (inputs bound once, ``infer()`` timed,
``reset_state()`` untimed at position 0):

    python benchmarks/call_overhead.py whisper.pte --method text_decoder --steps 32 [--start 4] [--python]

The runner is built (CMake, ETOV_BUILD_TESTS) into benchmarks/results/build on first use.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import argparse  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List, Sequence  # noqa: E402

from common.cpp_runner import build_runner, measure  # noqa: E402

logger = logging.getLogger("benchmarks.call_overhead")
#: ExecuTorch's ScalarType code of int64, as TensorInfo.dtype() gives it.
SCALAR_TYPE_LONG = 4


def token_at(position: int) -> int:
    """The token id fed at `position`: the runner's rule (token_at in call_overhead.cpp)."""
    return (3 + 7 * position) % 64


def method_ir(pte: Path, method: str):
    """The OpenVINO model in `method`'s one delegate of ours, as the blob carries it."""
    import numpy as np
    import openvino as ov
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch_openvino import BACKEND_ID
    from executorch_openvino.serialization.blob import read_blob

    program = deserialize_pte_binary(pte.read_bytes()).program
    plans = [plan for plan in program.execution_plan if plan.name == method]
    if not plans:
        raise ValueError(f"{pte} has no method {method!r}")
    delegates = [delegate for delegate in plans[0].delegates if delegate.id == BACKEND_ID]
    if len(delegates) != 1:
        raise ValueError(f"{method}: {len(delegates)} delegates of ours; OpenVINO alone needs the method in one")
    blob = read_blob(bytes(program.backend_delegate_data[delegates[0].processed.index].data))
    if blob.has_named_weights:
        raise ValueError(f"{method}: its IR reads weights from the program's named data; only the C++ runner puts them")
    return ov.Core().read_model(blob.ir_xml.decode(), ov.Tensor(np.frombuffer(blob.ir_weights, np.uint8).copy()))


class PythonSteps:
    """The method's decoder steps from Python: through executorch.runtime, and through
    OpenVINO's Python API on the same IR, with the same inputs."""

    def __init__(self, pte: Path, method: str, precision: str) -> None:
        import numpy as np
        import openvino as ov
        import torch
        from executorch.runtime import Runtime
        from executorch_openvino import openvino_compile_specs
        from executorch_openvino.compile_specs import parse_compile_specs, with_defaults

        self.method = Runtime.get().load_program(pte).load_method(method)
        meta = self.method.metadata
        infos = [meta.input_tensor_meta(j) for j in range(meta.num_inputs())]
        generator = torch.Generator().manual_seed(0)
        self.inputs = [
            torch.zeros(info.sizes(), dtype=torch.long)
            if info.dtype() == SCALAR_TYPE_LONG
            else torch.randn(info.sizes(), generator=generator)
            for info in infos
        ]
        self.token = next(j for j, x in enumerate(self.inputs) if x.dtype == torch.long and x.dim() == 2)
        self.position = next(j for j, x in enumerate(self.inputs) if x.dtype == torch.long and x.dim() == 1)
        model = method_ir(pte, method)
        config = parse_compile_specs(with_defaults(openvino_compile_specs(inference_precision=precision)))
        self.request = ov.Core().compile_model(model, "CPU", config.compile_config()).create_infer_request()
        # The IR's inputs by the method's: the first not yet taken of the same dtype and shape.
        self.bound: Dict[int, np.ndarray] = {}
        for k, port in enumerate(self.request.model_inputs):
            same = [
                j
                for j, x in enumerate(self.inputs)
                if j not in self.bound
                and tuple(port.get_shape()) == tuple(x.shape)
                and (x.dtype == torch.long) == (port.get_element_type() == ov.Type.i64)
            ]
            self.bound[same[0]] = self.inputs[same[0]].numpy().copy()
            self.request.set_input_tensor(k, ov.Tensor(self.bound[same[0]], shared_memory=True))

    def executorch_step(self, position: int) -> float:
        """One step through Method.execute; its milliseconds."""
        import torch

        inputs = list(self.inputs)
        inputs[self.token] = torch.tensor([[token_at(position)]])
        inputs[self.position] = torch.tensor([position])
        begin = time.perf_counter_ns()
        self.logits = self.method.execute(inputs)[0]
        return (time.perf_counter_ns() - begin) / 1e6

    def openvino_step(self, position: int) -> float:
        """One step through InferRequest.infer, inputs bound once; its milliseconds."""
        if position == 0:
            self.request.reset_state()
        self.bound[self.token][...] = token_at(position)
        self.bound[self.position][...] = position
        begin = time.perf_counter_ns()
        self.request.infer()
        return (time.perf_counter_ns() - begin) / 1e6


def time_python_steps(steps: PythonSteps, rounds: int, start: int, count: int) -> Dict[str, List[float]]:
    """Per engine, the median step of each round (one sequence a round), alternating."""
    from common.bench import round_order

    engines = {"ours, Python": steps.executorch_step, "OpenVINO alone, Python": steps.openvino_step}
    medians: Dict[str, List[float]] = {name: [] for name in engines}
    for round_index in range(-1, rounds):  # round -1: one untimed sequence each
        for name in round_order(list(engines), max(round_index, 0)):
            times = [engines[name](position) for position in range(start + count)]
            if round_index >= 0:
                medians[name].append(statistics.median(times[start:]))
    return medians


def max_rel_diff(actual, expected) -> float:
    import numpy as np

    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))


def print_round_medians(name: str, round_medians_ms: Sequence[float]) -> None:
    print(
        f"  {name}: {statistics.median(round_medians_ms):.3f} ms a step (median of round medians; rounds "
        f"{min(round_medians_ms):.3f}-{max(round_medians_ms):.3f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path)
    parser.add_argument("--precision", default="f32", choices=["f32", "bf16", "f16"])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--round-ms", type=float, default=300)
    parser.add_argument("--method", default="forward")
    parser.add_argument("--steps", type=int, default=0, help="time decoder steps, this many a round (0: calls)")
    parser.add_argument("--start", type=int, default=4, help="untimed positions before the timed steps")
    parser.add_argument("--python", action="store_true", help="with --steps: also time them from Python")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    runner = build_runner()
    if isinstance(runner, str):
        logger.error("cannot build the runner: %s", runner)
        return 1
    figures = measure(
        runner, args.program, args.precision, args.rounds, args.round_ms, args.method, args.steps, args.start
    )
    ours, alone = figures["ours"]["median_us"], figures["openvino"]["median_us"]
    what = f"{args.method}, {args.steps} steps from position {args.start}" if args.steps else args.method
    print(
        f"{args.program} {what} at {args.precision}: ExecuTorch + delegate {ours:.2f} us, OpenVINO alone "
        f"{alone:.2f} us, ratio {ours / alone:.4f}, extra {ours - alone:+.2f} us per call; outputs differ by at "
        f"most {figures['max_rel_diff']:.2g} (relative)"
    )
    if args.steps:
        for engine, name in (("ours", "ours, C++"), ("openvino", "OpenVINO alone, C++")):
            print_round_medians(name, [us / 1e3 for us in figures[engine]["round_medians_us"]])
    if args.python and args.steps:
        steps = PythonSteps(args.program, args.method, args.precision)
        medians = time_python_steps(steps, args.rounds, args.start, args.steps)
        for name, values in medians.items():
            print_round_medians(name, values)
        ratio = statistics.median(medians["ours, Python"]) / statistics.median(medians["OpenVINO alone, Python"])
        difference = max_rel_diff(steps.logits.numpy(), steps.request.get_output_tensor(0).data)
        print(f"  Python: ours / OpenVINO alone {ratio:.4f}; last logits differ by at most {difference:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
