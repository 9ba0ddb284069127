"""What the delegate costs over OpenVINO itself, side by side with eager PyTorch and XNNPACK.

Models (examples/models.py):
  mlp          Mlp(width=1024, layers=4), input 64 x 1024
  cnn          SmallCnn(), one 1 x 3 x 224 x 224 image
  transformer  TransformerBlock() (dim 64, 4 heads), input 1 x 128 x 64 (sequence length 128)
  tiny         Tiny(): x + y on two 1 x 16 tensors, where the fixed cost of a call dominates
Engines:
  eager          the PyTorch module under torch.inference_mode(), torch's default threads
  xnnpack        a .pte lowered with XnnpackPartitioner, run with executorch.runtime
  ours-f32/bf16  a .pte lowered with OpenvinoPartitioner(openvino_compile_specs(
                 inference_precision=...)), run with executorch.runtime
  ours-f32-exec  the ours-f32 program through ExecuTorch's binding under executorch.runtime:
                 inputs copied in once with set_inputs, each call execute() alone, so the
                 input copy and output wrapping of executorch.runtime are not timed
  openvino-f32/bf16
                 OpenVINO alone: to_openvino_model(to_edge(torch.export.export(...)).exported_program()),
                 compiled with the configuration our runtime uses at that precision
                 (OpenvinoOptions.compile_config(): INFERENCE_PRECISION_HINT, PERFORMANCE_HINT=LATENCY),
                 inputs and outputs preallocated and bound once with set_input_tensor /
                 set_output_tensor, each call request.infer(share_outputs=True)
  et-portable    (tiny only) a .pte with no delegate, on ExecuTorch's portable kernels: the
                 floor of one call through executorch.runtime from Python
After the Python engines, benchmarks/call_overhead.py times each ours-f32 and ours-bf16 .pte
from C++ against OpenVINO alone on the same IR, in one process: the delegate's own cost,
with no Python layer on either side (--no-cpp skips it; the C++ runner is built on first use).

Every configuration (model x engine) runs in its own process: the script starts itself with
`--child MODEL ENGINE`. For one model, the parent starts the children one after the other;
each prepares (lowers or converts, loads once) and reports one JSON line, then waits on its
stdin. The parent then runs ROUNDS rounds: in each it asks every child in turn (the order
rotates from round to round) to time its loads once and its calls for BUDGET_S / ROUNDS
seconds, while the other children sleep on their stdin. So the engines never run at the same
time, and noise from the rest of the machine spreads over all of them rather than falling on
one. The parent pools the rounds, prints the tables and writes benchmarks/results/compare.json
(child logs and .pte files in benchmarks/results/compare/).

Threads: every child except eager sets OMP_WAIT_POLICY=PASSIVE before importing torch and
calls torch.set_num_threads(1) (torch then only converts inputs and outputs, see bench.py);
XNNPACK runs on ExecuTorch's own threadpool and OpenVINO on its own threads, whose counts are
reported. The eager child leaves both at torch's defaults.

Per call: a warm-up (at least WARMUP_CALLS calls and WARMUP_S seconds in the first round, a
shorter one in later rounds), then as many calls as fit in the round's budget, each timed with
time.perf_counter_ns; the table gives the median, p10 and p90 of all rounds' calls.
Per model also: lowering time (export + lower + to_executorch + serialization, measured after
one untimed lowering of the tiny model in the same process, so that one-off initialization is
not counted), .pte size, and load time, LOADS_PER_ROUND loads per round after an untimed one in
the preparation: Runtime.load_program + load_method for the .pte files, compile_model +
create_infer_request of the same openvino.Model for OpenVINO alone, and the same from the
model's IR files on disk (compile_model(path), which reads and parses the model as our runtime
reads the .pte); then the same with the model cache (our cache_dir load option, OpenVINO's CACHE_DIR), in a
fresh folder whose first load, in the preparation, writes the cache.

Run: python benchmarks/compare.py            (about 7 minutes on 2 cores)
     python benchmarks/compare.py --quick    (shorter budget, 2 rounds: a smoke run, noisier figures)
     python benchmarks/compare.py --models tiny mlp --engines ours-f32 openvino-f32
"""

from __future__ import annotations

import os
import sys


def _child_engine(argv: list) -> str | None:
    if "--child" in argv:
        index = argv.index("--child")
        if index + 2 < len(argv):
            return argv[index + 2]
    return None


if _child_engine(sys.argv) not in (None, "eager"):
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"  # before torch is imported: see bench.py

import torch  # noqa: E402

if _child_engine(sys.argv) != "eager":
    torch.set_num_threads(1)

import argparse  # noqa: E402
import atexit  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: E402

from common import bench  # noqa: E402
from common.small_models import MODELS, build  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
RESULTS = RESULTS_DIR / "compare.json"
WORK_DIR = RESULTS_DIR / "compare"
logger = logging.getLogger("benchmarks.compare")

