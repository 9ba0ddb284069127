"""What the quantized-LLM benchmarks share: the Llama with NNCF-compressed weights in a
form `mode[:group[:all]]`, XNNPACK's 8da4w recipe, programs and IRs written once into a
folder a later run may reuse, the compile specs export_llm gives compressed weights, and
their command-line arguments."""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import tempfile
from pathlib import Path
from typing import Any, ContextManager, Dict, Iterator, List, Optional

import openvino as ov
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch_openvino import OpenvinoPartitioner

from common.bench import cpu_ops, delegate_ids
from common.llm import SHAPES, dynamic_shapes, example_inputs, with_xnnpack_custom_ops

XNNPACK_GROUP = 128
logger = logging.getLogger("benchmarks.quantized_llm")


def nncf_settings(form: str) -> Dict[str, object]:
    """`mode[:group[:all]]` as arguments of nncf.compress_weights."""
    import nncf

    mode, *rest = form.split(":")
    settings: Dict[str, object] = {"mode": nncf.CompressWeightsMode(mode)}
    if rest and rest[0]:
        settings["group_size"] = int(rest[0])
    if len(rest) > 1 and rest[1] == "all":
        settings["all_layers"] = True
    if mode.startswith("int4"):
        settings["ratio"] = 1.0
    return settings


def nncf_compressed(model: torch.nn.Module, form: str, dynamic: bool, context: int) -> torch.nn.Module:
    """The model with NNCF-compressed weights, as a module called like the model."""
    import nncf

    with torch.no_grad():
        exported = torch.export.export(model, example_inputs(dynamic), dynamic_shapes=dynamic_shapes(dynamic, context))
        return nncf.compress_weights(exported.module(), **nncf_settings(form))


def xnnpack_8da4w(model: torch.nn.Module) -> torch.nn.Module:
    """ExecuTorch's LLM recipe for XNNPACK at 4 bits: 8da4w in groups of XNNPACK_GROUP, custom ops."""
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    return with_xnnpack_custom_ops(quantize(copy.deepcopy(model), "8da4w", group_size=XNNPACK_GROUP))


def write_pte(module: torch.nn.Module, partitioner: Any, dynamic: bool, context: int, path: Path) -> Path:
    """Lowers `module` to `path`, or keeps the file a run with the same --folder wrote."""
    if path.exists():
        logger.info("%s: kept from an earlier run", path.name)
        return path
    # Not bench.lower: a module exported before (NNCF's) refuses .eval().
    with torch.no_grad():
        exported = torch.export.export(module, example_inputs(dynamic), dynamic_shapes=dynamic_shapes(dynamic, context))
        manager = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()
    path.write_bytes(manager.buffer)
    size = path.stat().st_size / 2**20
    logger.info("%s: %.1f MiB, delegates %s, CPU ops %s", path.name, size, delegate_ids(manager), cpu_ops(manager))
    return path


def converted_ir(module: torch.nn.Module, path: Path) -> ov.Model:
    """Our IR of the compressed decode program (KV cache as state, grown by concatenation),
    saved at `path` (or read from it when a run with the same --folder saved it)."""
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch_openvino.conversion import to_openvino_model
    from executorch_openvino.partition.kept_whole import ops_kept_whole

    if path.exists():
        return ov.Core().read_model(path)
    with torch.no_grad():
        exported = torch.export.export(module, example_inputs(False))
    exported = OpenvinoPartitioner().transform_for_pre_decomposition(exported)
    kept, _ = ops_kept_whole(exported, (), ())
    edge = to_edge(exported, compile_config=EdgeCompileConfig(_check_ir_validity=False, preserve_ops=kept))
    ir = to_openvino_model(edge.exported_program())
    ov.save_model(ir, path, compress_to_fp16=False)
    return ir


@contextlib.contextmanager
def conversion_without(rewrite_name: str) -> Iterator[None]:
    """Conversion without the rewrite of conversion/rewrites/ named `rewrite_name`, for
    comparison only."""
    from executorch_openvino.conversion import rewrites

    every_rewrite = list(rewrites.REWRITES)
    rewrites.REWRITES[:] = [rewrite for rewrite in every_rewrite if rewrite.__name__ != rewrite_name]
    if len(rewrites.REWRITES) == len(every_rewrite):
        raise ValueError(f"no rewrite named {rewrite_name}")
    try:
        yield
    finally:
        rewrites.REWRITES[:] = every_rewrite


def kv_cache_kept_in_slots() -> ContextManager[None]:
    """Conversion without the rewrite that makes the KV cache grow
    (conversion/rewrites/kv_cache_growth.py), for comparison only: the cache stays the
    slots the model writes at its positions."""
    from executorch_openvino.conversion.rewrites.kv_cache_growth import grow_kv_caches

    return conversion_without(grow_kv_caches.__name__)


def add_form_argument(parser: argparse.ArgumentParser) -> None:
    """--form, for the benchmarks that take one form of weights."""
    parser.add_argument(
        "--form",
        default="int4_sym:128:all",
        help="mode[:group[:all]]: NNCF's mode, group size (-1 per channel), all for every layer in 4 bits",
    )


def add_model_arguments(parser: argparse.ArgumentParser, contexts: List[int], rounds: int) -> None:
    """--shape, --contexts, --rounds and --folder, as every quantized-LLM benchmark takes them."""
    parser.add_argument("--shape", choices=list(SHAPES), default="1024")
    parser.add_argument("--contexts", type=int, nargs="+", default=contexts)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument(
        "--folder",
        type=Path,
        help="where the programs and IRs go; files a run with the same folder wrote are kept, so that a "
        "second run only times them (a new temporary folder without it)",
    )


def programs_folder(folder: Optional[Path], prefix: str) -> Path:
    """The --folder given, or a new temporary folder named with `prefix`."""
    folder = folder or Path(tempfile.mkdtemp(prefix=prefix))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
