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
  openvino-f32/bf16
                 OpenVINO alone: to_openvino_model(to_edge(torch.export.export(...)).exported_program()),
                 compiled with the configuration our runtime uses at that precision
                 (OpenvinoOptions.compile_config(): INFERENCE_PRECISION_HINT, PERFORMANCE_HINT=LATENCY),
                 inputs and outputs preallocated and bound once with set_input_tensor /
                 set_output_tensor, each call request.infer(share_outputs=True)
  et-portable    (tiny only) a .pte with no delegate, ExecuTorch's portable kernels: the floor
                 of a call through executorch.runtime from Python

Every configuration (model x engine) runs in its own process: the script runs itself with
`--child MODEL ENGINE`, the child prints one JSON line, and this parent collects them, prints
the tables and writes benchmarks/results/compare.json (child logs in
benchmarks/results/compare/, next to the .pte files). Every child except eager sets
OMP_WAIT_POLICY=PASSIVE before importing torch and calls torch.set_num_threads(1) (torch then
only converts inputs and outputs, see _common.py); XNNPACK runs on ExecuTorch's own threadpool
and OpenVINO on its own threads, whose counts are reported. The eager child leaves both at
torch's defaults.

Per call: a warm-up (at least WARMUP_CALLS calls and WARMUP_S seconds), then as many calls as
fit in the time budget, each timed with time.perf_counter_ns; the median, p10 and p90 are kept.
Per model also: lowering time (export + lower + to_executorch + serialization, measured after
one untimed lowering of the tiny model in the same process so that one-off initialization is
not counted), .pte size, and load time: Runtime.load_program + load_method for ours against
compile_model + create_infer_request of the same openvino.Model for OpenVINO alone (and, to
tell IR parsing apart, read_model of the same IR from memory + compile_model), each the median
of LOADS loads after one untimed load; and the same with the model cache (our cache_dir load
option, OpenVINO's CACHE_DIR), in a fresh folder whose first load writes the cache.

Run: python benchmarks/compare.py            (about 6 minutes on 2 cores)
     python benchmarks/compare.py --quick    (shorter budgets: a smoke run, noisier figures)
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
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"  # before torch is imported: see _common.py

import torch  # noqa: E402

if _child_engine(sys.argv) != "eager":
    torch.set_num_threads(1)

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: E402

import _common  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from models import Mlp, SmallCnn, Tiny, TransformerBlock  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
RESULTS = RESULTS_DIR / "compare.json"
WORK_DIR = RESULTS_DIR / "compare"
logger = logging.getLogger("benchmarks.compare")

MODELS: Dict[str, Tuple[str, Callable[[], torch.nn.Module], Callable[[], Tuple[torch.Tensor, ...]]]] = {
    "mlp": ("MLP 4 x Linear(1024), batch 64", lambda: Mlp(width=1024, layers=4),
            lambda: (torch.randn(64, 1024),)),
    "cnn": ("SmallCnn, 1 x 3 x 224 x 224", lambda: SmallCnn(),
            lambda: (torch.randn(1, 3, 224, 224),)),
    "transformer": ("TransformerBlock dim 64, seq 128", lambda: TransformerBlock(),
                    lambda: (torch.randn(1, 128, 64),)),
    "tiny": ("Tiny: x + y, 1 x 16", lambda: Tiny(),
             lambda: (torch.randn(1, 16), torch.randn(1, 16))),
}
ENGINES = ("eager", "xnnpack", "ours-f32", "ours-bf16", "openvino-f32", "openvino-bf16", "et-portable")
ONLY_FOR = {"et-portable": ("tiny",)}  # portable kernels are a floor for the tiny model, slow elsewhere
PTE_ENGINES = ("xnnpack", "et-portable", "ours-f32", "ours-bf16")
WARMUP_CALLS, WARMUP_S = 20, 0.3
BUDGET_S, LOADS = 2.5, 5  # per configuration: seconds of timed calls, timed loads
QUICK_BUDGET_S, QUICK_LOADS = 0.3, 2
CHILD_TIMEOUT_S = 600


def build(model_name: str) -> Tuple[torch.nn.Module, Tuple[torch.Tensor, ...]]:
    _, make_module, make_inputs = MODELS[model_name]
    torch.manual_seed(0)
    module = make_module().eval()
    return module, make_inputs()


def precision_of(engine: str) -> str:
    return engine.rsplit("-", 1)[1]


# ---------------------------------------------------------------------------- child


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


def time_loads(load: Callable[[], Any], loads: int) -> Dict[str, Any]:
    """Times 1 + `loads` loads, dropping each handle before the next: the first apart, then the median."""
    samples = []
    for _ in range(1 + loads):
        start = time.perf_counter_ns()
        handle = load()
        samples.append((time.perf_counter_ns() - start) / 1e6)
        del handle
    return {"first_ms": samples[0], "median_ms": statistics.median(samples[1:]), "samples_ms": samples}


def cache_files(folder: str) -> int:
    return sum(1 for path in Path(folder).rglob("*") if path.is_file())


def child_pte(model_name: str, engine: str, module: torch.nn.Module, inputs: Tuple[torch.Tensor, ...],
              loads: int, result: Dict[str, Any]) -> Tuple[Any, Callable[[], Any]]:
    """Lowers, writes and loads a .pte; returns (what keeps the method alive, one call)."""
    from executorch.runtime import Runtime

    tiny, tiny_inputs = build("tiny")
    _common.lower(tiny, tiny_inputs, partitioners_for(engine))  # one-off initialization, untimed
    start = time.perf_counter()
    manager = _common.lower(module, inputs, partitioners_for(engine))
    result["lowering_s"] = time.perf_counter() - start
    delegates, cpu_ops = _common.delegate_ids(manager), _common.cpu_ops(manager)
    backend = expected_backend(engine)
    if backend is not None and backend not in delegates:
        raise RuntimeError(f"nothing of {model_name} was delegated to {backend}")
    if backend is not None and cpu_ops:
        logger.warning("%s %s: ops left to ExecuTorch's CPU kernels: %s", model_name, engine, cpu_ops)
    path = WORK_DIR / f"{model_name}_{engine}.pte"
    path.write_bytes(manager.buffer)
    result.update(pte_bytes=path.stat().st_size, delegates=delegates, cpu_ops=cpu_ops)
    logger.info("%s %s: lowered in %.2f s, %d bytes", model_name, engine, result["lowering_s"],
                result["pte_bytes"])
    del manager

    runtime = Runtime.get()

    def load() -> Any:
        program = runtime.load_program(path)
        return program, program.load_method("forward")

    if engine.startswith("ours"):
        import executorch_openvino

        result["load"] = time_loads(load, loads)
        cache_dir = tempfile.mkdtemp(prefix="compare_cache_ours_")
        try:
            executorch_openvino.set_runtime_options(cache_dir=cache_dir)
            result["cached_load"] = time_loads(load, loads)
            result["cached_load"]["cache_files"] = cache_files(cache_dir)
        finally:
            executorch_openvino.set_runtime_options(cache_dir="")
            shutil.rmtree(cache_dir, ignore_errors=True)
        logger.info("%s %s: load %.1f ms, cached %.1f ms", model_name, engine,
                    result["load"]["median_ms"], result["cached_load"]["median_ms"])
    else:
        result["load"] = time_loads(load, loads)

    program, method = load()
    args = list(inputs)
    return (program, method), lambda: method.execute(args)[0]


def child_openvino(model_name: str, engine: str, module: torch.nn.Module, inputs: Tuple[torch.Tensor, ...],
                   loads: int, result: Dict[str, Any]) -> Tuple[Any, Callable[[], Any], Callable[[], Any]]:
    """Converts the model with our conversion, compiles it with OpenVINO alone, binds it once."""
    import numpy as np
    import openvino as ov
    from executorch.exir import to_edge
    from executorch_openvino import openvino_compile_specs, parse_compile_specs
    from executorch_openvino.conversion import to_openvino_model

    def convert(module: torch.nn.Module, inputs: Tuple[torch.Tensor, ...]) -> ov.Model:
        return to_openvino_model(to_edge(torch.export.export(module, inputs)).exported_program())

    convert(*build("tiny"))  # one-off initialization, untimed
    start = time.perf_counter()
    model = convert(module, inputs)
    result["convert_s"] = time.perf_counter() - start

    config = parse_compile_specs(openvino_compile_specs(inference_precision=precision_of(engine))).compile_config()
    config.pop("CACHE_DIR", None)
    result["openvino_config"] = {key: str(value) for key, value in config.items()}
    core = ov.Core()

    def load(config: Dict[str, Any] = config) -> Any:
        compiled = core.compile_model(model, "CPU", config)
        return compiled, compiled.create_infer_request()

    result["load"] = time_loads(load, loads)

    ir_dir = tempfile.mkdtemp(prefix="compare_ir_")
    try:
        ov.save_model(model, os.path.join(ir_dir, "model.xml"), compress_to_fp16=False)
        xml = Path(ir_dir, "model.xml").read_text()
        weights = ov.Tensor(np.frombuffer(bytearray(Path(ir_dir, "model.bin").read_bytes()), np.uint8),
                            shared_memory=True)
    finally:
        shutil.rmtree(ir_dir, ignore_errors=True)

    def read_and_load() -> Any:
        compiled = core.compile_model(core.read_model(xml, weights), "CPU", config)
        return compiled, compiled.create_infer_request()

    result["read_ir_load"] = time_loads(read_and_load, loads)

    cache_dir = tempfile.mkdtemp(prefix="compare_cache_openvino_")
    try:
        result["cached_load"] = time_loads(lambda: load({**config, "CACHE_DIR": cache_dir}), loads)
        result["cached_load"]["cache_files"] = cache_files(cache_dir)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    logger.info("%s %s: converted in %.2f s, load %.1f ms (read IR + load %.1f ms), cached %.1f ms",
                model_name, engine, result["convert_s"], result["load"]["median_ms"],
                result["read_ir_load"]["median_ms"], result["cached_load"]["median_ms"])

    compiled, request = load()
    result["openvino_properties"] = {
        name: str(compiled.get_property(name))
        for name in ("INFERENCE_PRECISION_HINT", "PERFORMANCE_HINT", "NUM_STREAMS", "INFERENCE_NUM_THREADS")
    }
    arrays = [x.numpy() for x in inputs]  # share the torch tensors' memory
    for index, array in enumerate(arrays):
        request.set_input_tensor(index, ov.Tensor(array, shared_memory=True))
    outputs = [ov.Tensor(port.get_element_type(), port.get_shape()) for port in compiled.outputs]
    for index, tensor in enumerate(outputs):
        request.set_output_tensor(index, tensor)

    def call() -> Any:
        return request.infer(share_outputs=True)

    def first_output() -> torch.Tensor:
        request.infer(share_outputs=True)
        return torch.from_numpy(outputs[0].data.copy())

    return (compiled, request, arrays, outputs), call, first_output


def child(model_name: str, engine: str, budget_s: float, loads: int) -> Dict[str, Any]:
    module, inputs = build(model_name)
    with torch.no_grad():
        expected = module(*inputs)
    result: Dict[str, Any] = {"model": model_name, "engine": engine, "environment": _common.environment()}
    if engine.startswith("ours") or engine == "xnnpack":
        from executorch.extension.pybindings import portable_lib

        result["executorch_threadpool_threads"] = portable_lib._threadpool_get_thread_count()

    if engine == "eager":
        with torch.inference_mode():
            timing, warmup = _common.measure_for(lambda: module(*inputs), budget_s,
                                                 min_warmup=WARMUP_CALLS, warmup_s=WARMUP_S)
            output = module(*inputs)
    else:
        if engine in PTE_ENGINES:
            keep, call = child_pte(model_name, engine, module, inputs, loads, result)
            first_output = call
        else:
            keep, call, first_output = child_openvino(model_name, engine, module, inputs, loads, result)
        output = first_output().clone()
        timing, warmup = _common.measure_for(call, budget_s, min_warmup=WARMUP_CALLS, warmup_s=WARMUP_S)
        # The output after many calls must still be right.
        result["max_rel_err_after_timing"] = _common.max_rel_err(first_output(), expected)
        del keep
    result["max_rel_err"] = _common.max_rel_err(output, expected)
    result["latency"] = {**timing.summary(), "warmup_calls": warmup}
    logger.info("%s %s: median %.4f ms over %d calls", model_name, engine, timing.median,
                len(timing.samples_ms))
    return result


# ---------------------------------------------------------------------------- parent


def run_child(model_name: str, engine: str, args: argparse.Namespace) -> Dict[str, Any]:
    command = [sys.executable, os.path.abspath(__file__), "--child", model_name, engine,
               "--budget", str(args.budget), "--loads", str(args.loads)]
    env = dict(os.environ)
    if engine == "eager":
        env.pop("OMP_WAIT_POLICY", None)  # torch's defaults for eager
    log_path = WORK_DIR / f"{model_name}_{engine}.log"
    start = time.perf_counter()
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    elapsed = time.perf_counter() - start
    log_path.write_text(completed.stderr)
    result = None
    for line in reversed(completed.stdout.splitlines()):
        if line.startswith("{"):
            result = json.loads(line)
            break
    if completed.returncode != 0 or result is None:
        tail = "\n".join(completed.stderr.splitlines()[-15:])
        logger.error("%s %s failed (exit %d) after %.1f s; log %s:\n%s", model_name, engine,
                     completed.returncode, elapsed, log_path, tail)
        return {"model": model_name, "engine": engine, "error": tail or f"exit {completed.returncode}",
                "process_s": elapsed}
    result["process_s"] = elapsed
    logger.info("%-11s %-13s median %9.4f ms  (process %.1f s)", model_name, engine,
                result["latency"]["median_ms"], elapsed)
    return result


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


def report(all_results: Dict[str, Dict[str, Dict[str, Any]]], args: argparse.Namespace,
           loads: Tuple[str, str], wall_s: float) -> Dict[str, Any]:
    envs = [r["environment"] for per_model in all_results.values() for r in per_model.values()
            if "environment" in r]
    env = dict(envs[0]) if envs else {}
    threads = {"eager_torch_threads": None, "executorch_threadpool_threads": None,
               "openvino_properties": None}
    for per_model in all_results.values():
        for engine, result in per_model.items():
            if engine == "eager" and "environment" in result:
                threads["eager_torch_threads"] = result["environment"]["torch_num_threads"]
                threads["eager_OMP_WAIT_POLICY"] = result["environment"]["OMP_WAIT_POLICY"]
            if "executorch_threadpool_threads" in result:
                threads["executorch_threadpool_threads"] = result["executorch_threadpool_threads"]
            if engine == "openvino-f32" and "openvino_properties" in result:
                threads["openvino_properties"] = result["openvino_properties"]

    ov_props = threads["openvino_properties"] or {}
    print(f"\nPer-call latency: eager PyTorch, XNNPACK, our delegate and OpenVINO alone "
          f"({'quick run, ' if args.quick else ''}budget {args.budget:g} s of timed calls per configuration, "
          f"each in its own process)")
    print(f"CPU: {env.get('cpu', _common.cpu_model())} ({env.get('cores', os.cpu_count())} cores); "
          f"OpenVINO {env.get('openvino')}, torch {env.get('torch')}, ExecuTorch {env.get('executorch')}, "
          f"executorch-openvino {env.get('executorch_openvino')}; CPU flags: {cpu_flags()}")
    print("threads: ExecuTorch and OpenVINO processes set OMP_WAIT_POLICY=PASSIVE and "
          "torch.set_num_threads(1) (torch only converts inputs/outputs); "
          f"XNNPACK: ExecuTorch threadpool of {threads['executorch_threadpool_threads']}; "
          f"OpenVINO (as compiled alone; ours gets the same configuration): "
          f"PERFORMANCE_HINT={ov_props.get('PERFORMANCE_HINT', '?')}, "
          f"NUM_STREAMS={ov_props.get('NUM_STREAMS', '?')}, "
          f"INFERENCE_NUM_THREADS={ov_props.get('INFERENCE_NUM_THREADS', '?')}; "
          + ("eager: not run" if threads["eager_torch_threads"] is None else
             f"eager: torch default threads ({threads['eager_torch_threads']}), "
             f"OMP_WAIT_POLICY {threads.get('eager_OMP_WAIT_POLICY', '?')}"))
    print(f"load average (1, 5, 15 min): {loads[0]} at start, {loads[1]} at end; run took {wall_s / 60:.1f} min\n")

    rows = []
    for model_name, per_model in all_results.items():
        for engine, result in per_model.items():
            if "error" in result:
                rows.append([model_name, engine, "failed", "", "", "", ""])
                continue
            latency = result["latency"]
            rows.append([model_name, engine, latency["median_ms"], latency["p10_ms"], latency["p90_ms"],
                         latency["calls"], f"{result['max_rel_err']:.1e}"])
    _common.print_table(["model", "engine", "median ms", "p10 ms", "p90 ms", "calls", "max rel err"], rows)

    derived: Dict[str, Dict[str, Any]] = {}
    ratio_rows, load_rows = [], []
    for model_name, per_model in all_results.items():
        med = {engine: figure(per_model, engine, "latency", "median_ms") for engine in ENGINES}
        extra_f32 = None if med["ours-f32"] is None or med["openvino-f32"] is None else \
            (med["ours-f32"] - med["openvino-f32"]) * 1000
        extra_bf16 = None if med["ours-bf16"] is None or med["openvino-bf16"] is None else \
            (med["ours-bf16"] - med["openvino-bf16"]) * 1000
        d = derived[model_name] = {
            "ours_over_openvino_f32": ratio(med["ours-f32"], med["openvino-f32"]),
            "ours_over_openvino_bf16": ratio(med["ours-bf16"], med["openvino-bf16"]),
            "ours_f32_over_xnnpack": ratio(med["ours-f32"], med["xnnpack"]),
            "ours_f32_over_eager": ratio(med["ours-f32"], med["eager"]),
            "ours_minus_openvino_f32_us": extra_f32,
            "ours_minus_openvino_bf16_us": extra_bf16,
        }
        ratio_rows.append([model_name, d["ours_over_openvino_f32"], d["ours_over_openvino_bf16"],
                           d["ours_f32_over_xnnpack"], d["ours_f32_over_eager"],
                           "-" if extra_f32 is None else f"{extra_f32:+.1f}",
                           "-" if extra_bf16 is None else f"{extra_bf16:+.1f}"])

        load = {engine: figure(per_model, engine, "load", "median_ms") for engine in ("ours-f32", "openvino-f32")}
        cached = {engine: figure(per_model, engine, "cached_load", "median_ms")
                  for engine in ("ours-f32", "openvino-f32")}
        read_ir = figure(per_model, "openvino-f32", "read_ir_load", "median_ms")
        d.update({
            "load_ours_over_openvino_f32": ratio(load["ours-f32"], load["openvino-f32"]),
            "load_ours_over_openvino_read_ir_f32": ratio(load["ours-f32"], read_ir),
            "cached_load_ours_over_openvino_f32": ratio(cached["ours-f32"], cached["openvino-f32"]),
        })

        def kib(engine: str) -> str:
            size = figure(per_model, engine, "pte_bytes")
            return "-" if size is None else f"{size / 1024:.1f}"

        def value(engine: str, *keys: str) -> Any:
            found = figure(per_model, engine, *keys)
            return "-" if found is None else found

        load_rows.append([
            model_name, value("xnnpack", "lowering_s"), value("ours-f32", "lowering_s"),
            value("xnnpack", "load", "median_ms"),
            value("ours-f32", "load", "median_ms"), value("openvino-f32", "load", "median_ms"),
            d["load_ours_over_openvino_f32"], "-" if read_ir is None else read_ir,
            value("ours-f32", "cached_load", "median_ms"), value("openvino-f32", "cached_load", "median_ms"),
            d["cached_load_ours_over_openvino_f32"], kib("xnnpack"), kib("ours-f32"),
        ])

    print("\nRatios of medians (below 1: ours faster). ours/OV: our .pte against OpenVINO alone at the "
          "same precision (target <= 1.05);\nours/XNNPACK and ours/eager: ours at f32; ours-OV us: extra "
          "microseconds per call over OpenVINO alone (target <= 20 on tiny)")
    _common.print_table(["model", "ours/OV f32", "ours/OV bf16", "ours/XNNPACK", "ours/eager",
                         "ours-OV us f32", "ours-OV us bf16"], ratio_rows)

    print(f"\nLowering (s, export + lower + to_executorch), load (ms, median of {args.loads} after one "
          "untimed; ours and XNN: load_program + load_method, OV: compile_model + create_infer_request of the "
          "same openvino.Model;\nOV read+load: read_model of its IR from memory first, as our runtime "
          "does), cached load (ms, from a cache the first load wrote: our cache_dir, OpenVINO's CACHE_DIR), "
          ".pte size (KiB); f32 (target: ours/OV <= 1.10)")
    _common.print_table(["model", "lower XNN s", "lower ours s", "load XNN", "load ours", "load OV", "ours/OV",
                         "OV read+load", "cached ours", "cached OV", "ours/OV", "XNN KiB", "ours KiB"],
                        load_rows)
    return {"environment": env, "threads": threads, "derived": derived}


def parent(args: argparse.Namespace) -> int:
    started, load_at_start = time.perf_counter(), load_average()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    logger.info("load average at start: %s; CPU %s", load_at_start, _common.cpu_model())
    all_results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for model_name in args.models:
        all_results[model_name] = {}
        for engine in args.engines:
            if model_name not in ONLY_FOR.get(engine, (model_name,)):
                continue
            all_results[model_name][engine] = run_child(model_name, engine, args)
    wall_s = time.perf_counter() - started
    summary = report(all_results, args, (load_at_start, load_average()), wall_s)
    failed = [f"{m} {e}" for m, per_model in all_results.items() for e, r in per_model.items() if "error" in r]
    RESULTS.write_text(json.dumps({
        **summary,
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "method": {"budget_s": args.budget, "loads": args.loads, "warmup_calls": WARMUP_CALLS,
                   "warmup_s": WARMUP_S, "quick": args.quick},
        "models": {name: MODELS[name][0] for name in args.models},
        "load_average": {"start": load_at_start, "end": load_average()},
        "wall_s": wall_s,
        "results": all_results,
        "failed": failed,
    }, indent=2) + "\n")
    logger.info("wrote %s in %.1f min", RESULTS, wall_s / 60)
    if failed:
        print(f"\nfailed: {', '.join(failed)} (logs in {WORK_DIR})")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_BUDGET_S:g} s of timed calls and {QUICK_LOADS} timed loads per configuration")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--budget", type=float, help="seconds of timed calls per configuration")
    parser.add_argument("--loads", type=int, help="timed loads per configuration")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.budget is None:
        args.budget = QUICK_BUDGET_S if args.quick else BUDGET_S
    if args.loads is None:
        args.loads = QUICK_LOADS if args.quick else LOADS
    _common.setup_logging()
    if args.child:
        model_name, engine = args.child
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        print(json.dumps(child(model_name, engine, args.budget, args.loads)), flush=True)
        return 0
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
