"""The debug handle map preprocess stores: what relates OpenVINO's layers to the edge program.

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

from typing import Dict, Iterable, List, Mapping, Optional, Tuple

import openvino as ov

from ..edge_graph.debug_handles import ALSO_COMPUTES

#: A partition's debug handle map, as ExecuTorch's PreprocessResult takes it.
DebugHandleMap = Dict[str, Tuple[int, ...]]

# The rt_info key under which the CPU plugin's runtime model lists a layer's fused ops.
_ORIGINAL_LAYERS = "originalLayersNames"


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
