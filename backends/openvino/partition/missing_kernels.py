"""A warning at lowering for each op left on the CPU that ``executorch.runtime`` has no kernel for.

A node the partitioner leaves to ExecuTorch runs on the kernels the runtime that
loads the program links. ``executorch.runtime`` (ExecuTorch 1.5.1's Python runtime)
links the portable kernels; when they lack the node's op, the program lowers and
saves, and then fails to load with ``Missing operator`` (error 0x14), far from the
cause. So the partitioner looks each node it leaves up in the runtime's operator
registry (``Runtime.get().operator_registry``, the names the runtime resolves kernels
by, such as ``aten::cumsum.out``: the op's out variant, which ``to_executorch`` puts
in the program) and warns, naming the op, why OpenVINO does not take it, and what to
do. ExecuTorch 1.5.1's other kernel libraries do not help: the optimized CPU kernels
register only ops the portable ones have, the quantized and LLM custom-op libraries
only their own namespaces.

The registry is read once per process; without a loadable runtime there is no check.
"""

from __future__ import annotations

import functools
import logging
from typing import Callable, Dict, FrozenSet, List, Optional

import torch
from torch.export import ExportedProgram

from ..edge_graph.nodes import op_name

logger = logging.getLogger(__name__)

#: The runtime's error for a program whose op has no kernel (executorch/runtime/core/error.h).
MISSING_OPERATOR_ERROR = "Missing operator (error 0x14)"


@functools.lru_cache(maxsize=1)
def runtime_kernel_names() -> Optional[FrozenSet[str]]:
    """The operators ``executorch.runtime`` has kernels for ("aten::cumsum.out"), or None without a runtime."""
    try:
        from executorch.runtime import Runtime

        return frozenset(Runtime.get().operator_registry.operator_names)
    except Exception as error:  # no runtime in this environment: nothing to check against
        logger.debug("executorch.runtime's operator registry is not readable: %s", error)
        return None


def kernel_name(node: torch.fx.Node) -> Optional[str]:
    """The name ExecuTorch's runtime looks `node`'s kernel up by ("aten::cummax.out"), or None
    for a node that is no ATen-style op with an out variant (getitem, symbolic sizes)."""
    from executorch.exir.operator.convert import to_out_variant

    target = getattr(node.target, "_op", node.target)  # an edge op wraps its ATen op
    if not isinstance(target, torch._ops.OpOverload):
        return None
    try:
        out_variant, _ = to_out_variant(target)
    except Exception:  # no out variant: to_executorch refuses the op with its own error
        return None
    return f"{out_variant._schema.name}.{out_variant._overloadname}"


def warn_about_ops_without_kernels(
    program: ExportedProgram, reason_on_cpu: Callable[[torch.fx.Node], Optional[str]]
) -> List[str]:
    """Warns once per op for the untagged nodes whose kernel the runtime lacks; returns those kernels' names.

    `reason_on_cpu` gives why the partitioner left a node out (None: no reason known).
    """
    available = runtime_kernel_names()
    if available is None:
        return []
    missing: Dict[str, List[torch.fx.Node]] = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or "delegation_tag" in node.meta:
            continue
        kernel = kernel_name(node)
        if kernel is not None and kernel not in available:
            missing.setdefault(kernel, []).append(node)
    for kernel, nodes in missing.items():
        reason = reason_on_cpu(nodes[0])
        logger.warning(
            "OpenVINO partitioner leaves %s (%d node(s), first %r) on ExecuTorch's CPU kernels%s, and "
            "executorch.runtime's portable kernels have no %s: the program will fail to load with %s. "
            "Load it with a runtime that links a kernel of its own for %s (registered with EXECUTORCH_LIBRARY; "
            "ExecuTorch 1.5.1's optimized, quantized and LLM custom-op libraries have none), or change the "
            "model so that it does not call %s.",
            op_name(nodes[0]),
            len(nodes),
            nodes[0].name,
            f" ({reason})" if reason else "",
            kernel,
            MISSING_OPERATOR_ERROR,
            kernel,
            op_name(nodes[0]),
        )
    return list(missing)
