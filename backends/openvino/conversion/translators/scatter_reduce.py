"""``aten.scatter_reduce.two`` (sum, prod, mean, amax, amin; with or without ``self``) as eager PyTorch computes it.

OpenVINO's PyTorch frontend does not convert it (2026.4.1) and ExecuTorch 1.5.1's
portable kernels have no ``scatter_reduce``, so it ran nowhere. OpenVINO's
ScatterElementsUpdate-12 has the same reductions, with ``use_init_val`` for
``include_self``; checked against eager PyTorch 2.13 on the CPU plugin:

- ``sum``, ``prod``, float ``mean`` and (without NaN) ``amax``, ``amin`` give PyTorch's
  values for float32, int32 and int64 (within int32: README, Known limits), duplicates
  included; ``mean`` with ``include_self`` counts ``self`` as one more value in both;
  positions no index names keep ``self``, with or without ``include_self``; an empty
  index changes nothing;
- an integer ``mean`` rounds down in PyTorch (``-11 / 3`` gives -4) and toward zero in
  the plugin (-3): it is computed as the sum and the count, floor-divided (the Divide
  is made exact by conversion/rewrites/exact_integer_division.py), and positions
  nothing reaches are chosen arithmetically (``select_integers``);
- a NaN among the values reduced into a position makes ``amax``/``amin`` NaN in
  PyTorch, where the CPU plugin drops it (``max(2, NaN)`` gave 2): where a NaN source
  reaches a position (or ``self`` is NaN there and counted), the result is set to NaN;
- PyTorch reads only the part of ``src`` that the index covers; ScatterElementsUpdate
  needs them the same shape, so ``src`` is cut to the index's shape.

Indices out of range raise in PyTorch; here the runtime checks indices the delegate
reads as inputs (conversion/rewrites/index_bounds.py), and an index below ``-size``
computed inside is refused by the plugin (scatter_indices_below_range.py).
``include_self``, a keyword argument, is read by position
(conversion/translated_nodes.py).
"""

from __future__ import annotations

from typing import List

import numpy as np

import openvino as ov
import openvino.opset15 as ops

from ...workarounds import works_around
from ..rewrites.model_edits import select_integers
from .context import constant_argument, string_argument

# scatter_reduce.two(self, dim, index, src, reduce, *, include_self=True)
_SELF, _DIM, _INDEX, _SOURCE, _REDUCE, _INCLUDE_SELF = range(6)
REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "max", "amin": "min"}
_EXTREMES = frozenset({"amax", "amin"})


@works_around("scatter_extremes_drop_nan", "scatter_integer_mean_truncates")
def translate_scatter_reduce(context) -> List[ov.Output]:
    data = context.get_input(_SELF)
    index = context.get_input(_INDEX)
    reduce = string_argument(context, _REDUCE, None)
    include_self = bool(constant_argument(context, _INCLUDE_SELF, True))
    if reduce not in REDUCTIONS:
        raise ValueError(f"scatter_reduce reduce={reduce!r} is not one of {', '.join(REDUCTIONS)}")
    if data.get_element_type() == ov.Type.boolean:
        raise ValueError("scatter_reduce of bool tensors is not translated")
    rank = data.get_partial_shape().rank.get_length()
    axis = ops.constant(np.int64(constant_argument(context, _DIM, 0) % max(rank, 1)))
    source = _cut_to(ops.convert_like(context.get_input(_SOURCE), data).output(0), index)
    if reduce == "mean" and not data.get_element_type().is_real():
        return [_integer_mean(data, index, source, axis, include_self)]
    result = ops.scatter_elements_update(data, index, source, axis, REDUCTIONS[reduce], include_self)
    if reduce in _EXTREMES and data.get_element_type().is_real():
        result = _with_nan_sources(result, data, index, source, axis, include_self)
    return [result.output(0)]


def _cut_to(source: ov.Output, index: ov.Output) -> ov.Output:
    """`source` cut to `index`'s shape, unless both are known to be the same."""
    source_shape, index_shape = source.get_partial_shape(), index.get_partial_shape()
    if source_shape.is_static and index_shape.is_static and source_shape == index_shape:
        return source
    rank = index_shape.rank.get_length()
    zeros = ops.constant(np.zeros(rank, np.int64))
    ones = ops.constant(np.ones(rank, np.int64))
    return ops.slice(source, zeros, ops.shape_of(index, "i64"), ones).output(0)


def _with_nan_sources(result, data, index, source, axis, include_self: bool) -> ov.Node:
    """NaN wherever a NaN is among the values reduced into a position (see the module)."""
    flags = ops.convert(ops.is_nan(source), "i32")
    zeros = ops.broadcast(ops.constant(np.int32(0)), ops.shape_of(data, "i64"))
    reached = ops.convert(ops.scatter_elements_update(zeros, index, flags, axis, "max", False), "boolean")
    if include_self:
        reached = ops.logical_or(reached, ops.is_nan(data))
    nan = ops.convert_like(ops.constant(np.float32(np.nan)), data)
    return ops.select(reached, nan, result)


def _integer_mean(data, index, source, axis, include_self: bool) -> ov.Output:
    """The floor of each position's sum over its count; positions nothing reaches keep `data`."""
    total = ops.scatter_elements_update(data, index, source, axis, "sum", include_self)
    ones = ops.broadcast(ops.convert_like(ops.constant(np.int32(1)), data), ops.shape_of(index, "i64"))
    start = ops.convert_like(ops.constant(np.int32(1 if include_self else 0)), data)
    count = ops.scatter_elements_update(ops.broadcast(start, ops.shape_of(data, "i64")), index, ones, axis, "sum", True)
    zero, one = (ops.convert_like(ops.constant(np.int32(value)), data) for value in (0, 1))
    reached = ops.greater(count, zero)
    divisor = ops.maximum(count, one)
    quotient = ops.divide(total, divisor)  # truncating; the divisor is positive
    remainder = ops.subtract(total, ops.multiply(quotient, divisor))
    floored = ops.subtract(quotient, ops.convert_like(ops.less(remainder, zero), data))
    return select_integers(reached.output(0), floored.output(0), data)
