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
result may still be one off, as before. Float32 truncating division keeps the
frontend's quotient and rounds it toward zero in floats: ``floor(|q|)`` with q's
sign. 16-bit truncating division stays as the frontend makes it, which rounds the
quotient to 16 bits first as PyTorch does (a bfloat16 quotient past 2**31 still
comes back wrong).
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..node_names import op_name

_FLOAT_DIVIDES = ("aten.div.Tensor_mode", "aten.floor_divide.default")
_NARROW_FLOATS = (torch.float16, torch.bfloat16)


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


class _Emitter:
    """Adds edge ops to a graph at its insertion point, each with its example value:
    ``emit.floor.default(x)``."""

    def __init__(self, graph: torch.fx.Graph, packets: Any = None) -> None:
        self.graph = graph
        self.packets = packets

    def __getattr__(self, name: str) -> Any:
        if self.packets is None:
            return _Emitter(self.graph, getattr(exir_ops.edge.aten, name))
        return functools.partial(self._emit, getattr(self.packets, name))

    def _emit(self, overload: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        node = self.graph.call_function(overload, args, kwargs)
        # The frontend types each value from its example; the fake tensors compute it.
        examples = [arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg for arg in args]
        node.meta["val"] = overload(*examples, **kwargs)
        return node


def _corrected_floor(b: _Emitter, dividend, divisor, quotient):
    """floor(dividend / divisor), one unit up or down where the remainder says so."""
    floored = b.floor.default(quotient)
    remainder = b.sub.Tensor(dividend, b.mul.Tensor(floored, divisor))
    # Too large when the remainder is on the other side of zero than the divisor
    # (a product below zero; 0 for an exact quotient).
    too_large = b.lt.Scalar(b.mul.Tensor(remainder, divisor), 0)
    lowered = b.where.self(too_large, b.add.Scalar(floored, -1), floored)
    # Too small when a whole divisor is left over.
    too_small = b.ge.Tensor(b.abs.default(remainder), b.abs.default(divisor))
    return b.where.self(too_small, b.add.Scalar(lowered, 1), lowered)


def _trunc(b: _Emitter, quotient):
    """trunc(quotient) in floats: the frontend's cast through int32 breaks past 2**31."""
    return b.mul.Tensor(b.floor.default(b.abs.default(quotient)), b.sign.default(quotient))


def exact_float_rounded_division(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if not _is_rounded_float_division(node):
            continue
        dtype = node.meta["val"].dtype
        dividend, divisor = node.args[0], node.args[1]
        with graph.inserting_before(node):
            b = _Emitter(graph)
            if _rounding_mode(node) == "trunc":
                result = _trunc(b, b.div.Tensor(dividend, divisor))
            else:
                widen = dtype in _NARROW_FLOATS
                if widen:
                    dividend = b._to_copy.default(dividend, dtype=torch.float32)
                    divisor = b._to_copy.default(divisor, dtype=torch.float32)
                result = _corrected_floor(b, dividend, divisor, b.div.Tensor(dividend, divisor))
                if widen:
                    result = b._to_copy.default(result, dtype=dtype)
        result.meta = dict(node.meta)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
