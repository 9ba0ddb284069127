"""One configuration of compare.py (model x engine) in its own process.

The child prepares its configuration (lowers or converts it, loads it once, checks its
output), reports one JSON line, then serves the parent's commands on stdin, one JSON line
each: "round" times its loads and calls, "done" checks the output once more and exits.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from common import bench
from common.small_models import build

from per_call.settings import (
    LOGGER_NAME,
    MAX_CALLS_PER_ROUND,
    MIN_CALLS_PER_ROUND,
    PTE_ENGINES,
    ROUND_WARMUP_CALLS,
    ROUND_WARMUP_S,
    WARMUP_CALLS,
    WARMUP_S,
    WORK_DIR,
    precision_of,
)

logger = logging.getLogger(LOGGER_NAME)


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


def time_round(prepared: Prepared, budget_s: float, loads_per_round: int, first: bool) -> Dict[str, Any]:
    """One round: `loads_per_round` loads of each kind, then calls for `budget_s` seconds
    after a warm-up, longer in the first round."""
    loads = {kind: [load() for _ in range(loads_per_round)] for kind, load in prepared.loads.items()}
    timing, warmup = bench.measure_for(
        prepared.call,
        budget_s,
        min_warmup=WARMUP_CALLS if first else ROUND_WARMUP_CALLS,
        warmup_s=WARMUP_S if first else ROUND_WARMUP_S,
        min_calls=MIN_CALLS_PER_ROUND,
        max_calls=MAX_CALLS_PER_ROUND,
    )
    return {"loads_ms": loads, "samples_ms": timing.samples_ms, "warmup": warmup}


def serve(prepared: Prepared, expected: torch.Tensor, budget_s: float, loads_per_round: int) -> None:
    """Answers the parent's commands on stdin until "done" or until the parent is gone."""
    rounds = 0
    while True:
        command = sys.stdin.readline().strip()
        if command == "round":
            reply = time_round(prepared, budget_s, loads_per_round, first=rounds == 0)
            rounds += 1
            print(json.dumps(reply), flush=True)
        elif command == "done" or not command:  # "" when the parent is gone
            # The output after all the timed calls must still be right.
            error = bench.max_rel_err(prepared.output().clone(), expected)
            print(json.dumps({"max_rel_err_after_timing": error}), flush=True)
            break
        else:
            raise ValueError(f"unknown command {command!r}")


def child(model_name: str, engine: str, budget_s: float, loads_per_round: int) -> int:
    """Prepares one configuration, reports it ready, then serves the parent's commands
    (`serve`): "round" and "done"."""
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
            serve(prepared, expected, budget_s, loads_per_round)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    return 0
