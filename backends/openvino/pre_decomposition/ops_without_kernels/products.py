"""``addmv`` and ``bilinear`` (``nn.Bilinear``) as matrix products.

Eager PyTorch 2.13 (checked in tests/ops/test_exact_decompositions.py):

- ``addmv(input, mat, vec, beta=b, alpha=a)`` is ``b * input + a * (mat @ vec)``,
  where ``b == 0`` ignores ``input`` (its NaN and infinities too) and ``a == 0``
  ignores the product, as BLAS's gemv does; ``input`` broadcasts to the result's
  length. All three share one dtype; for integers ``a`` and ``b`` are truncated to
  integers first (``beta=1.7`` multiplies by 1) and the sums wrap in that dtype.
  Float products are a matrix product (OpenVINO's MatMul); integer ones are summed
  products, which the delegate sums exactly (passes/exact_integer_sum.py), where
  OpenVINO's integer MatMul sums in float32 (partition/argument_rules.py).
- ``bilinear(x1, x2, weight, bias)`` is ``y[..., o] = sum_ij x1[..., i] *
  weight[o, i, j] * x2[..., j] + bias[o]``: written as ``x1`` times the weight laid
  out as ``[i, o * j]``, then a batched product with ``x2``, in another summation
  order than PyTorch's ``_trilinear`` (within float rounding).
"""

from __future__ import annotations

from typing import Optional

import torch


def _scale(factor, dtype: torch.dtype):
    """A scalar factor as PyTorch applies it to a tensor of `dtype` (integers: truncated)."""
    return factor if dtype.is_floating_point else int(factor)


def addmv(
    input: torch.Tensor, mat: torch.Tensor, vec: torch.Tensor, *, beta: float = 1, alpha: float = 1
) -> torch.Tensor:
    dtype = mat.dtype
    if dtype == torch.bool or dtype.is_complex:
        return NotImplemented
    beta, alpha = _scale(beta, dtype), _scale(alpha, dtype)
    length = mat.shape[0]
    result: Optional[torch.Tensor] = None
    if alpha != 0:
        if dtype.is_floating_point:
            product = torch.matmul(mat, vec.unsqueeze(-1)).squeeze(-1)
        else:
            product = torch.sum(torch.mul(mat, vec), -1, dtype=dtype)
        result = product if alpha == 1 else torch.mul(product, alpha)
    if beta != 0:
        added = input if beta == 1 else torch.mul(input, beta)
        # A copy where it would be the input itself: a decomposition must not return an alias.
        result = added.expand(length).clone() if result is None else torch.add(result, added)
    if result is None:
        return torch.zeros(length, dtype=dtype)
    return result


def bilinear(
    input1: torch.Tensor, input2: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None
) -> torch.Tensor:
    outputs, size1, size2 = weight.shape
    leading = input1.shape[:-1]
    first = input1.reshape(-1, size1)
    second = input2.reshape(-1, size2)
    # [N, i] @ [i, o * j] -> [N, o, j], then each row's [o, j] @ [j, 1].
    laid_out = weight.permute(1, 0, 2).reshape(size1, outputs * size2)
    partial = torch.matmul(first, laid_out).reshape(-1, outputs, size2)
    result = torch.matmul(partial, second.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        result = torch.add(result, bias)
    return result.reshape(*leading, outputs)
