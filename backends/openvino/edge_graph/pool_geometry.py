"""ATen's pooling arguments and window geometry, read from an avg_pool node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

import torch

from .nodes import op_name

#: The avg_pool ops with a window of their own in the edge graph, by their spatial dims.
AVG_POOL_SPATIAL_DIMS = {"aten.avg_pool2d.default": 2, "aten.avg_pool3d.default": 3}


def _ints(value: object, count: int) -> List[int]:
    """An int or int list argument widened to `count` values, as ATen's pooling ops read it."""
    values = [value] if isinstance(value, int) else list(value)  # type: ignore[arg-type]
    return values * count if len(values) == 1 else values


@dataclass(frozen=True)
class AvgPool:
    """The arguments of ``avg_poolNd(input, kernel_size, stride=[], padding=0,
    ceil_mode=False, count_include_pad=True, divisor_override=None)``."""

    sizes: Sequence[object]  # the input's spatial sizes, ints or SymInts
    kernel: List[int]
    stride: List[int]
    padding: List[int]
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: Optional[int]

    @staticmethod
    def of(node: torch.fx.Node, spatial: int) -> "AvgPool":
        names = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
        args = dict(zip(names, node.args))
        args.update(node.kwargs)
        kernel = _ints(args["kernel_size"], spatial)
        return AvgPool(
            sizes=tuple(args["input"].meta["val"].shape[-spatial:]),
            kernel=kernel,
            stride=_ints(args.get("stride") or kernel, spatial),
            padding=_ints(args.get("padding", 0), spatial),
            ceil_mode=bool(args.get("ceil_mode", False)),
            count_include_pad=bool(args.get("count_include_pad", True)),
            divisor_override=args.get("divisor_override"),
        )

    def has_window_past_padding(self) -> bool:
        """Whether ceil mode adds a last window that reaches past the right padding.

        Every other window covers a whole kernel of input and padding. A dynamic
        size counts as having one, since some length may.
        """
        if not self.ceil_mode:
            return False
        for size, kernel, stride, padding in zip(self.sizes, self.kernel, self.stride, self.padding):
            if not isinstance(size, int):
                return True
            last_start = (_ceil_pooled_size(size, kernel, stride, padding) - 1) * stride - padding
            if last_start + kernel > size + padding:
                return True
        return False

    def output_sizes(self) -> List[int]:
        """ATen's pooled sizes, for static input sizes."""
        pooled = _ceil_pooled_size if self.ceil_mode else _floor_pooled_size
        return [
            pooled(size, kernel, stride, padding)  # type: ignore[arg-type]
            for size, kernel, stride, padding in zip(self.sizes, self.kernel, self.stride, self.padding)
        ]


def needs_explicit_padding(pool: AvgPool) -> bool:
    """Whether OpenVINO averages a pool's last ceil-mode window otherwise than PyTorch: it
    divides a window past the padding by the whole kernel (passes/exact_ceil_mode_avg_pool.py
    writes the padding in; partition/argument_rules.py keeps the pools it cannot rewrite on the CPU)."""
    return (pool.count_include_pad or pool.divisor_override is not None) and pool.has_window_past_padding()


def is_static(pool: AvgPool) -> bool:
    """Whether every spatial size of the pool's input is known when the program is lowered."""
    return all(isinstance(size, int) for size in pool.sizes)


def _floor_pooled_size(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def _ceil_pooled_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """ATen's pooling output size in ceil mode (pooling_output_shape), dilation 1."""
    out = (size + 2 * padding - kernel + stride - 1) // stride + 1
    # A window must start inside the input or its left padding.
    if (out - 1) * stride >= size + padding:
        out -= 1
    return out


def avg_pools(graph: torch.fx.Graph) -> Iterator[Tuple[torch.fx.Node, "AvgPool", int]]:
    """Each avg_pool2d/3d node of `graph` (a snapshot: the caller may edit the graph),
    with its arguments and its number of spatial dims."""
    for node in list(graph.nodes):
        spatial = AVG_POOL_SPATIAL_DIMS.get(op_name(node)) if node.op == "call_function" else None
        if spatial is not None:
            yield node, AvgPool.of(node, spatial), spatial
