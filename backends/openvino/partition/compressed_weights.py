"""NNCF's packed 4-bit weights, taken whole so that OpenVINO receives 4-bit constants.

``nncf.compress_weights`` stores two 4-bit values in each byte of a uint8 weight
and unpacks them in the graph::

    stack([bitwise_and(w, 15), bitwise_right_shift(w, 4)], -1)

OpenVINO's PyTorch frontend turns exactly this pattern, read from one uint8
constant, into a u4 constant (i4 once the ``- 8`` of a symmetric scheme is folded
in), which its CPU plugin multiplies in 4 bits. ExecuTorch would break the pattern:
it decomposes ``stack`` into ``unsqueeze`` and ``cat``, and its verifier refuses the
shift, which is not core ATen. So the partitioner asks ExecuTorch to keep both whole
on such nodes (``ops_to_not_decompose``) and takes them into the partition.

The frontend converts the shift only inside this pattern, from real constants. The
partitioner sees fake weights, so its trial conversion takes the unpacked value as
an input instead (`unpacked_stand_ins`).
"""

from __future__ import annotations

import logging
from typing import Collection, FrozenSet, Iterable, List, Optional

import torch

from ..edge_graph.nodes import op_name

logger = logging.getLogger(__name__)

UNPACK_SHIFT = torch.ops.aten.bitwise_right_shift.Tensor_Scalar
STACK = torch.ops.aten.stack.default
_SHIFT_NAME = "aten.bitwise_right_shift.Tensor_Scalar"
_LOW_HALF = "aten.bitwise_and.Scalar"


def packed_weight(stack: torch.fx.Node, constants: Collection[str]) -> Optional[torch.fx.Node]:
    """The uint8 constant that `stack` unpacks into 4-bit values, or None when it is another stack.

    `constants` names the program's weight placeholders (``constant_input_names``).
    """
    if stack.op != "call_function" or op_name(stack) != "aten.stack.default":
        return None
    halves = stack.args[0]
    dim = stack.args[1] if len(stack.args) > 1 else stack.kwargs.get("dim", 0)
    # The frontend matches the new axis only as -1.
    if dim != -1 or not isinstance(halves, (list, tuple)) or len(halves) != 2:
        return None
    low, high = halves
    if not (_is_call(low, _LOW_HALF, 15) and _is_call(high, _SHIFT_NAME, 4)):
        return None
    weight = low.args[0]
    if weight is not high.args[0] or not _reads_packed_constant(high, constants):
        return None
    return weight


def is_unpack_node(node: torch.fx.Node, constants: Collection[str]) -> bool:
    """Whether `node` is the stack or the shift of a 4-bit unpack (`packed_weight`)."""
    if packed_weight(node, constants) is not None:
        return True
    return op_name(node) == _SHIFT_NAME and any(packed_weight(user, constants) is not None for user in node.users)


def unpacked_stand_ins(nodes: Iterable[torch.fx.Node], constants: Collection[str]) -> FrozenSet[torch.fx.Node]:
    """The unpack stacks among `nodes`: a trial conversion takes their value as an input."""
    return frozenset(node for node in nodes if packed_weight(node, constants) is not None)


def warn_about_unpacks_on_cpu(graph: torch.fx.Graph, constants: Collection[str]) -> List[str]:
    """Logs a warning naming each 4-bit unpack left outside every partition; returns the names.

    Such a weight is unpacked by ExecuTorch's CPU kernels at every call, many times
    slower than OpenVINO's 4-bit kernels. It happens when the program was made with
    ``to_edge`` (which decomposed the unpack before the partitioner saw it) or when
    the user skipped one of its ops.
    """
    left = [
        node.name
        for node in graph.nodes
        if op_name(node) == _SHIFT_NAME
        and _reads_packed_constant(node, constants)
        and "delegation_tag" not in node.meta
    ]
    if left:
        logger.warning(
            "OpenVINO partitioner: the 4-bit weight unpacking of %s stays on ExecuTorch's CPU "
            "kernels and runs at every call. Lower with to_edge_transform_and_lower(..., "
            "partitioner=[OpenvinoPartitioner(...)]) so that the partitioner keeps NNCF's "
            "unpacking whole and OpenVINO receives 4-bit weights.",
            ", ".join(left),
        )
    return left


def _reads_packed_constant(node: torch.fx.Node, constants: Collection[str]) -> bool:
    """Whether `node`'s first argument is a uint8 weight placeholder."""
    weight = node.args[0] if node.args else None
    value = weight.meta.get("val") if isinstance(weight, torch.fx.Node) else None
    return (
        isinstance(weight, torch.fx.Node)
        and weight.op == "placeholder"
        and weight.name in constants
        and isinstance(value, torch.Tensor)
        and value.dtype == torch.uint8
    )


def _is_call(node: object, name: str, scalar: int) -> bool:
    return (
        isinstance(node, torch.fx.Node)
        and node.op == "call_function"
        and op_name(node) == name
        and len(node.args) == 2
        and isinstance(node.args[0], torch.fx.Node)
        and node.args[1] == scalar
    )
