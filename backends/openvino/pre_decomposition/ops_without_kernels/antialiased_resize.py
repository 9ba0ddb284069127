"""``interpolate(mode="bilinear" or "bicubic", antialias=True)`` as two matrix products.

PyTorch's antialiased resize is separable: along each resized dimension, output
pixel ``o`` is a weighted sum of input pixels, the weights a filter centred on ``o``
and widened by the downscaling factor. With static sizes the weights are a constant
``[out, in]`` matrix per dimension, which OpenVINO computes once when it compiles
the model, and the resize is ``rows @ x @ columns.T`` (OpenVINO's MatMul; ExecuTorch's portable mm
where a node stays on the CPU). OpenVINO's PyTorch frontend converts neither op, and
ExecuTorch 1.5.1's portable kernels have the bilinear one only.

The weights as eager PyTorch 2.13 computes them on the CPU, in float32 (checked against
``F.interpolate`` over 20000 random sizes, scales and both align_corners, see
tests/ops/test_exact_decompositions.py): along a dimension of ``n`` inputs resized to ``m``,

- ``scale`` is ``(n - 1) / (m - 1)`` (0 for ``m == 1``) with align_corners, else
  ``1 / scale_factor`` when one is given, else ``n / m``;
- output ``o`` has the centre ``c = scale * (o + 0.5)``, the support ``s = r * scale``
  when ``scale >= 1`` (downscaling), else ``r`` (``r``: 1 for bilinear, 2 for
  bicubic), and takes the inputs ``j`` from ``floor(c - s + 0.5)`` (at least 0) up to
  ``floor(c + s + 0.5)`` (at most ``n``) with weight ``f((j - c + 0.5) / max(scale, 1))``,
  then divided by their sum when it is not 0;
- ``f`` is the triangle ``max(0, 1 - |x|)`` for bilinear and Keys' cubic with
  ``a = -0.5`` for bicubic (not the -0.75 of plain bicubic interpolation);
- a dimension whose size does not change is copied, whatever the scale factor
  (``scale_factor=1.3`` on a width of 3 keeps the width 3 and its values);
- when the output is one pixel wide and the height changes, every output row is the
  first one (PyTorch 2.13's CPU kernel; followed so that the delegate gives eager's
  values).

Left as they are (the op then stays on the CPU): dynamic sizes, and dtypes other than
float32 and float64 (PyTorch computes uint8 in fixed point).
"""

from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence

import torch

_BICUBIC_A = -0.5


def _triangle(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1 - torch.abs(x), min=0)


def _keys_cubic(x: torch.Tensor) -> torch.Tensor:
    x = torch.abs(x)
    a = _BICUBIC_A
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return torch.where(x < 1, near, torch.where(x < 2, far, torch.zeros_like(x)))


# mode -> (filter, its radius in input pixels at scale 1)
FILTERS = {"bilinear": (_triangle, 1.0), "bicubic": (_keys_cubic, 2.0)}


def _scale(in_size: int, out_size: int, align_corners: bool, scale_factor: Optional[float]) -> float:
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def resize_weights(
    in_size: int, out_size: int, align_corners: bool, scale_factor: Optional[float], mode: str
) -> torch.Tensor:
    """The float32 ``[out_size, in_size]`` matrix of one dimension's antialiased resize (see the module).

    Made of ops on sizes known at lowering, which OpenVINO folds into a constant: a
    tensor made from data in a decomposition is not registered as the program's
    constant by torch 2.13's ``run_decompositions`` ("Constant tensor lifted_tensor_0
    is not in the constants dictionary").
    """
    filter_fn, radius = FILTERS[mode]
    scale = _scale(in_size, out_size, align_corners, scale_factor)
    support = radius * scale if scale >= 1 else radius
    stretch = 1 / scale if scale >= 1 else 1.0
    centres = (torch.arange(out_size, dtype=torch.float32) + 0.5) * scale
    first = torch.clamp(torch.floor(centres - support + 0.5), min=0).unsqueeze(1)
    end = torch.clamp(torch.floor(centres + support + 0.5), max=in_size).unsqueeze(1)
    inputs = torch.arange(in_size, dtype=torch.float32).unsqueeze(0)
    window = torch.bitwise_and(inputs >= first, inputs < end)
    weights = torch.where(window, filter_fn((inputs - centres.unsqueeze(1) + 0.5) * stretch), 0.0)
    totals = torch.sum(weights, 1, keepdim=True)
    return torch.where(totals != 0, weights / torch.where(totals != 0, totals, 1.0), weights)


def _resize(
    x: torch.Tensor,
    output_size: Sequence[int],
    align_corners: bool,
    scales: Sequence[Optional[float]],
    mode: str,
):
    sizes = [*x.shape[-2:], *output_size]
    if x.dim() != 4 or x.dtype not in (torch.float32, torch.float64) or not all(isinstance(s, int) for s in sizes):
        return NotImplemented
    (in_height, in_width), (out_height, out_width) = x.shape[-2:], output_size
    result = x
    # A dimension whose size does not change is left as it is (PyTorch's kernel skips it).
    if out_height != in_height:
        rows = resize_weights(in_height, out_height, align_corners, scales[0], mode)
        if out_width == 1:
            rows = rows[:1].expand(out_height, in_height)
        result = torch.matmul(rows.to(x.dtype), result)
    if out_width != in_width:
        columns = resize_weights(in_width, out_width, align_corners, scales[1], mode)
        result = torch.matmul(result, columns.to(x.dtype).t())
    return result.clone() if result is x else result


def _vec_arguments(x: torch.Tensor, output_size, scale_factors) -> Optional[tuple]:
    """(output size, per-dimension scale factors) from the ``.vec`` overload's arguments, as PyTorch reads them."""
    if output_size is not None:
        return list(output_size), [None, None]
    if scale_factors is None:
        return None
    sizes = x.shape[-2:]
    if not all(isinstance(size, int) for size in sizes):
        return None
    return [math.floor(size * factor) for size, factor in zip(sizes, scale_factors)], list(scale_factors)


def _decompositions(mode: str) -> List[Callable]:
    def default(x, output_size, align_corners, scales_h=None, scales_w=None):
        return _resize(x, output_size, align_corners, (scales_h, scales_w), mode)

    def vec(x, output_size, align_corners, scale_factors):
        arguments = _vec_arguments(x, output_size, scale_factors)
        if arguments is None:
            return NotImplemented
        return _resize(x, arguments[0], align_corners, arguments[1], mode)

    return [default, vec]


upsample_bilinear2d_aa, upsample_bilinear2d_aa_vec = _decompositions("bilinear")
upsample_bicubic2d_aa, upsample_bicubic2d_aa_vec = _decompositions("bicubic")
