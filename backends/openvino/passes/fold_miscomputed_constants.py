"""Ops over constants that OpenVINO's CPU plugin computes wrong, computed once at lowering.

Two ops are folded, each only where every value it reads is constant:

- Integer cumsum. OpenVINO's CPU plugin (seen here on 2026.4.1, reported on
  2025.4.1 and 2026.0.0) gives wrong results from the second inference on for an
  int64 or int32 cumsum whose input is a constant. pi0 builds its attention masks
  from ``cumsum(att_masks)`` over a constant pattern, ANDed with the call's
  padding mask: through one loaded program, each call's mask came out as the AND
  of the masks of every call so far (with 300 valid tokens and then 700, the
  second mask was wrong in 420400 of its 665856 values).
- Abs. The CPU plugin of OpenVINO 2026.4.1 drops an Abs whose input is computed
  from constants only, such as ``Abs(Range(-1, 9))`` or ``Abs(c - 2)``: it returns
  the input unchanged (an Abs of a bare Constant, or of anything that reads a
  Parameter, is right). OpenVINO's own ConstantFolding pass computes it right, so
  the fault is in the plugin's compilation. ExecuTorch's decomposition of
  reflection padding (``Conv2d(padding_mode="reflect")``, ``F.pad(mode="reflect")``)
  computes its indices as ``n - |n - |arange(-p, n + p)||`` and got every padded
  value wrong.

Replacing such a node with its value leaves OpenVINO nothing to get wrong.

Only what is the same on every call is computed: tensors the graph module
holds and no node of the graph writes to (a mutated buffer changes between
calls), and deterministic ATen ops over them. Random ops are not computed, nor
higher-order ops such as ``cond``, whose branches may draw random numbers too.
Only the listed ops are replaced: other constant computations, such as the
unpacking of compressed weights, stay as they are. Constants are copied to plain
CPU memory first, so a program whose constants live on a GPU or in pinned memory
is lowered without a GPU. A node that cannot be computed is left to OpenVINO
with a warning; the others still fold.
"""

from __future__ import annotations

import logging
import operator
from typing import Any, Callable, Dict, List, Optional, Set

import torch
from torch._ops import OpOverload

from ..edge_graph.nodes import op_name
from ..workarounds import works_around

logger = logging.getLogger(__name__)


def _integer_result(node: torch.fx.Node) -> bool:
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and not value.dtype.is_floating_point and not value.dtype.is_complex


# Op name -> which of its nodes OpenVINO's CPU plugin miscomputes over constants.
MISCOMPUTED_OVER_CONSTANTS: Dict[str, Callable[[torch.fx.Node], bool]] = {
    "aten.cumsum.default": _integer_result,
    "aten.abs.default": lambda node: True,
}