# Each of ours right before the OpenVINO run it is compared with, so that in every round
# (the order rotates) the two run within a fraction of a second of each other.
ENGINES = ("eager", "xnnpack", "ours-f32", "openvino-f32", "ours-f32-exec", "ours-bf16", "openvino-bf16", "et-portable")
ONLY_FOR = {"et-portable": ("tiny",)}  # portable kernels are a floor for the tiny model, slow elsewhere
PTE_ENGINES = ("xnnpack", "et-portable", "ours-f32", "ours-bf16", "ours-f32-exec")
# Many short rounds: this shared machine has slow phases of a few seconds, which short
# rounds spread over all engines instead of landing on one engine's whole round.
BUDGET_S, ROUNDS, LOADS_PER_ROUND = 3.0, 30, 1  # per configuration: seconds of timed calls over all rounds
QUICK_BUDGET_S, QUICK_ROUNDS, QUICK_LOADS_PER_ROUND = 0.4, 2, 1
WARMUP_CALLS, WARMUP_S = 20, 0.3  # first round
ROUND_WARMUP_CALLS, ROUND_WARMUP_S = 5, 0.05  # later rounds
MIN_CALLS_PER_ROUND, MAX_CALLS_PER_ROUND = 10, 10000
CHILD_TIMEOUT_S = 600


def precision_of(engine: str) -> str:
    return engine.split("-")[1]


# ---------------------------------------------------------------------------- child


@dataclass
class Prepared:
    """One configuration, ready to be timed: a call, its output, and the loads to time."""

    call: Callable[[], Any]
    output: Callable[[], torch.Tensor]  # one call whose first output is returned as a torch tensor
    loads: Dict[str, Callable[[], float]] = field(default_factory=dict)  # kind -> one timed load, ms
    keep: Any = None  # what must stay alive while `call` runs


def timed_load(load: Callable[[], Any]) -> Callable[[], float]:
    """A function that runs `load` once and returns its time in ms; the handle is dropped after timing."""

    def run() -> float:
        start = time.perf_counter_ns()
        handle = load()
        elapsed = (time.perf_counter_ns() - start) / 1e6
        del handle
        return elapsed

    return run


def cache_files(folder: str) -> int:
    return sum(1 for path in Path(folder).rglob("*") if path.is_file())


def partitioners_for(engine: str) -> List[Any]:
    if engine == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        return [XnnpackPartitioner()]
    if engine == "et-portable":
        return []
    from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs

    return [OpenvinoPartitioner(openvino_compile_specs(inference_precision=precision_of(engine)))]


def expected_backend(engine: str) -> Optional[str]:
    if engine == "xnnpack":
        return "XnnpackBackend"
    if engine.startswith("ours"):
        from executorch_openvino import BACKEND_ID

        return BACKEND_ID
    return None


def prepare_pte(
    model_name: str,
    engine: str,
    module: torch.nn.Module,
    inputs: Tuple[torch.Tensor, ...],
    info: Dict[str, Any],
    cache_dir: str,
) -> Prepared:
    """Lowers (timed), writes and loads a .pte."""
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    tiny, tiny_inputs = build("tiny")
    bench.lower(tiny, tiny_inputs, partitioners_for(engine))  # one-off initialization, untimed
    start = time.perf_counter()
    manager = bench.lower(module, inputs, partitioners_for(engine))
    info["lowering_s"] = time.perf_counter() - start
    delegates, cpu_ops = bench.delegate_ids(manager), bench.cpu_ops(manager)
    backend = expected_backend(engine)
    if backend is not None and backend not in delegates:
        raise RuntimeError(f"nothing of {model_name} was delegated to {backend}")
    if backend is not None and cpu_ops:
        logger.warning("%s %s: ops left to ExecuTorch's CPU kernels: %s", model_name, engine, cpu_ops)
    path = WORK_DIR / f"{model_name}_{engine}.pte"
    path.write_bytes(manager.buffer)
    del manager
    info.update(
        pte_bytes=path.stat().st_size,
        delegates=delegates,
        cpu_ops=cpu_ops,
        executorch_threadpool_threads=portable_lib._threadpool_get_thread_count(),
    )
    logger.info("%s %s: lowered in %.2f s, %d bytes", model_name, engine, info["lowering_s"], info["pte_bytes"])

    runtime = Runtime.get()

    def load() -> Any:
        program = runtime.load_program(path)
        return program, program.load_method("forward")

    program, method = load()
    args = list(inputs)
    if engine == "ours-f32-exec":
        # ExecuTorch's own binding below executorch.runtime: inputs copied in once, each
        # call only executes (the loads are timed by ours-f32).
        bound = method._method
        bound.set_inputs(args)

        def output() -> torch.Tensor:
            bound.execute()
            return bound.get_outputs(clone_outputs=True)[0]

        return Prepared(call=bound.execute, output=output, keep=(program, method))

    loads = {"load": timed_load(load)}
    if engine.startswith("ours"):
        import executorch_openvino

        def cached_load() -> float:
            executorch_openvino.set_load_options(cache_dir=cache_dir)
            try:
                return timed_load(load)()
            finally:
                executorch_openvino.set_load_options(cache_dir="")

        loads["cached_load"] = cached_load

    return Prepared(
        call=lambda: method.execute(args), output=lambda: method.execute(args)[0], loads=loads, keep=(program, method)
    )


