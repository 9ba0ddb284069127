"""Twins of ATen ops with several results, which carry a node the delegate takes through the edge dialect whole.

ExecuTorch keeps a non-core ATen op out of the edge dialect's decompositions and
verifier when a partitioner names it in ``ops_to_not_decompose``, but ExecuTorch
1.5.1 drops every op with more than one result from that list
(``_remove_invalid_ops_for_not_decompose`` compares the schema's aliased results
with ``[None]``, which ``[None, None]`` fails, and logs that the op "aliases
output"). ``to_edge`` then refuses ``sort(stable=True)``, ``kthvalue``, ``mode``...
as not core ATen. So the partitioner gives each such node it takes a twin op before
the edge dialect is made: same schema, same kernel, in our namespace, which the
edge dialect lets through as any custom op. Everything in this package names a twin
by its ATen op (``op_name``), so rules and translations are written once.
"""

from __future__ import annotations

from typing import Dict, Optional

import torch
from torch._ops import OpOverload

NAMESPACE = "executorch_openvino"
_library = torch.library.Library(NAMESPACE, "FRAGMENT")
_twins: Dict[OpOverload, OpOverload] = {}


def twin(op: OpOverload) -> OpOverload:
    """The twin of ATen op `op` in our namespace, defined on first use."""
    if op not in _twins:
        name = op._schema.name.split("::", 1)[1]
        overload = op._schema.overload_name
        qualified = f"{name}.{overload}" if overload else name
        _library.define(str(op._schema).split("::", 1)[1])
        _library.impl(qualified, op, "CompositeExplicitAutograd")
        # Under fake tensors the ATen op's own fake kernel, which makes the sizes that depend on
        # the data (the number of values ``unique`` returns) unbacked symbols.
        torch.library.register_fake(f"{NAMESPACE}::{qualified}", op, lib=_library)
        _twins[op] = getattr(getattr(getattr(torch.ops, NAMESPACE), name), overload or "default")
    return _twins[op]


def aten_op_of(target: object) -> Optional[OpOverload]:
    """The ATen op a twin (or an edge op of a twin) stands for, or None for any other target."""
    op = getattr(target, "_op", target)  # an edge op wraps its op
    return next((aten for aten, twin_op in _twins.items() if twin_op is op), None)


def aten_name(name: str) -> str:
    """ "aten.sort.stable" for a twin's name "executorch_openvino.sort.stable"; other names unchanged."""
    prefix = NAMESPACE + "."
    return "aten." + name[len(prefix) :] if name.startswith(prefix) else name


def twin_name(name: str) -> str:
    """The name the twin of ATen op `name` ("aten.sort.stable") has."""
    return NAMESPACE + name[len("aten") :]
