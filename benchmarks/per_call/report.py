"""compare.py's tables, one function a table, and the ratios the JSON keeps.

Results come as {model: {engine: result}}, each result as a child reported it and the
parent pooled it (per_call.parent), or {"error": why}. Ratios are ours over the other
engine: below 1, ours is faster.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from common import bench

from per_call.settings import ENGINES

Results = Dict[str, Dict[str, Any]]  # engine -> result, for one model
PRECISIONS = ("f32", "bf16")
LOAD_HEADERS = ["model", "ours", "OV model", "OV files", "ours/OV model", "best", "ours/OV files", "best"]


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


def ratio(numerator: Optional[float], denominator: Optional[float]) -> Any:
    if numerator is None or denominator is None or denominator == 0:
        return "-"
    return numerator / denominator


def figure(results: Results, engine: str, *keys: str) -> Optional[float]:
    value: Any = results.get(engine)
    if value is None or "error" in value:
        return None
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def round_ratios(results: Results, numerator: str, denominator: str) -> List[float]:
    """Per round, the ratio of two engines' round medians: both ran within seconds of each other."""
    tops = figure(results, numerator, "latency", "round_medians_ms")
    bottoms = figure(results, denominator, "latency", "round_medians_ms")
    if not tops or not bottoms or len(tops) != len(bottoms):
        return []
    return [top / bottom for top, bottom in zip(tops, bottoms)]


def best_round_ratio(results: Results, numerator: str, denominator: str) -> Optional[float]:
    """The ratio of the two engines' fastest round medians: noise only ever slows a round down."""
    tops = figure(results, numerator, "latency", "round_medians_ms")
    bottoms = figure(results, denominator, "latency", "round_medians_ms")
    return min(tops) / min(bottoms) if tops and bottoms else None


def median_or_none(values: List[float]) -> Optional[float]:
    return statistics.median(values) if values else None


# ---------------------------------------------------------------------------- the run


def run_environment(all_results: Dict[str, Results]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(the environment of a non-eager child, the thread settings each kind of engine ran with)."""
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
    return env, threads


def print_run_header(
    env: Dict[str, Any], threads: Dict[str, Any], args: argparse.Namespace, loads: Tuple[str, str], wall_s: float
) -> None:
    """What ran, on which CPU and versions, with which threads, and how busy the machine was."""
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


# ---------------------------------------------------------------------------- per call


def latency_row(model_name: str, engine: str, result: Dict[str, Any]) -> List[Any]:
    if "error" in result:
        return [model_name, engine, "failed", "", "", "", "", ""]
    latency = result["latency"]
    medians = latency["round_medians_ms"]
    return [
        model_name,
        engine,
        latency["median_ms"],
        latency["p10_ms"],
        latency["p90_ms"],
        f"{min(medians):.4g}-{max(medians):.4g}",
        latency["calls"],
        f"{max(result['max_rel_err'], result.get('max_rel_err_after_timing', 0.0)):.1e}",
    ]


def print_latency_table(all_results: Dict[str, Results]) -> None:
    """Per model and engine: the pooled per-call times and the output's error."""
    rows = [
        latency_row(model_name, engine, result)
        for model_name, per_model in all_results.items()
        for engine, result in per_model.items()
    ]
    bench.print_table(
        ["model", "engine", "median ms", "p10 ms", "p90 ms", "round medians ms", "calls", "max rel err"], rows
    )


def call_ratios(per_model: Results) -> Dict[str, Any]:
    """Ours over OpenVINO alone, XNNPACK and eager, of the medians of all calls; the extra
    microseconds over OpenVINO alone; and ours over OpenVINO alone round by round."""
    med = {engine: figure(per_model, engine, "latency", "median_ms") for engine in ENGINES}

    def extra_us(ours_engine: str, alone_engine: str) -> Optional[float]:
        ours, alone = med[ours_engine], med[alone_engine]
        return None if ours is None or alone is None else (ours - alone) * 1000

    ratios = {
        "ours_over_openvino_f32": ratio(med["ours-f32"], med["openvino-f32"]),
        "ours_over_openvino_bf16": ratio(med["ours-bf16"], med["openvino-bf16"]),
        "ours_f32_over_xnnpack": ratio(med["ours-f32"], med["xnnpack"]),
        "ours_f32_over_eager": ratio(med["ours-f32"], med["eager"]),
        "ours_minus_openvino_f32_us": extra_us("ours-f32", "openvino-f32"),
        "ours_minus_openvino_bf16_us": extra_us("ours-bf16", "openvino-bf16"),
        "ours_exec_over_openvino_f32": ratio(med["ours-f32-exec"], med["openvino-f32"]),
        "ours_exec_minus_openvino_f32_us": extra_us("ours-f32-exec", "openvino-f32"),
    }
    for precision in PRECISIONS:
        ours, alone = f"ours-{precision}", f"openvino-{precision}"
        per_round = round_ratios(per_model, ours, alone)
        ratios[f"round_ratios_ours_over_openvino_{precision}"] = per_round
        ratios[f"median_round_ratio_ours_over_openvino_{precision}"] = median_or_none(per_round)
        ratios[f"best_round_ratio_ours_over_openvino_{precision}"] = best_round_ratio(per_model, ours, alone)
    return ratios


def shown_us(extra: Optional[float]) -> str:
    return "-" if extra is None else f"{extra:+.1f}"


def ratio_row(model_name: str, d: Dict[str, Any]) -> List[Any]:
    def shown(key: str) -> Any:
        return "-" if d[key] is None else d[key]

    return [
        model_name,
        *(
            shown(f"{kind}_ours_over_openvino_{precision}")
            if kind != "pooled"
            else d[f"ours_over_openvino_{precision}"]
            for precision in PRECISIONS
            for kind in ("pooled", "median_round_ratio", "best_round_ratio")
        ),
        d["ours_f32_over_xnnpack"],
        d["ours_f32_over_eager"],
        shown_us(d["ours_minus_openvino_f32_us"]),
        shown_us(d["ours_minus_openvino_bf16_us"]),
        d["ours_exec_over_openvino_f32"],
        shown_us(d["ours_exec_minus_openvino_f32_us"]),
    ]


def print_ratio_table(derived: Dict[str, Dict[str, Any]]) -> None:
    """Per model: ours against OpenVINO alone three ways, against XNNPACK and eager."""
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
        [ratio_row(model_name, d) for model_name, d in derived.items()],
    )