def prepare_openvino(
    model_name: str,
    engine: str,
    module: torch.nn.Module,
    inputs: Tuple[torch.Tensor, ...],
    info: Dict[str, Any],
    cache_dir: str,
) -> Prepared:
    """Converts with our conversion (timed), compiles with OpenVINO alone and binds everything once."""
    import openvino as ov
    from executorch.exir import to_edge
    from executorch_openvino import openvino_compile_specs, parse_compile_specs
    from executorch_openvino.conversion import to_openvino_model

    def convert(module: torch.nn.Module, inputs: Tuple[torch.Tensor, ...]) -> ov.Model:
        return to_openvino_model(to_edge(torch.export.export(module, inputs)).exported_program())

    convert(*build("tiny"))  # one-off initialization, untimed
    start = time.perf_counter()
    model = convert(module, inputs)
    info["convert_s"] = time.perf_counter() - start

    config = parse_compile_specs(openvino_compile_specs(inference_precision=precision_of(engine))).compile_config()
    config.pop("CACHE_DIR", None)
    info["openvino_config"] = {key: str(value) for key, value in config.items()}
    core = ov.Core()

    def load(config: Dict[str, Any] = config) -> Any:
        compiled = core.compile_model(model, "CPU", config)
        return compiled, compiled.create_infer_request()

    # The same model as IR files on disk, as an OpenVINO application would deploy it:
    # compile_model from the path reads and parses them, as our runtime reads the .pte.
    ir_path = WORK_DIR / f"{model_name}_{engine}_ir" / "model.xml"
    ir_path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(ir_path), compress_to_fp16=False)

    def ir_file_load(config: Dict[str, Any] = config) -> Any:
        compiled = core.compile_model(str(ir_path), "CPU", config)
        return compiled, compiled.create_infer_request()

    ir_cache_dir = tempfile.mkdtemp(prefix="compare_ir_cache_")
    atexit.register(shutil.rmtree, ir_cache_dir, ignore_errors=True)
    loads = {
        "load": timed_load(load),
        "ir_file_load": timed_load(ir_file_load),
        "cached_load": timed_load(lambda: load({**config, "CACHE_DIR": cache_dir})),
        "ir_file_cached_load": timed_load(lambda: ir_file_load({**config, "CACHE_DIR": ir_cache_dir})),
    }

    compiled, request = load()
    info["openvino_properties"] = {}
    for name in ("INFERENCE_PRECISION_HINT", "PERFORMANCE_HINT", "NUM_STREAMS", "INFERENCE_NUM_THREADS"):
        value = compiled.get_property(name)
        info["openvino_properties"][name] = value.get_type_name() if isinstance(value, ov.Type) else str(value)
    arrays = [x.numpy() for x in inputs]  # share the torch tensors' memory
    for index, array in enumerate(arrays):
        request.set_input_tensor(index, ov.Tensor(array, shared_memory=True))
    outputs = [ov.Tensor(port.get_element_type(), port.get_shape()) for port in compiled.outputs]
    for index, tensor in enumerate(outputs):
        request.set_output_tensor(index, tensor)

    def output() -> torch.Tensor:
        request.infer(share_outputs=True)
        return torch.from_numpy(outputs[0].data.copy())

    return Prepared(
        call=lambda: request.infer(share_outputs=True),
        output=output,
        loads=loads,
        keep=(compiled, request, arrays, outputs),
    )


def prepare(model_name: str, engine: str, info: Dict[str, Any], cache_dir: str) -> Prepared:
    module, inputs = build(model_name)
    if engine == "eager":
        return Prepared(call=lambda: module(*inputs), output=lambda: module(*inputs))
    if engine in PTE_ENGINES:
        prepared = prepare_pte(model_name, engine, module, inputs, info, cache_dir)
    else:
        prepared = prepare_openvino(model_name, engine, module, inputs, info, cache_dir)
    # One untimed load of each kind: the first load of a process, and the one that writes the cache.
    for kind, load in prepared.loads.items():
        info[f"first_{kind}_ms"] = load()
    if "cached_load" in prepared.loads:
        info["cache_files"] = cache_files(cache_dir)
        if not info["cache_files"]:
            logger.warning("%s %s: the first load wrote nothing to the cache %s", model_name, engine, cache_dir)
    return prepared


