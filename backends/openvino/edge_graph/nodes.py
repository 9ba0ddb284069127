"""What a graph node calls (the op, named as every part of the package compares it) and the tensor it holds."""

from __future__ import annotations

import operator
from typing import Collection, Optional

import torch
from torch._ops import OpOverload

from .twin_ops import aten_name

#: The edge ops that cast a tensor to another dtype (or copy it to another dim order).
DTYPE_CASTS = frozenset({"aten._to_copy.default", "dim_order_ops._to_dim_order_copy.default"})
#: ExecuTorch's dim-order ops: the conversion turns them back into the aten ops
#: (clone, _to_copy, empty) that OpenVINO's frontend converts (DimOrderOpsRevertPass).
DIM_ORDER_OPS = frozenset(
    {
        "dim_order_ops._clone_dim_order.default",
        "dim_order_ops._to_dim_order_copy.default",
        "dim_order_ops._empty_dim_order.default",
    }
)


def op_name(node: torch.fx.Node) -> str:
    """The op a node calls, as OpenVINO's support table names it.

    Edge ops and raw ATen ops as "aten.add.Tensor" or "aten.sym_size.int", Python's
    operators on symbolic sizes as "_operator.mul", ``operator.getitem`` as "getitem",
    and the twin of an ATen op (twin_ops.py) as that op.
    """
    target = node.target
    if isinstance(target, str):
        return target
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, OpOverload):
        return aten_name(str(target))  # its __name__ drops the namespace: "sym_size.int"
    name = aten_name(getattr(target, "__name__", None) or str(target))
    if getattr(target, "__module__", None) == "_operator":
        return f"_operator.{name}"
    return name


def matches_op_type(name: str, op_types: Collection[str]) -> bool:
    """Whether op `name` is listed in `op_types` by itself or by its overload packet.

    "aten.add.Tensor" matches "aten.add.Tensor" and "aten.add".
    """
    return name in op_types or name.rsplit(".", 1)[0] in op_types


def tensor_value(node: object) -> Optional[torch.Tensor]:
    """The tensor in a node's meta (a fake tensor at partitioning), or None."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None
