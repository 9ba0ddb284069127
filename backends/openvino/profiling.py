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


def node_debug_handles(graph_module: torch.fx.GraphModule) -> Dict[str, Tuple[int, ...]]:
    """Each node's edge debug handles, by node name.

    A node that a lowering pass added has no handle of its own; it takes those of
    the nodes it feeds, since it computes part of what they compute.
    """
    handles: Dict[str, Tuple[int, ...]] = {}
    for node in reversed(graph_module.graph.nodes):
        own = node.meta.get("debug_handle")
        if isinstance(own, int):
            handles[node.name] = (own,)
        elif isinstance(own, (tuple, list)) and own:
            handles[node.name] = tuple(own)
        elif node.op == "call_function":
            inherited = sorted({handle for user in node.users for handle in handles.get(user.name, ())})
            if inherited:
                handles[node.name] = tuple(inherited)
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
    handle_map: DebugHandleMap = {}
    for op in model.get_ordered_ops():
        handles = _handles_of([op.get_friendly_name()], handles_by_node)
        if handles:
            handle_map[op.get_friendly_name()] = handles
    if compiled is not None:
        for layer in compiled.get_runtime_model().get_ordered_ops():
            info = layer.get_rt_info()
            fused = info[_ORIGINAL_LAYERS].astype(str).split(",") if _ORIGINAL_LAYERS in info else []
            handles = _handles_of([layer.get_friendly_name(), *fused], handles_by_node)
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