def child(model_name: str, engine: str, budget_s: float, loads_per_round: int) -> int:
    """Prepares one configuration, then serves the parent's commands on stdin, one JSON line each.

    "round": `loads_per_round` loads of each kind, then calls for `budget_s` seconds;
    "done": checks the output once more and exits.
    """
    module, inputs = build(model_name)
    with torch.no_grad():
        expected = module(*inputs)
    info: Dict[str, Any] = {"model": model_name, "engine": engine, "environment": bench.environment()}
    cache_dir = tempfile.mkdtemp(prefix=f"compare_cache_{engine}_")
    # Eager runs under inference_mode from here on, so that the call itself does not enter it.
    with torch.inference_mode() if engine == "eager" else contextlib.nullcontext():
        try:
            prepared = prepare(model_name, engine, info, cache_dir)
            info["max_rel_err"] = bench.max_rel_err(prepared.output().clone(), expected)
            print(json.dumps({"ready": True, **info}), flush=True)
            rounds = 0
            while True:
                command = sys.stdin.readline().strip()
                if command == "round":
                    loads = {kind: [load() for _ in range(loads_per_round)] for kind, load in prepared.loads.items()}
                    first = rounds == 0
                    timing, warmup = bench.measure_for(
                        prepared.call,
                        budget_s,
                        min_warmup=WARMUP_CALLS if first else ROUND_WARMUP_CALLS,
                        warmup_s=WARMUP_S if first else ROUND_WARMUP_S,
                        min_calls=MIN_CALLS_PER_ROUND,
                        max_calls=MAX_CALLS_PER_ROUND,
                    )
                    rounds += 1
                    print(
                        json.dumps({"loads_ms": loads, "samples_ms": timing.samples_ms, "warmup": warmup}), flush=True
                    )
                elif command == "done" or not command:  # "" when the parent is gone
                    # The output after all the timed calls must still be right.
                    error = bench.max_rel_err(prepared.output().clone(), expected)
                    print(json.dumps({"max_rel_err_after_timing": error}), flush=True)
                    break
                else:
                    raise ValueError(f"unknown command {command!r}")
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    return 0


# ---------------------------------------------------------------------------- parent


class ChildFailed(RuntimeError):
    pass


class Child:
    """The parent's handle on one configuration's process."""

    def __init__(self, model_name: str, engine: str, args: argparse.Namespace):
        self.model_name, self.engine = model_name, engine
        self.log_path = WORK_DIR / f"{model_name}_{engine}.log"
        command = [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            model_name,
            engine,
            "--budget",
            str(args.budget / args.rounds),
            "--loads-per-round",
            str(args.loads_per_round),
        ]
        env = dict(os.environ)
        if engine == "eager":
            env.pop("OMP_WAIT_POLICY", None)  # torch's defaults for eager
        self.log = open(self.log_path, "w")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        self.result: Dict[str, Any] = {"model": model_name, "engine": engine}
        self.samples: List[float] = []
        self.round_medians: List[float] = []
        self.warmup = 0
        self.loads: Dict[str, List[float]] = {}

    def ask(self, command: Optional[str]) -> Dict[str, Any]:
        """Sends `command` (None: nothing) and returns the child's next JSON line."""
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait(timeout=CHILD_TIMEOUT_S)
                self.log.flush()
                tail = "\n".join(self.log_path.read_text().splitlines()[-15:])
                raise ChildFailed(f"exit {self.process.returncode}; end of {self.log_path}:\n{tail}")
            if line.startswith("{"):
                return json.loads(line)

    def fail(self, error: Exception) -> None:
        logger.error("%s %s failed: %s", self.model_name, self.engine, error)
        self.result["error"] = str(error)
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()

    @property
    def ok(self) -> bool:
        return "error" not in self.result