# ---------------------------------------------------------------------------- loads


def load_kinds(cached: bool) -> Tuple[str, Tuple[str, str]]:
    """(our load kind, OpenVINO alone's load kinds: from the model in memory, from its IR files)."""
    if cached:
        return "cached_load", ("cached_load", "ir_file_cached_load")
    return "load", ("load", "ir_file_load")


def load_ratio_key(label: str, ours_kind: str, alone_name: str) -> str:
    return f"{label}{ours_kind}_ours_over_{alone_name}_f32"


def load_ratios(per_model: Results) -> Dict[str, Any]:
    """Our load over OpenVINO alone's, plain and from the cache, against the model in memory
    and against its IR files: of the medians, and "best_": of the fastest loads."""

    def load_ms(engine: str, kind: str, statistic: Callable[[List[float]], float]) -> Optional[float]:
        samples = figure(per_model, engine, kind, "samples_ms")
        return statistic(samples) if samples else None

    ratios: Dict[str, Any] = {}
    for cached in (False, True):
        ours_kind, alone_kinds = load_kinds(cached)
        for alone_kind, alone_name in zip(alone_kinds, ("openvino", "openvino_ir_file")):
            for statistic, label in ((statistics.median, ""), (min, "best_")):
                ratios[load_ratio_key(label, ours_kind, alone_name)] = ratio(
                    load_ms("ours-f32", ours_kind, statistic), load_ms("openvino-f32", alone_kind, statistic)
                )
    return ratios


def value(per_model: Results, engine: str, *keys: str) -> Any:
    found = figure(per_model, engine, *keys)
    return "-" if found is None else found


def load_row(model_name: str, per_model: Results, d: Dict[str, Any], cached: bool) -> List[Any]:
    ours_kind, alone_kinds = load_kinds(cached)
    row: List[Any] = [model_name, value(per_model, "ours-f32", ours_kind, "median_ms")]
    row += [value(per_model, "openvino-f32", kind, "median_ms") for kind in alone_kinds]
    for alone_name in ("openvino", "openvino_ir_file"):
        row += [d[load_ratio_key(label, ours_kind, alone_name)] for label in ("", "best_")]
    return row


def print_load_tables(
    all_results: Dict[str, Results], derived: Dict[str, Dict[str, Any]], args: argparse.Namespace
) -> None:
    """Per model: load times at f32, ours against OpenVINO alone; then the same from the model cache."""
    print(
        f"\nLoad at f32, ms (median of {args.rounds} rounds x {args.loads_per_round} loads): ours: "
        "load_program + load_method of the .pte; OV model: compile_model + create_infer_request of the\n"
        "converted openvino.Model in memory; OV files: the same from the model's IR files on disk "
        "(compile_model(path), which reads and parses them, as our runtime reads the .pte).\n"
        "Ratios ours/OV (target <= 1.10): of the medians, and best: of the fastest loads (noise only slows "
        "a load down)."
    )
    for cached in (False, True):
        if cached:
            print(
                "\nThe same from the model cache a first load wrote (our cache_dir load option, OpenVINO's CACHE_DIR)."
            )
        rows = [
            load_row(model_name, per_model, derived[model_name], cached)
            for model_name, per_model in all_results.items()
        ]
        bench.print_table(LOAD_HEADERS, rows)


