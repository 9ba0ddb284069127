"""Scatter indices below -size made one past the end, which the CPU plugin refuses.

OpenVINO 2026.4.1's CPU plugin raises an error for a ScatterElementsUpdate index at or
past the end of its axis and counts an index in ``-size .. -1`` from the end, but
writes outside its tensor for one below ``-size``: ``x.scatter(1, i - 10, v)`` with
such an index corrupted the heap, and the process aborted later (eager PyTorch raises
an index error). Delegate inputs read as indices are checked by the runtime
(index_bounds.py); indices computed inside the delegate are not, so each one below
``-size`` is replaced by ``size``: the call then fails with OpenVINO's own error.
"""

from __future__ import annotations

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import works_around


@works_around("scatter_index_below_range")
def refuse_scatter_indices_below_range(model: ov.Model) -> None:
    """Puts the replacement before the indices of each ScatterElementsUpdate, in place."""
    changed = False
    for node in model.get_ordered_ops():
        if node.get_type_name() != "ScatterElementsUpdate":
            continue
        axis = node.input_value(3).get_node()
        rank = node.get_input_partial_shape(0).rank
        if axis.get_type_name() != "Constant" or rank.is_dynamic:
            continue
        dimension = int(axis.get_vector()[0]) % rank.get_length()
        indices = node.input_value(1)
        index_type = indices.get_element_type()
        size = ov_ops.gather(
            ov_ops.shape_of(node.input_value(0), index_type),
            ov_ops.constant(np.array([dimension], np.int64)),
            ov_ops.constant(np.array(0, np.int64)),
        )
        below = ov_ops.less(indices, ov_ops.negative(size))
        node.input(1).replace_source_output(ov_ops.select(below, size, indices).output(0))
        changed = True
    if changed:
        model.validate_nodes_and_infer_types()
