"""``cumprod``, ``cummax``, ``cummin`` and ``logcumsumexp`` as exact scans of core ATen ops.

OpenVINO has CumSum and no other cumulative op, and ExecuTorch 1.5.1's portable
kernels have none of these four. Each is an inclusive scan with an associative
combine, computed here without a loop in ceil(log2 n) steps (Hillis and Steele):
at step k every position combines the value 2**k places before it (a fill that
changes nothing before the start) with its own. Each step is a pad, a slice and
elementwise ops, which OpenVINO converts and ExecuTorch's portable kernels run.

Eager PyTorch 2.13 on the CPU, which these follow (checked against random inputs
with ties, NaN, infinities, -0.0, empty and 0-d tensors, see
tests/ops/test_exact_decompositions.py):

- ``cummax``/``cummin``: the running extreme and the index of its LAST occurrence
  among equal values (a new element replaces the extreme when ``x >= max``,
  so ``-0.0`` replaces ``0.0``); a NaN replaces the extreme and stays, its index
  moving to each later NaN. So a prefix's result is its NaN (the last) if it has
  one, else its extreme (the last equal one): that combine is associative.
- ``cumprod``: the running product in the dtype PyTorch gives (``dtype``, else int64
  for bool and integers). Integer products wrap as PyTorch's do: multiplication
  modulo 2**64 is associative, so every order gives the same bits (OpenVINO's CPU
  plugin computes int64 in 32 bits, README Known limits). Float products are
  computed in float32 (16-bit floats widened, as PyTorch accumulates), in another
  order than PyTorch's, which accumulates in double: within float32 rounding, except
  where a partial product overflows float32 and a later factor would bring it back.
- ``logcumsumexp``: ``log(sum(exp(x[:i+1])))`` as PyTorch's running
  ``max + log1p(exp(min - max))``; two equal infinities combine to themselves,
  ``-inf`` changes nothing, ``+inf`` stays, NaN stays. Floats only, as in PyTorch.

The number of steps needs the dimension's largest size: a dimension of dynamic size
without an upper bound is left to the op itself (which then runs nowhere, and
lowering says so, partition/missing_kernels.py).
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, Tuple

import torch
from torch.utils._sympy.numbers import int_oo

from ...workarounds import works_around

# Bool tensors are combined with bitwise_or/bitwise_and: OpenVINO 2026.4.1's PyTorch
# frontend does not convert logical_or/logical_and.
Combine = Callable[[Sequence[torch.Tensor], Sequence[torch.Tensor]], Tuple[torch.Tensor, ...]]
_NARROW_FLOATS = (torch.float16, torch.bfloat16)


def largest_size(size) -> Optional[int]:
    """A dimension's size, or for a symbolic one its upper bound; None when it has none."""
    if isinstance(size, int):
        return size
    upper = size.node.shape_env.bound_sympy(size.node.expr).upper
    if upper in (int_oo, math.inf) or not upper.is_finite:
        return None
    return int(upper)


