"""Maxima of values that are all -inf (and minima of all +inf) kept infinite.

OpenVINO 2026.4.1's CPU plugin starts ``ReduceMax`` and ``MaxPool`` from the lowest
finite float rather than -inf (OpenVINO alone too): the max of a row of -inf, such as
a fully masked row of scores, came out -3.4e38, and ``isinf`` tests of it failed,
without an error. ``ReduceMin`` returns +3.4e38 for +inf alike. A second, boolean
reduction tells where every value is that infinity, and a Select puts it back there;
anywhere else the plugin's own answer is kept.
"""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.utils.node_factory import NodeFactory

from ...workarounds import works_around
from .model_edits import put_after, scalar_like

# Op -> the infinity it misses.
_REDUCTIONS = {"ReduceMax": -np.inf, "ReduceMin": np.inf}
_POOLS = {"MaxPool": -np.inf}


@works_around("infinite_extremes_finite")
def keep_infinite_extremes(model: ov.Model) -> None:
    """Puts the infinity back into each float ReduceMax, ReduceMin and MaxPool result, in place."""
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind not in _REDUCTIONS and kind not in _POOLS:
            continue
        if not node.get_input_element_type(0).is_real():
            continue
        result = node.output(0)
        infinity = _REDUCTIONS.get(kind, _POOLS.get(kind))
        if kind in _REDUCTIONS:
            kept = _reduction_reaching_other_values(node, infinity)
        else:
            kept = _pool_reaching_other_values(node, infinity)
        put_after(result, ov_ops.select(kept, result, scalar_like(result, infinity)).output(0))
    model.validate_nodes_and_infer_types()


def _reduction_reaching_other_values(node: ov.Node, infinity: float) -> ov.Output:
    data, axes = node.input_value(0), node.input_value(1)
    other = ov_ops.not_equal(data, scalar_like(data, infinity))
    return ov_ops.reduce_logical_or(other, axes, keep_dims=node.get_attributes()["keep_dims"]).output(0)


def _pool_reaching_other_values(node: ov.Node, infinity: float) -> ov.Output:
    data = node.input_value(0)
    # 1 where a value is not the infinity, pooled in the same windows: 0 where none is.
    other = ov_ops.convert(ov_ops.not_equal(data, scalar_like(data, infinity)), data.get_element_type())
    factory = NodeFactory(node.get_type_info().version_id)
    pooled = factory.create(node.get_type_name(), [other.output(0)], node.get_attributes()).output(0)
    return ov_ops.not_equal(pooled, scalar_like(data, 0.0)).output(0)
