"""Profiling with ExecuTorch's devtools: what relates OpenVINO's layers to the edge program.

A method loaded with an event tracer logs one event per OpenVINO layer per call
(runtime/layer_events.h), named by the layer's name in OpenVINO's compiled model.
Lowering stores, for each partition, a debug handle map from those names to the
debug handles of the edge operators each layer computes, so that
``executorch.devtools.Inspector`` shows a layer's operators, stack traces and
module hierarchy. docs/profiling.md shows the whole flow.

How the names are related: OpenVINO's PyTorch frontend names each op it makes
``<fx node name>/<aten op>/<op>``; the CPU plugin's compiled model keeps, for each
layer, the names of the ops it fused (``originalLayersNames``). The map is keyed
by the layers of the model compiled at lowering (preprocess compiles it once to
check it) and by every op of the IR, for a layer that a load with other settings
names after a single op.
"""

from __future__ import annotations

import json
from typing import Dict, Iterable, List, Mapping, Optional, Tuple, Union

import torch

import openvino as ov

#: A partition's debug handle map, as ExecuTorch's PreprocessResult takes it.
DebugHandleMap = Dict[str, Tuple[int, ...]]

# The rt_info key under which the CPU plugin's runtime model lists a layer's fused ops.
_ORIGINAL_LAYERS = "originalLayersNames"

#: The rt_info key under which a rewrite lists, comma-separated, the names of the ops it
#: replaced by the op holding it (conversion/rewrites/sibling_products.py: the products
#: a joined product computes too). Read at lowering only: IR files do not keep it.
ALSO_COMPUTES = "etov_also_computes"


def _own_handles(node: torch.fx.Node) -> Tuple[int, ...]:
    handle = node.meta.get("debug_handle")
    if isinstance(handle, int):
        return (handle,)
    if isinstance(handle, (tuple, list)):
        return tuple(handle)
    return ()


def node_debug_handles(edge_graph: torch.fx.Graph, graph_module: torch.fx.GraphModule) -> Dict[str, Tuple[int, ...]]:
    """The edge debug handles of each node of `graph_module`, the partition `edge_graph` prepared for conversion.

    A node keeps its own handle through our lowering passes. A node that a pass
    added has none: it takes the handles of the nodes the passes removed in its
    place (those that, in `edge_graph`, fed the nodes it now feeds, and what fed
    only them), or, where it replaced nothing (a cast put before an op), those of
    the nodes it feeds.
    """
    before = {node.name: node for node in edge_graph.nodes}
    after = {node.name for node in graph_module.graph.nodes}
    removed = {name for name, node in before.items() if name not in after and node.op == "call_function"}

    def replaced_before(survivor: torch.fx.Node) -> Tuple[int, ...]:
        """The handles of the removed nodes that fed `survivor` in the edge graph, and of those that fed them."""
        found, seen = set(), set()
        stack = [arg for arg in before[survivor.name].all_input_nodes if arg.name in removed]
        while stack:
            node = stack.pop()
            if node.name not in seen:
                seen.add(node.name)
                found.update(_own_handles(node))
                stack.extend(arg for arg in node.all_input_nodes if arg.name in removed)
        return tuple(found)

    handles: Dict[str, Tuple[int, ...]] = {}
    for node in reversed(graph_module.graph.nodes):
        own = _own_handles(node)
        if own or node.op != "call_function":
            if own:
                handles[node.name] = own
            continue
        found = set()
        for user in node.users:
            if user.name in before:
                found.update(replaced_before(user) or handles.get(user.name, ()))
            else:
                found.update(handles.get(user.name, ()))
        if found:
            handles[node.name] = tuple(sorted(found))
    return handles


def _handles_of(names: Iterable[str], handles_by_node: Mapping[str, Tuple[int, ...]]) -> Tuple[int, ...]:
    """The debug handles of the FX nodes that OpenVINO op names start with (``<node>/...``)."""
    found = set()
    for name in names:
        node, slash, _ = name.partition("/")
        if slash:
            found.update(handles_by_node.get(node, ()))
    return tuple(sorted(found))


def layer_debug_handle_map(
    model: ov.Model,
    handles_by_node: Mapping[str, Tuple[int, ...]],
    compiled: Optional[ov.CompiledModel] = None,
) -> Optional[DebugHandleMap]:
    """The debug handle map of a partition converted to `model`.

    Args:
        model: the partition's OpenVINO model, as stored in the blob.
        handles_by_node: ``node_debug_handles`` of the graph module it was converted from.
        compiled: `model` compiled as the runtime compiles it, when lowering did.

    Returns:
        Layer or op name -> the sorted edge debug handles it computes; None when no
        name relates to a node with a handle.
    """
    also = {
        op.get_friendly_name(): op.get_rt_info()[ALSO_COMPUTES].astype(str).split(",")
        for op in model.get_ordered_ops()
        if ALSO_COMPUTES in op.get_rt_info()
    }

    def with_replaced(names: List[str]) -> List[str]:
        return [each for name in names for each in (name, *also.get(name, ()))]

    handle_map: DebugHandleMap = {}
    for op in model.get_ordered_ops():
        handles = _handles_of(with_replaced([op.get_friendly_name()]), handles_by_node)
        if handles:
            handle_map[op.get_friendly_name()] = handles
    if compiled is not None:
        for layer in compiled.get_runtime_model().get_ordered_ops():
            info = layer.get_rt_info()
            fused = info[_ORIGINAL_LAYERS].astype(str).split(",") if _ORIGINAL_LAYERS in info else []
            handles = _handles_of(with_replaced([layer.get_friendly_name(), *fused]), handles_by_node)
            if handles:
                handle_map[layer.get_friendly_name()] = handles
    return handle_map or None


def layer_metadata(metadatas: List[Union[bytes, str]]) -> Dict[str, str]:
    """Reads our events' metadata, for ``Inspector(delegate_metadata_parser=layer_metadata)``.

    Each event carries ``{"node_type", "exec_type", "runtime_precision"}``: the
    layer's type, the kernel OpenVINO ran it with, and the precision it ran at.
    Returns each field once, or its distinct values joined by ", " when calls ran
    the layer differently (a dynamic shape can change the kernel). Metadata that is
    not ours (another delegate's) comes back under "raw".
    """
    values: Dict[str, List[str]] = {}
    for metadata in metadatas:
        text = metadata.decode("utf-8", "replace") if isinstance(metadata, bytes) else metadata
        try:
            fields = json.loads(text)
        except ValueError:
            fields = None
        if not isinstance(fields, dict):
            fields = {"raw": text}
        for key, value in fields.items():
            seen = values.setdefault(key, [])
            if str(value) not in seen:
                seen.append(str(value))
    return {key: ", ".join(seen) for key, seen in values.items()}