@works_around("integer_select_in_float32")
def choose(condition: torch.Tensor, chosen: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``torch.where``, but for int32 and int64 written as ``other + (chosen - other) * condition``:
    OpenVINO 2026.4.1's CPU plugin computes a Select fused with the comparison it reads in
    float32, which lost int32 values past 2**24 (integer add, subtract and multiply are exact)."""
    if chosen.dtype not in (torch.int32, torch.int64):
        return torch.where(condition, chosen, other)
    return torch.add(other, torch.mul(torch.sub(chosen, other), condition.to(chosen.dtype)))


def _shifted(tensor: torch.Tensor, dim: int, places: int, fill) -> torch.Tensor:
    """`tensor` moved `places` along `dim` (towards the end), `fill` coming in at the start."""
    pad = [0, 0] * (tensor.dim() - 1 - dim) + [places, 0]
    return torch.constant_pad_nd(tensor, pad, fill).narrow(dim, 0, tensor.shape[dim])


def inclusive_scan(
    values: Sequence[torch.Tensor], dim: int, steps: int, fills: Optional[Sequence[object]], combine: Combine
) -> Tuple[torch.Tensor, ...]:
    """The inclusive scan of the tuples `values` along `dim` (the same shape each).

    ``combine(earlier, later)`` gives the summary of two adjacent runs; ``fills`` are
    summaries that combine with any run to that run, shifted in at the start. Without
    fills (None), positions with nothing ``2**k`` places before them keep their value.
    """
    current = tuple(values)
    for step in range(steps):
        places = 2**step
        earlier = [
            _shifted(value, dim, places, 0 if fills is None else fill) for value, fill in zip(current, fills or current)
        ]
        combined = combine(earlier, current)
        if fills is None:
            positions = [1] * current[0].dim()
            positions[dim] = current[0].shape[dim]
            has_earlier = torch.arange(current[0].shape[dim]).reshape(positions) >= places
            combined = tuple(choose(has_earlier, new, old) for new, old in zip(combined, current))
        current = combined
    return current


def scan_steps(tensor: torch.Tensor, dim: int) -> Optional[int]:
    """How many steps scan `tensor` along `dim`, or None for a dimension with no largest size."""
    size = largest_size(tensor.shape[dim])
    if size is None:
        return None
    return math.ceil(math.log2(size)) if size > 1 else 0


def _as_scannable(tensor: torch.Tensor, dim: int) -> Tuple[torch.Tensor, int]:
    """A 0-d tensor as one of one element (PyTorch scans it along dim 0 or -1), and the dim in range."""
    if tensor.dim() == 0:
        return tensor.reshape(1), 0
    return tensor, dim % tensor.dim()


def _like_input(result: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    return result.reshape(()) if source.dim() == 0 else result


# --------------------------------------------------------------------------- cummax, cummin
def _extreme_combine(later_wins: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], floating: bool) -> Combine:
    def combine(earlier, later):
        (earlier_value, earlier_index), (later_value, later_index) = earlier, later
        # The later run's extreme wins on a tie (the last occurrence) and when it is
        # NaN; against an earlier NaN, the comparison is False.
        wins = later_wins(later_value, earlier_value)
        if floating:
            wins = torch.bitwise_or(wins, torch.isnan(later_value))
        return choose(wins, later_value, earlier_value), choose(wins, later_index, earlier_index)

    return combine


def _cumulative_extreme(x: torch.Tensor, dim: int, largest: bool):
    source = x
    x, dim = _as_scannable(x, dim)
    steps = scan_steps(x, dim)
    if steps is None or x.dtype.is_complex:
        return NotImplemented
    if x.dtype.is_floating_point:
        fills = (float("-inf") if largest else float("inf"), 0)
    elif x.dtype == torch.bool:
        fills = (not largest, 0)
    elif x.dtype == torch.int64:
        # int64's extremes do not survive OpenVINO's CPU plugin, which holds int64 in
        # 32 bits (README, Known limits): positions with nothing before them are kept instead.
        fills = None
    else:
        fills = (torch.iinfo(x.dtype).min if largest else torch.iinfo(x.dtype).max, 0)
    positions = [1] * x.dim()
    positions[dim] = x.shape[dim]
    indices = torch.arange(x.shape[dim], dtype=torch.int64).reshape(positions).expand(x.shape)
    later_wins = torch.ge if largest else torch.le
    combine = _extreme_combine(later_wins, x.dtype.is_floating_point)
    values, indices = inclusive_scan((x, indices), dim, steps, fills, combine)
    return _like_input(values, source), _like_input(indices, source)


def cummax(x: torch.Tensor, dim: int):
    return _cumulative_extreme(x, dim, largest=True)


def cummin(x: torch.Tensor, dim: int):
    return _cumulative_extreme(x, dim, largest=False)


# --------------------------------------------------------------------------- cumprod
def _product_combine(earlier, later):
    return (torch.mul(earlier[0], later[0]),)


def cumprod(x: torch.Tensor, dim: int, *, dtype: Optional[torch.dtype] = None):
    source = x
    x, dim = _as_scannable(x, dim)
    steps = scan_steps(x, dim)
    if dtype is None:
        dtype = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else torch.int64
    if steps is None or dtype.is_complex or dtype == torch.bool:
        return NotImplemented
    computed_in = torch.float32 if dtype in _NARROW_FLOATS else dtype
    (product,) = inclusive_scan((x.to(computed_in),), dim, steps, (1,), _product_combine)
    return _like_input(product.to(dtype), source)


# --------------------------------------------------------------------------- logcumsumexp
def _log_add_exp_combine(earlier, later):
    (first,), (second,) = earlier, later
    larger = torch.maximum(first, second)
    # -|a - b|: NaN when either is NaN, which the sum then carries.
    gap = torch.neg(torch.abs(torch.sub(first, second)))
    combined = torch.add(larger, torch.log1p(torch.exp(gap)))
    # Equal infinities combine to themselves, where the gap would be NaN.
    same_infinity = torch.bitwise_and(torch.eq(first, second), torch.isinf(first))
    return (torch.where(same_infinity, first, combined),)


def logcumsumexp(x: torch.Tensor, dim: int):
    source = x
    x, dim = _as_scannable(x, dim)
    steps = scan_steps(x, dim)
    if steps is None or not x.dtype.is_floating_point:
        return NotImplemented
    computed_in = torch.float32 if x.dtype in _NARROW_FLOATS else x.dtype
    (result,) = inclusive_scan((x.to(computed_in),), dim, steps, (float("-inf"),), _log_add_exp_combine)
    return _like_input(result.to(x.dtype), source)
