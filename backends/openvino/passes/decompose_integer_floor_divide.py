"""Integer floor division through truncating division.

OpenVINO's CPU plugin (seen on 2026.4.1) computes an integer
``div(x, y, rounding_mode="floor")`` as a truncating division: ``-7 // 2`` comes
out as -3, not -4, for int32 and int64 alike, without an error. Its truncating
division is right (exact at every size: conversion/rewrites/exact_integer_division.py),
so the floor is rebuilt from it: the quotient goes one down where the remainder is
not zero and its sign differs from the divisor's.
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops

from ..edge_graph.nodes import op_name

_FLOOR_DIVIDE_OPS = ("aten.div.Tensor_mode", "aten.floor_divide.default")


def _is_integer_floor_divide(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or op_name(node) not in _FLOOR_DIVIDE_OPS:
        return False
    if op_name(node) == "aten.div.Tensor_mode" and node.kwargs.get("rounding_mode") != "floor":
        return False
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and not value.dtype.is_floating_point and value.dtype != torch.bool


def decompose_integer_floor_divide(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    aten = exir_ops.edge.aten
    graph = graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if not _is_integer_floor_divide(node):
            continue
        dividend, divisor = node.args[0], node.args[1]
        with graph.inserting_before(node):
            quotient = graph.call_function(aten.div.Tensor_mode, (dividend, divisor), {"rounding_mode": "trunc"})
            remainder = graph.call_function(
                aten.sub.Tensor, (dividend, graph.call_function(aten.mul.Tensor, (quotient, divisor)))
            )
            inexact = graph.call_function(aten.ne.Scalar, (remainder, 0))
            remainder_negative = graph.call_function(aten.lt.Scalar, (remainder, 0))
            divisor_negative = graph.call_function(aten.lt.Scalar, (divisor, 0))
            signs_differ = graph.call_function(aten.ne.Tensor, (remainder_negative, divisor_negative))
            # One less, as arithmetic: OpenVINO's CPU plugin computes a Select fused with
            # the comparison it reads in float32 (2026.4.1), which lost int32 quotients past
            # 2**24; bitwise_and, as the frontend does not convert logical_and.
            one_less = graph.call_function(aten.bitwise_and.Tensor, (inexact, signs_differ))
            floored = graph.call_function(
                aten.sub.Tensor,
                (quotient, graph.call_function(aten._to_copy.default, (one_less,), {"dtype": node.meta["val"].dtype})),
            )
        floored.meta = dict(node.meta)
        node.replace_all_uses_with(floored)
        graph.erase_node(node)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module