def run_model(model_name: str, engines: List[str], args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    children: List[Child] = []
    for engine in engines:
        child_ = Child(model_name, engine, args)
        children.append(child_)
        try:
            ready = child_.ask(None)
            ready.pop("ready", None)
            child_.result.update(ready)
            logger.info("%-11s %-13s ready after %.1f s", model_name, engine, time.perf_counter() - child_.started)
        except ChildFailed as error:
            child_.fail(error)

    for round_index in range(args.rounds):
        live = [c for c in children if c.ok]
        shift = round_index % len(live) if live else 0
        for child_ in live[shift:] + live[:shift]:
            try:
                reply = child_.ask("round")
            except ChildFailed as error:
                child_.fail(error)
                continue
            child_.samples += reply["samples_ms"]
            child_.round_medians.append(statistics.median(reply["samples_ms"]))
            child_.warmup += reply["warmup"]
            for kind, elapsed in reply["loads_ms"].items():
                child_.loads.setdefault(kind, []).extend(elapsed)
        logger.info(
            "%s round %d/%d: %s",
            model_name,
            round_index + 1,
            args.rounds,
            ", ".join(f"{c.engine} {c.round_medians[-1]:.4g}" for c in children if c.ok),
        )

    for child_ in children:
        if child_.ok:
            try:
                child_.result.update(child_.ask("done"))
            except ChildFailed as error:
                child_.fail(error)
    results = {}
    for child_ in children:
        if child_.ok:
            try:
                child_.process.wait(timeout=CHILD_TIMEOUT_S)
                timing = bench.Timing(child_.samples)
                child_.result["latency"] = {
                    **timing.summary(),
                    "warmup_calls": child_.warmup,
                    "round_medians_ms": child_.round_medians,
                }
                for kind, samples in child_.loads.items():
                    child_.result[kind] = {"median_ms": statistics.median(samples), "samples_ms": samples}
                child_.result["process_s"] = time.perf_counter() - child_.started
            except (ChildFailed, subprocess.TimeoutExpired) as error:
                child_.fail(error)
        child_.close()
        results[child_.engine] = child_.result
    return results


def run_cpp_overhead(model_names: List[str], args: argparse.Namespace) -> Dict[str, Any]:
    """Times the .pte files the children wrote from C++ against OpenVINO alone (call_overhead.py).

    Returns {model: {precision: figures or {"error": why}}}, or {"skipped": why}.
    """
    from common import cpp_runner

    runner = cpp_runner.build_runner()
    if isinstance(runner, str):
        logger.warning("C++ call overhead not measured: %s", runner)
        return {"skipped": runner}
    results: Dict[str, Any] = {}
    for model_name in model_names:
        for precision in ("f32", "bf16"):
            pte = WORK_DIR / f"{model_name}_ours-{precision}.pte"
            if not pte.exists():
                continue
            try:
                figures = cpp_runner.measure(runner, pte, precision, args.rounds, 1000 * args.budget / args.rounds)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
                logger.error("C++ call overhead of %s at %s failed: %s", model_name, precision, error)
                figures = {"error": str(error)}
            results.setdefault(model_name, {})[precision] = figures
            logger.info("%-11s C++ %s done", model_name, precision)
    return results


def print_cpp_overhead(cpp: Dict[str, Any], derived: Dict[str, Dict[str, Any]]) -> None:
    print(
        "\nPer call from C++, no Python on either side (benchmarks/cpp/call_overhead.cpp): ExecuTorch's "
        "Method::execute of our .pte against\nInferRequest::infer of the same IR compiled by OpenVINO alone, "
        "in one process, alternating rounds; medians in us. ratio: of the medians of all calls; round: median "
        "of\nthe per-round ratios; extra: us per call. diff: largest difference between the two engines' "
        "outputs, relative."
    )
    if "skipped" in cpp:
        print(f"not measured: {cpp['skipped']}")
        return
    rows = []
    for model_name, per_precision in cpp.items():
        row: List[Any] = [model_name]
        for precision in ("f32", "bf16"):
            figures = per_precision.get(precision)
            if figures is None or "error" in figures:
                row += ["failed" if figures else "-"] + ["-"] * 5
                continue
            ours, alone = figures["ours"]["median_us"], figures["openvino"]["median_us"]
            rounds = [
                o / a for o, a in zip(figures["ours"]["round_medians_us"], figures["openvino"]["round_medians_us"])
            ]
            derived.setdefault(model_name, {}).update(
                {
                    f"cpp_ours_over_openvino_{precision}": ours / alone,
                    f"cpp_median_round_ratio_ours_over_openvino_{precision}": statistics.median(rounds),
                    f"cpp_ours_minus_openvino_us_{precision}": ours - alone,
                }
            )
            row += [
                ours,
                alone,
                ours / alone,
                statistics.median(rounds),
                f"{ours - alone:+.2f}",
                f"{figures['max_rel_diff']:.1g}",
            ]
        rows.append(row)
    bench.print_table(
        [
            "model",
            "ours f32",
            "OV f32",
            "ratio",
            "round",
            "extra",
            "diff",
            "ours bf16",
            "OV bf16",
            "ratio",
            "round",
            "extra",
            "diff",
        ],
        rows,
    )


def cpu_flags() -> str:
    """The instruction sets OpenVINO's f32 and bf16 kernels depend on, as /proc/cpuinfo lists them."""
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return " ".join(flag for flag in wanted if flag in flags) or "none of " + " ".join(wanted)
    except OSError:
        pass
    return "unknown"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def ratio(numerator: Optional[float], denominator: Optional[float]) -> Any:
    if numerator is None or denominator is None or denominator == 0:
        return "-"
    return numerator / denominator


def figure(results: Dict[str, Dict[str, Any]], engine: str, *keys: str) -> Optional[float]:
    value: Any = results.get(engine)
    if value is None or "error" in value:
        return None
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def round_ratios(results: Dict[str, Dict[str, Any]], numerator: str, denominator: str) -> List[float]:
    """Per round, the ratio of two engines' round medians: both ran within seconds of each other."""
    tops = figure(results, numerator, "latency", "round_medians_ms")
    bottoms = figure(results, denominator, "latency", "round_medians_ms")
    if not tops or not bottoms or len(tops) != len(bottoms):
        return []
    return [top / bottom for top, bottom in zip(tops, bottoms)]


def best_round_ratio(results: Dict[str, Dict[str, Any]], numerator: str, denominator: str) -> Optional[float]:
    """The ratio of the two engines' fastest round medians: noise only ever slows a round down."""
    tops = figure(results, numerator, "latency", "round_medians_ms")
    bottoms = figure(results, denominator, "latency", "round_medians_ms")
    return min(tops) / min(bottoms) if tops and bottoms else None


def median_or_none(values: List[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def report(
    all_results: Dict[str, Dict[str, Dict[str, Any]]],
    cpp: Dict[str, Any],
    args: argparse.Namespace,
    loads: Tuple[str, str],
    wall_s: float,
) -> Dict[str, Any]:
    """Prints the tables; returns the environment, thread settings and ratios for the JSON."""
    env: Dict[str, Any] = {}
    threads: Dict[str, Any] = {
        "eager_torch_threads": None,
        "executorch_threadpool_threads": None,
        "openvino_properties": {},
    }
    for per_model in all_results.values():
        for engine, result in per_model.items():
            if "environment" in result and (not env or engine != "eager"):
                env = dict(result["environment"])
            if engine == "eager" and "environment" in result:
                threads["eager_torch_threads"] = result["environment"]["torch_num_threads"]
                threads["eager_OMP_WAIT_POLICY"] = result["environment"]["OMP_WAIT_POLICY"]
            if "executorch_threadpool_threads" in result:
                threads["executorch_threadpool_threads"] = result["executorch_threadpool_threads"]
            if engine == "openvino-f32" and "openvino_properties" in result:
                threads["openvino_properties"] = result["openvino_properties"]

    ov_props = threads["openvino_properties"]
    print(
        f"\nPer-call latency: eager PyTorch, XNNPACK, our delegate and OpenVINO alone "
        f"({'quick run: ' if args.quick else ''}{args.budget:g} s of timed calls per configuration in "
        f"{args.rounds} interleaved rounds, each configuration in its own process)"
    )
    print(
        f"CPU: {env.get('cpu', bench.cpu_model())} ({env.get('cores', os.cpu_count())} cores; "
        f"flags {cpu_flags()}); OpenVINO {env.get('openvino')}, torch {env.get('torch')}, "
        f"ExecuTorch {env.get('executorch')}, executorch-openvino {env.get('executorch_openvino')}"
    )
    print(
        "threads: ExecuTorch and OpenVINO processes: OMP_WAIT_POLICY=PASSIVE, torch.set_num_threads(1) "
        "(torch only converts inputs/outputs); "
        f"XNNPACK: ExecuTorch threadpool of {threads['executorch_threadpool_threads']}; "
        f"OpenVINO (ours gets the configuration OpenVINO alone is compiled with): "
        f"PERFORMANCE_HINT={ov_props.get('PERFORMANCE_HINT', '?')}, "
        f"NUM_STREAMS={ov_props.get('NUM_STREAMS', '?')}, "
        f"INFERENCE_NUM_THREADS={ov_props.get('INFERENCE_NUM_THREADS', '?')}; "
        + (
            "eager: not run"
            if threads["eager_torch_threads"] is None
            else f"eager: torch's default threads ({threads['eager_torch_threads']}), "
            f"OMP_WAIT_POLICY {threads.get('eager_OMP_WAIT_POLICY', '?')}"
        )
    )
    print(f"load average (1, 5, 15 min): {loads[0]} at start, {loads[1]} at end; run took {wall_s / 60:.1f} min\n")

    rows = []
    for model_name, per_model in all_results.items():
        for engine, result in per_model.items():
            if "error" in result:
                rows.append([model_name, engine, "failed", "", "", "", "", ""])
                continue
            latency = result["latency"]
            medians = latency["round_medians_ms"]
            rows.append(
                [
                    model_name,
                    engine,
                    latency["median_ms"],
                    latency["p10_ms"],
                    latency["p90_ms"],
                    f"{min(medians):.4g}-{max(medians):.4g}",
                    latency["calls"],
                    f"{max(result['max_rel_err'], result.get('max_rel_err_after_timing', 0.0)):.1e}",
                ]
            )
    bench.print_table(
        ["model", "engine", "median ms", "p10 ms", "p90 ms", "round medians ms", "calls", "max rel err"], rows
    )

    derived: Dict[str, Dict[str, Any]] = {}
    ratio_rows: List[List[Any]] = []
    load_rows: List[List[Any]] = []
    cached_load_rows: List[List[Any]] = []
    size_rows: List[List[Any]] = []
    for model_name, per_model in all_results.items():
        med = {engine: figure(per_model, engine, "latency", "median_ms") for engine in ENGINES}

        def extra_us(ours_engine: str, alone_engine: str) -> Optional[float]:
            ours, alone = med[ours_engine], med[alone_engine]
            return None if ours is None or alone is None else (ours - alone) * 1000

        def shown_us(extra: Optional[float]) -> str:
            return "-" if extra is None else f"{extra:+.1f}"

        d = derived[model_name] = {
            "ours_over_openvino_f32": ratio(med["ours-f32"], med["openvino-f32"]),
            "ours_over_openvino_bf16": ratio(med["ours-bf16"], med["openvino-bf16"]),
            "ours_f32_over_xnnpack": ratio(med["ours-f32"], med["xnnpack"]),
            "ours_f32_over_eager": ratio(med["ours-f32"], med["eager"]),
            "ours_minus_openvino_f32_us": extra_us("ours-f32", "openvino-f32"),
            "ours_minus_openvino_bf16_us": extra_us("ours-bf16", "openvino-bf16"),
            "ours_exec_over_openvino_f32": ratio(med["ours-f32-exec"], med["openvino-f32"]),
            "ours_exec_minus_openvino_f32_us": extra_us("ours-f32-exec", "openvino-f32"),
        }
        for precision in ("f32", "bf16"):
            ours, alone = f"ours-{precision}", f"openvino-{precision}"
            ratios = round_ratios(per_model, ours, alone)
            d[f"round_ratios_ours_over_openvino_{precision}"] = ratios
            d[f"median_round_ratio_ours_over_openvino_{precision}"] = median_or_none(ratios)
            d[f"best_round_ratio_ours_over_openvino_{precision}"] = best_round_ratio(per_model, ours, alone)

        def shown(key: str) -> Any:
            return "-" if d[key] is None else d[key]

        ratio_rows.append(
            [
                model_name,
                *(
                    shown(f"{kind}_ours_over_openvino_{precision}")
                    if kind != "pooled"
                    else d[f"ours_over_openvino_{precision}"]
                    for precision in ("f32", "bf16")
                    for kind in ("pooled", "median_round_ratio", "best_round_ratio")
                ),
                d["ours_f32_over_xnnpack"],
                d["ours_f32_over_eager"],
                shown_us(d["ours_minus_openvino_f32_us"]),
                shown_us(d["ours_minus_openvino_bf16_us"]),
                d["ours_exec_over_openvino_f32"],
                shown_us(d["ours_exec_minus_openvino_f32_us"]),
            ]
        )

        def value(engine: str, *keys: str) -> Any:
            found = figure(per_model, engine, *keys)
            return "-" if found is None else found

        def kib(engine: str) -> str:
            size = figure(per_model, engine, "pte_bytes")
            return "-" if size is None else f"{size / 1024:.1f}"

        def load_ms(engine: str, kind: str, statistic: Callable[[List[float]], float]) -> Optional[float]:
            samples = figure(per_model, engine, kind, "samples_ms")
            return statistic(samples) if samples else None

        for cached in (False, True):
            ours_kind, alone_kinds = (
                ("cached_load", ("cached_load", "ir_file_cached_load"))
                if cached
                else ("load", ("load", "ir_file_load"))
            )
            row: List[Any] = [model_name, value("ours-f32", ours_kind, "median_ms")]
            row += [value("openvino-f32", kind, "median_ms") for kind in alone_kinds]
            for alone_kind, name in zip(alone_kinds, ("openvino", "openvino_ir_file")):
                for statistic, label in ((statistics.median, ""), (min, "best_")):
                    key = f"{label}{ours_kind}_ours_over_{name}_f32"
                    d[key] = ratio(
                        load_ms("ours-f32", ours_kind, statistic), load_ms("openvino-f32", alone_kind, statistic)
                    )
                    row.append(d[key])
            (cached_load_rows if cached else load_rows).append(row)
        size_rows.append(
            [
                model_name,
                value("xnnpack", "lowering_s"),
                value("ours-f32", "lowering_s"),
                value("xnnpack", "load", "median_ms"),
                kib("xnnpack"),
                kib("ours-f32"),
            ]
        )

    print(
        "\nRatios (below 1: ours faster). ours/OV: our .pte against OpenVINO alone at the same precision "
        "(target <= 1.05), three ways: of the medians of all calls;\nround: median over rounds of the ratio "
        "of the two medians in the same round; best: of the two engines' fastest round medians (noise only "
        "slows rounds down).\nours/XNNPACK and ours/eager: ours at f32, of the medians of all calls. "
        "ours-OV us: extra microseconds per call over OpenVINO alone, medians of all calls "
        "(target <= 20 on tiny).\nexec: the same for ours-f32-exec (inputs set once, execute() alone: "
        "without executorch.runtime's input copy and output wrapping)."
    )
    bench.print_table(
        [
            "model",
            "ours/OV f32",
            "round",
            "best",
            "ours/OV bf16",
            "round",
            "best",
            "ours/XNNPACK",
            "ours/eager",
            "ours-OV us f32",
            "ours-OV us bf16",
            "exec/OV f32",
            "exec-OV us",
        ],
        ratio_rows,
    )

    print(
        f"\nLoad at f32, ms (median of {args.rounds} rounds x {args.loads_per_round} loads): ours: "
        "load_program + load_method of the .pte; OV model: compile_model + create_infer_request of the\n"
        "converted openvino.Model in memory; OV files: the same from the model's IR files on disk "
        "(compile_model(path), which reads and parses them, as our runtime reads the .pte).\n"
        "Ratios ours/OV (target <= 1.10): of the medians, and best: of the fastest loads (noise only slows "
        "a load down)."
    )
    load_headers = ["model", "ours", "OV model", "OV files", "ours/OV model", "best", "ours/OV files", "best"]
    bench.print_table(load_headers, load_rows)
    print("\nThe same from the model cache a first load wrote (our cache_dir load option, OpenVINO's CACHE_DIR).")
    bench.print_table(load_headers, cached_load_rows)
    print("\nLowering (s): export + lower + to_executorch, f32. XNNPACK load: ms, median. Size of the .pte, KiB.")
    bench.print_table(["model", "lower XNNPACK", "lower ours", "load XNNPACK", "XNNPACK KiB", "ours KiB"], size_rows)
    print_cpp_overhead(cpp, derived)
    return {"environment": env, "threads": threads, "derived": derived}


def parent(args: argparse.Namespace) -> int:
    started, load_at_start = time.perf_counter(), load_average()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    logger.info("load average at start: %s; CPU %s", load_at_start, bench.cpu_model())
    all_results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for model_name in args.models:
        engines = [e for e in args.engines if model_name in ONLY_FOR.get(e, (model_name,))]
        all_results[model_name] = run_model(model_name, engines, args)
    cpp = run_cpp_overhead(args.models, args) if args.cpp else {"skipped": "--no-cpp"}
    wall_s = time.perf_counter() - started
    load_at_end = load_average()
    summary = report(all_results, cpp, args, (load_at_start, load_at_end), wall_s)
    failed = [f"{m} {e}" for m, per_model in all_results.items() for e, r in per_model.items() if "error" in r]
    failed += [
        f"{m} C++ {p}" for m, per_model in cpp.items() if m != "skipped" for p, r in per_model.items() if "error" in r
    ]
    RESULTS.write_text(
        json.dumps(
            {
                **summary,
                "command": " ".join(["python", os.path.relpath(__file__), *sys.argv[1:]]),
                "method": {
                    "budget_s": args.budget,
                    "rounds": args.rounds,
                    "loads_per_round": args.loads_per_round,
                    "warmup_calls": WARMUP_CALLS,
                    "warmup_s": WARMUP_S,
                    "round_warmup_calls": ROUND_WARMUP_CALLS,
                    "round_warmup_s": ROUND_WARMUP_S,
                    "quick": args.quick,
                },
                "models": {name: MODELS[name][0] for name in args.models},
                "load_average": {"start": load_at_start, "end": load_at_end},
                "wall_s": wall_s,
                "results": all_results,
                "cpp_call_overhead": cpp,
                "failed": failed,
            },
            indent=2,
        )
        + "\n"
    )
    logger.info("wrote %s; the run took %.1f min", RESULTS, wall_s / 60)
    if failed:
        print(f"\nfailed: {', '.join(failed)} (logs in {WORK_DIR})")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_BUDGET_S:g} s of timed calls in {QUICK_ROUNDS} rounds per configuration",
    )
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument(
        "--budget", type=float, help=f"seconds of timed calls per configuration, over all rounds (default {BUDGET_S:g})"
    )
    parser.add_argument("--rounds", type=int, help=f"interleaved rounds (default {ROUNDS})")
    parser.add_argument(
        "--loads-per-round", type=int, help=f"timed loads of each kind per round (default {LOADS_PER_ROUND})"
    )
    parser.add_argument(
        "--no-cpp",
        dest="cpp",
        action="store_false",
        help="skip the C++ per-call measurement (benchmarks/call_overhead.py)",
    )
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.budget is None:
        args.budget = QUICK_BUDGET_S if args.quick else BUDGET_S
    if args.rounds is None:
        args.rounds = QUICK_ROUNDS if args.quick else ROUNDS
    if args.loads_per_round is None:
        args.loads_per_round = QUICK_LOADS_PER_ROUND if args.quick else LOADS_PER_ROUND
    bench.setup_logging()
    if args.child:
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        # --budget is the child's per-round budget
        return child(*args.child, budget_s=args.budget, loads_per_round=args.loads_per_round)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
