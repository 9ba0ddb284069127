"""Floating-point floor division corrected by its remainder; truncating division kept in floats.

OpenVINO's CPU plugin (seen on 2026.4.1) divides floats through a reciprocal, up to
1 ulp from the correctly rounded quotient (84 / 7 gives 12.000001), held in 16 bits
when the divisor is a float16 or bfloat16 constant. Floor division turns that ulp
into a whole unit: ``-84 // 7`` came out -13, float16 ``36 // 3`` 11. And the
frontend truncates through int32, so a quotient past 2**31 came back as -2**31. All
without an error.

Floor division is computed in float32 (16-bit inputs widened, as PyTorch computes
them) and checked by the remainder it leaves, ``a - q * b``: a remainder on the
other side of zero than the divisor, or a whole divisor, moves the quotient by the
unit it is off. The remainder is exact for integral values (and so the result);
for a quotient within an ulp of an integer from other values it is not, and the
result may still be one off, as before. Float32 truncating division is the
corrected floor of the magnitudes, ``|a| // |b|``, with the quotient's sign, in
floats (truncating the quotient alone gave 481 for 22654 / 47). 16-bit truncating
division stays as the frontend makes it, which rounds the quotient to 16 bits first
as PyTorch does (a bfloat16 quotient past 2**31 still comes back wrong).
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name
from ..workarounds import works_around
from .graph_edits import emit, replace

_FLOAT_DIVIDES = ("aten.div.Tensor_mode", "aten.floor_divide.default")
_NARROW_FLOATS = (torch.float16, torch.bfloat16)
aten = exir_ops.edge.aten


def _rounding_mode(node: torch.fx.Node) -> str:
    if op_name(node) == "aten.floor_divide.default":
        return "floor"
    return node.kwargs.get("rounding_mode") or ""


def _is_rounded_float_division(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or op_name(node) not in _FLOAT_DIVIDES:
        return False
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
        return False
    mode = _rounding_mode(node)
    # The frontend's truncation rounds a 16-bit quotient to 16 bits first, as PyTorch
    # does and the float path below would not: it is left as it is.
    return mode == "floor" or (mode == "trunc" and value.dtype not in _NARROW_FLOATS)


def _corrected_floor(graph: torch.fx.Graph, dividend, divisor, quotient):
    """floor(dividend / divisor), one unit up or down where the remainder says so."""
    floored = emit(graph, aten.floor.default, quotient)
    remainder = emit(graph, aten.sub.Tensor, dividend, emit(graph, aten.mul.Tensor, floored, divisor))
    # Too large when the remainder is on the other side of zero than the divisor
    # (a product below zero; 0 for an exact quotient).
    too_large = emit(graph, aten.lt.Scalar, emit(graph, aten.mul.Tensor, remainder, divisor), 0)
    lowered = emit(graph, aten.where.self, too_large, emit(graph, aten.add.Scalar, floored, -1), floored)
    # Too small when a whole divisor is left over.
    too_small = emit(
        graph, aten.ge.Tensor, emit(graph, aten.abs.default, remainder), emit(graph, aten.abs.default, divisor)
    )
    return emit(graph, aten.where.self, too_small, emit(graph, aten.add.Scalar, lowered, 1), lowered)


def _floor_at_infinities(graph: torch.fx.Graph, dividend, divisor, quotient, floored):
    """PyTorch's floor division where an operand is infinite, which the remainder cannot
    correct (it is NaN there): NaN for an infinite dividend; for a finite one over an
    infinite divisor, -1 where the two have opposite signs, else the quotient's signed zero."""
    result = floored
    if isinstance(divisor, torch.fx.Node):
        below_zero = emit(
            graph, aten.ne.Tensor, emit(graph, aten.lt.Scalar, dividend, 0), emit(graph, aten.lt.Scalar, divisor, 0)
        )
        minus_one = emit(graph, aten.logical_and.default, below_zero, emit(graph, aten.ne.Scalar, dividend, 0))
        at_infinity = emit(
            graph,
            aten.where.self,
            minus_one,
            emit(graph, aten.add.Scalar, emit(graph, aten.mul.Scalar, quotient, 0), -1),
            quotient,
        )
        result = emit(graph, aten.where.self, emit(graph, aten.isinf.default, divisor), at_infinity, result)
    if isinstance(dividend, torch.fx.Node):
        not_a_number = emit(graph, aten.mul.Scalar, dividend, 0)  # inf * 0
        result = emit(graph, aten.where.self, emit(graph, aten.isinf.default, dividend), not_a_number, result)
    return result


def _corrected_trunc(graph: torch.fx.Graph, dividend, divisor):
    """trunc(dividend / divisor): the corrected floor of the magnitudes, with the
    quotient's sign. In floats: the frontend's cast through int32 breaks past 2**31."""
    quotient = emit(graph, aten.div.Tensor, dividend, divisor)
    magnitude = _corrected_floor(
        graph,
        emit(graph, aten.abs.default, dividend),
        emit(graph, aten.abs.default, divisor),
        emit(graph, aten.abs.default, quotient),
    )
    return emit(graph, aten.mul.Tensor, magnitude, emit(graph, aten.sign.default, quotient))


@works_around("float_division_one_ulp_off", "float_truncation_through_int32")
def exact_float_rounded_division(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if not _is_rounded_float_division(node):
            continue
        dtype = node.meta["val"].dtype
        dividend, divisor = node.args[0], node.args[1]
        with graph.inserting_before(node):
            if _rounding_mode(node) == "trunc":
                result = _corrected_trunc(graph, dividend, divisor)
            else:
                widen = dtype in _NARROW_FLOATS
                if widen:
                    dividend = emit(graph, aten._to_copy.default, dividend, dtype=torch.float32)
                    divisor = emit(graph, aten._to_copy.default, divisor, dtype=torch.float32)
                quotient = emit(graph, aten.div.Tensor, dividend, divisor)
                floored = _corrected_floor(graph, dividend, divisor, quotient)
                result = _floor_at_infinities(graph, dividend, divisor, quotient, floored)
                if widen:
                    result = emit(graph, aten._to_copy.default, result, dtype=dtype)
        replace(graph, node, result)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