@works_around("constant_integer_cumsum", "constant_abs_dropped")
def fold_miscomputed_constants(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Replaces every node of MISCOMPUTED_OVER_CONSTANTS that reads only constants with its value."""
    graph = graph_module.graph
    written = _written_attributes(graph)
    changed = False
    for node in list(graph.nodes):
        if not _is_miscomputed(node):
            continue
        chain = _constant_chain(graph_module, node, written)
        if chain is None:
            continue
        try:
            value = _evaluate(graph_module, chain)
        except Exception as error:  # any op may fail on these constants; the others still fold
            logger.warning(
                "OpenVINO delegate: cannot compute %s%s over constants at lowering (%s: %s); "
                "OpenVINO computes it, and its CPU plugin can give it wrong results",
                node.name,
                _source(node),
                type(error).__name__,
                (str(error).splitlines() or [""])[0],
            )
            continue
        _replace_with_constant(graph_module, node, chain, value)
        changed = True
    if changed:
        graph_module.recompile()
    return graph_module


def _is_miscomputed(node: torch.fx.Node) -> bool:
    if node.op != "call_function":
        return False
    miscomputed = MISCOMPUTED_OVER_CONSTANTS.get(op_name(node))
    return miscomputed is not None and miscomputed(node)


def _overload(target: Any) -> Optional[OpOverload]:
    """The ATen OpOverload behind a call_function target (edge ops wrap one), or None."""
    if isinstance(target, OpOverload):
        return target
    wrapped = getattr(target, "_op", None)
    return wrapped if isinstance(wrapped, OpOverload) else None


def _written_attributes(graph: torch.fx.Graph) -> Set[str]:
    """Targets of the get_attr tensors that some node writes to, such as mutated buffers.

    The unlifted module writes a mutated buffer back with ``copy_`` into its
    get_attr; any op whose schema writes an argument counts.
    """
    written: Set[str] = set()
    for node in graph.nodes:
        op = _overload(node.target) if node.op == "call_function" else None
        if op is None:
            continue
        for index, argument in enumerate(op._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, torch.fx.Node) and item.op == "get_attr":
                    written.add(item.target)
    return written


def _attribute(graph_module: torch.fx.GraphModule, target: str) -> Any:
    value: Any = graph_module
    for part in target.split("."):
        value = getattr(value, part, None)
    return value


def _is_constant_step(graph_module: torch.fx.GraphModule, node: torch.fx.Node, written: Set[str]) -> bool:
    """Whether `node` gives the same value on every call once its inputs do."""
    if node.op == "get_attr":
        return isinstance(_attribute(graph_module, node.target), torch.Tensor) and node.target not in written
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    # ATen ops only: a higher-order op such as cond is not an OpOverload.
    op = _overload(node.target)
    if op is None or torch.Tag.nondeterministic_seeded in op.tags:
        return False
    return not op._schema.is_mutable


def _constant_chain(
    graph_module: torch.fx.GraphModule, target: torch.fx.Node, written: Set[str]
) -> Optional[List[torch.fx.Node]]:
    """`target` and every node it depends on, in graph order, or None if one is not constant."""
    seen: Set[torch.fx.Node] = set()
    pending = [target]
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        if not _is_constant_step(graph_module, node, written):
            return None
        seen.add(node)
        pending.extend(node.all_input_nodes)
    return [node for node in graph_module.graph.nodes if node in seen]


def _to_plain_cpu(value: torch.Tensor) -> torch.Tensor:
    # A copy even on the CPU: a pinned tensor stays pinned through .cpu().
    return value.to(device="cpu", copy=True)


def _on_cpu(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """An op's kwargs with any device set to the CPU, for ops such as full or arange."""
    result = dict(kwargs)
    if result.get("device") is not None:
        result["device"] = torch.device("cpu")
    if result.get("pin_memory"):
        result["pin_memory"] = False
    return result


def _evaluate(graph_module: torch.fx.GraphModule, chain: List[torch.fx.Node]) -> torch.Tensor:
    """The value of the last node of `chain`, computed on the CPU."""
    values: Dict[torch.fx.Node, Any] = {}
    with torch.no_grad():
        for node in chain:
            if node.op == "get_attr":
                values[node] = _to_plain_cpu(_attribute(graph_module, node.target))
                continue
            args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda arg: values[arg])
            values[node] = node.target(*args, **_on_cpu(kwargs))
    result, expected = values[chain[-1]], chain[-1].meta["val"]
    if type(result) is not torch.Tensor or result.device.type != "cpu":
        raise TypeError(f"it computed a {type(result).__name__} on {getattr(result, 'device', None)}")
    if result.dtype != expected.dtype or tuple(result.shape) != tuple(expected.shape):
        raise TypeError(
            f"it computed {result.dtype}{tuple(result.shape)}, the program expects "
            f"{expected.dtype}{tuple(expected.shape)}"
        )
    return result.contiguous()


def _replace_with_constant(
    graph_module: torch.fx.GraphModule, target: torch.fx.Node, chain: List[torch.fx.Node], value: torch.Tensor
) -> None:
    graph = graph_module.graph
    # A new name: register_buffer would silently replace a buffer of the same name,
    # which other nodes may read.
    name, index = f"_folded_{target.name}", 1
    while hasattr(graph_module, name):
        name, index = f"_folded_{target.name}_{index}", index + 1
    graph_module.register_buffer(name, value, persistent=False)
    with graph.inserting_before(target):
        constant = graph.get_attr(name)
    constant.meta = dict(target.meta)
    target.replace_all_uses_with(constant)
    for node in reversed(chain):
        if not node.users:
            graph.erase_node(node)
    logger.debug("OpenVINO delegate: %s%s folded into the constant %s", target.name, _source(target), name)


def _source(node: torch.fx.Node) -> str:
    """The user's source line from the node's stack trace, for messages a user can act on."""
    trace = node.meta.get("stack_trace") or ""
    lines = [line.strip() for line in trace.splitlines() if line.strip().startswith("File ")]
    return f" ({lines[-1]})" if lines else ""
