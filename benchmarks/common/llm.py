"""The wheel's Llama as the LLM benchmarks build it, and how they time it: greedy decode
steps, a prefill call and the resident memory of a fresh process that loads a program.

Every engine is a callable `engine(tokens, position) -> logits` (common.llm_engines).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import torch

from common.bench import growth_in_fresh_process
from common.example_models import small_llama

SEQUENCE_NAME = "sequence"
# The quantized-LLM benchmarks' shapes (--shape): "1b" is Llama 3.2 1B's shape with a
# 32000-token vocabulary.
SHAPES: Dict[str, Dict[str, int]] = {
    "1024": dict(dim=1024, layers=8, heads=16, kv_heads=4),
    "1b": dict(dim=2048, layers=16, heads=32, kv_heads=8),
}

Decoder = Callable[[torch.Tensor, int], torch.Tensor]


def llama(
    context: int,
    dynamic: bool,
    *,
    layers: int = 6,
    dim: int = 288,
    heads: Optional[int] = None,
    kv_heads: Optional[int] = None,
    dtype: torch.dtype = torch.float32,
) -> torch.nn.Module:
    """The wheel's Llama with random weights from seed 0, so that every engine gets the
    same weights; `dynamic` writes it for a dynamic sequence length (prefill exports)."""
    torch.manual_seed(0)
    model = small_llama(
        enable_dynamic_shape=dynamic, layers=layers, max_seq_len=context, dim=dim, heads=heads, kv_heads=kv_heads
    )
    return model.to(dtype)


def llama_of_shape(shape: str, context: int, dynamic: bool) -> torch.nn.Module:
    """`llama` at one of SHAPES, as the quantized-LLM benchmarks take it (--shape)."""
    return llama(context, dynamic, **SHAPES[shape])


def example_inputs(dynamic: bool) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
    """Export inputs: two tokens for a dynamic sequence length (one would specialize it), else one."""
    return (torch.tensor([[1, 2]] if dynamic else [[1]]), {"input_pos": torch.tensor([0])})


def dynamic_shapes(dynamic: bool, context: int) -> Any:
    """torch.export's dynamic_shapes for `example_inputs(dynamic)`: the sequence up to context - 1."""
    return ({1: torch.export.Dim(SEQUENCE_NAME, min=1, max=context - 1)}, {"input_pos": None}) if dynamic else None


def with_xnnpack_custom_ops(model: torch.nn.Module) -> torch.nn.Module:
    """ExecuTorch's LLM recipe for XNNPACK: custom KV cache and sdpa ops."""
    from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
        replace_kv_cache_with_custom_kv_cache,
    )
    from executorch.examples.models.llama.source_transformation.sdpa import replace_sdpa_with_custom_op

    model = replace_kv_cache_with_custom_kv_cache(copy.deepcopy(model))
    return replace_sdpa_with_custom_op(model)


def xnnpack_partitioner() -> Any:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return XnnpackPartitioner()


def next_token(logits: torch.Tensor) -> int:
    """The greedy token after the last position of `logits`."""
    return int(logits.reshape(-1, logits.shape[-1])[-1].argmax())


def decode_ms(engine: Decoder, start: int, steps: int) -> float:
    """Fills the cache one token per call up to `start` (untimed), then times `steps` greedy steps."""
    for position in range(start):
        engine(torch.tensor([[1 + position % 100]]), position)
    token = 1
    begin = time.perf_counter()
    for position in range(start, start + steps):
        token = next_token(engine(torch.tensor([[token]]), position))
    return 1e3 * (time.perf_counter() - begin) / steps


def prefill_ms(engine: Decoder, prompt: torch.Tensor) -> float:
    """One call of the whole prompt from position 0 and its greedy token, in ms."""
    begin = time.perf_counter()
    next_token(engine(prompt, 0))
    return 1e3 * (time.perf_counter() - begin)


def fresh_load(pte: Path, steps: int = 4, cache_dir: str = "") -> Tuple[float, float, float]:
    """(resident growth MB, anonymous growth MB, load seconds) of a fresh process that
    loads `pte` from its path (mapped, as ExecuTorch's Python runtime loads a path) and
    decodes a few steps; with `cache_dir`, through our delegate's model cache. The load
    is `load_program` + `load_method`, imports not counted."""
    setup = (
        "import os, time, torch; os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE');"
        "import executorch_openvino; from executorch.runtime import Runtime;"
        "import executorch.extension.llm.custom_ops.custom_ops;"
        "cache = %r; cache and executorch_openvino.set_load_options(cache_dir=cache)" % cache_dir
    )
    work = (
        "begin = time.perf_counter(); m = Runtime.get().load_program(%r).load_method('forward');"
        "result = str(time.perf_counter() - begin);"
        "[m.execute([torch.tensor([[1]]), torch.tensor([p])]) for p in range(%d)]" % (str(pte), steps)
    )
    resident, anonymous, seconds = growth_in_fresh_process(setup, work)
    return resident, anonymous, float(seconds)