# ---------------------------------------------------------------------------- lowering


def kib(per_model: Results, engine: str) -> str:
    size = figure(per_model, engine, "pte_bytes")
    return "-" if size is None else f"{size / 1024:.1f}"


def print_lowering_table(all_results: Dict[str, Results]) -> None:
    """Per model: lowering seconds of XNNPACK and ours, XNNPACK's load, and the .pte sizes."""
    print("\nLowering (s): export + lower + to_executorch, f32. XNNPACK load: ms, median. Size of the .pte, KiB.")
    rows = [
        [
            model_name,
            value(per_model, "xnnpack", "lowering_s"),
            value(per_model, "ours-f32", "lowering_s"),
            value(per_model, "xnnpack", "load", "median_ms"),
            kib(per_model, "xnnpack"),
            kib(per_model, "ours-f32"),
        ]
        for model_name, per_model in all_results.items()
    ]
    bench.print_table(["model", "lower XNNPACK", "lower ours", "load XNNPACK", "XNNPACK KiB", "ours KiB"], rows)


# ---------------------------------------------------------------------------- C++


def cpp_ratios(figures: Dict[str, Any], precision: str) -> Dict[str, float]:
    """The C++ runner's ours over OpenVINO alone at `precision`: of the medians, the median
    of the per-round ratios, and the extra microseconds per call."""
    ours, alone = figures["ours"]["median_us"], figures["openvino"]["median_us"]
    rounds = [o / a for o, a in zip(figures["ours"]["round_medians_us"], figures["openvino"]["round_medians_us"])]
    return {
        f"cpp_ours_over_openvino_{precision}": ours / alone,
        f"cpp_median_round_ratio_ours_over_openvino_{precision}": statistics.median(rounds),
        f"cpp_ours_minus_openvino_us_{precision}": ours - alone,
    }


def cpp_cells(figures: Optional[Dict[str, Any]], ratios: Dict[str, float], precision: str) -> List[Any]:
    """One precision's six cells of the C++ table."""
    if figures is None or "error" in figures:
        return ["failed" if figures else "-"] + ["-"] * 5
    return [
        figures["ours"]["median_us"],
        figures["openvino"]["median_us"],
        ratios[f"cpp_ours_over_openvino_{precision}"],
        ratios[f"cpp_median_round_ratio_ours_over_openvino_{precision}"],
        f"{ratios[f'cpp_ours_minus_openvino_us_{precision}']:+.2f}",
        f"{figures['max_rel_diff']:.1g}",
    ]


def print_cpp_overhead(cpp: Dict[str, Any], derived: Dict[str, Dict[str, Any]]) -> None:
    """Per model and precision: the C++ runner's figures; their ratios go into `derived`."""
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
        for precision in PRECISIONS:
            figures = per_precision.get(precision)
            ratios = {} if figures is None or "error" in figures else cpp_ratios(figures, precision)
            if ratios:
                derived.setdefault(model_name, {}).update(ratios)
            row += cpp_cells(figures, ratios, precision)
        rows.append(row)
    headers_per_precision = ["ours {}", "OV {}", "ratio", "round", "extra", "diff"]
    headers = ["model"] + [header.format(precision) for precision in PRECISIONS for header in headers_per_precision]
    bench.print_table(headers, rows)


# ---------------------------------------------------------------------------- all of it


def report(
    all_results: Dict[str, Results],
    cpp: Dict[str, Any],
    args: argparse.Namespace,
    loads: Tuple[str, str],
    wall_s: float,
) -> Dict[str, Any]:
    """Prints the tables; returns the environment, thread settings and ratios for the JSON."""
    env, threads = run_environment(all_results)
    print_run_header(env, threads, args, loads, wall_s)
    print_latency_table(all_results)
    derived = {
        model_name: {**call_ratios(per_model), **load_ratios(per_model)}
        for model_name, per_model in all_results.items()
    }
    print_ratio_table(derived)
    print_load_tables(all_results, derived, args)
    print_lowering_table(all_results)
    print_cpp_overhead(cpp, derived)
    return {"environment": env, "threads": threads, "derived": derived}
