"""``fmax`` and ``fmin``: the larger or smaller value, a NaN counting only where both are NaN.

Eager PyTorch 2.13 (checked in tests/ops/test_exact_decompositions.py): where
exactly one side is NaN, the other side; both NaN, NaN; of equal values (``0.0`` and
``-0.0``) the first argument, but the second in bfloat16 (at every length); the dtype and shape that type promotion and
broadcasting give. Integers and bools have no NaN: there it is ``maximum`` or
``minimum``, which OpenVINO 2026.4.1's CPU plugin computes exactly for int32 and int64
(unlike the reductions ``amax`` and ``amin``, partition/argument_rules.py).
"""

from __future__ import annotations

import torch


def _nan_ignoring(first: torch.Tensor, second: torch.Tensor, first_wins, bfloat16_first_wins, extreme) -> torch.Tensor:
    dtype = torch.result_type(first, second)
    first, second = first.to(dtype), second.to(dtype)
    if not dtype.is_floating_point:
        return extreme(first, second)
    if dtype == torch.bfloat16:
        first_wins = bfloat16_first_wins
    # A NaN second loses; a NaN first fails the comparison and loses unless the second is NaN too.
    keep_first = torch.bitwise_or(first_wins(first, second), torch.isnan(second))
    return torch.where(keep_first, first, second)


def fmax(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    return _nan_ignoring(first, second, torch.ge, torch.gt, torch.maximum)


def fmin(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    return _nan_ignoring(first, second, torch.le, torch.lt, torch.minimum)
