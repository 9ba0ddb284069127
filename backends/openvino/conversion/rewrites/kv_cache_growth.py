"""A KV cache written at given positions, rewritten as a cache that grows by concatenation.

The Llama of ExecuTorch's examples keeps each layer's keys and values in a buffer of
``max_seq_len`` positions, writes a call's positions into it (``index_put``) and
attends over all of it, masking the empty positions. As OpenVINO state (see
state.py) that is ReadValue -> ScatterNDUpdate -> Assign, and every decode
step reads and copies the whole buffer. OpenVINO's own LLM pipelines keep a cache
that grows: ReadValue -> Concat(past, new) -> Assign, read by attention; the CPU
plugin fuses that with ScaledDotProductAttention into one kernel that appends in
place and attends over the filled positions only.

This rewrite turns the first form into the second, with the attention mask cut to
the filled length. The two agree only while each call's positions continue the
sequence (``positions[0]`` equals the number of positions filled) or start again at
0; the C++ runtime checks that before every call, from the name given to the
positions input (kCachePositionsName in backend.h), and resets the state when a
call starts again at 0. Cutting the mask agrees with eager PyTorch only if the model
masks the unfilled positions itself, so the mask must be the rows of a constant
causal mask chosen by the positions; and the cache must be of batch 1. Anything that
does not match the pattern exactly is left as it was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional, Set

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.op.util import Variable, VariableInfo

from ...edge_graph.kv_cache_names import CACHE_POSITIONS_NAME, GROWN_CACHE_SUFFIX
from ...workarounds import not_a_workaround

logger = logging.getLogger(__name__)

# A mask value at or below which softmax gives exactly 0, whatever the score it is added to.
_HIDING = -1e30
# Ops between a cache and attention that repeat grouped KV heads or change layout.
_HEAD_REPEAT_OPS = frozenset({"Unsqueeze", "Broadcast", "Reshape", "Multiply", "Convert"})


@dataclass
class _CacheWrite:
    assign: ov.Node
    read: ov.Node
    new_values: ov.Output  # this call's keys or values, in the scatter's layout
    to_cache_layout: List[int]  # the permutation back to the cache's layout
    axis: int  # the position axis of the cache
    length: int  # positions the cache holds
    positions: "_Positions"
    attention: List[ov.Node]


@dataclass
class _Positions:
    """Where a call's values go: a positions Parameter that lists each position, or
    (a dynamic-length export) holds the first one, with the count taken from
    dimension `count_dim` of Parameter `counted` (the tokens, or the positions
    themselves where they list every position)."""

    parameter: ov.Node
    counted: Optional[ov.Node] = None
    count_dim: int = 0

    def key(self) -> tuple:
        return id(self.parameter), id(self.counted), self.count_dim

    def count(self) -> ov.Output:
        """The number of positions a call writes, as an i64 tensor of shape [1]."""
        if self.counted is None:
            size = self.parameter.get_output_partial_shape(0)[0].get_length()
            return ov_ops.constant(np.array([size], np.int64)).output(0)
        sizes = ov_ops.shape_of(self.counted, ov.Type.i64)
        return ov_ops.gather(
            sizes, ov_ops.constant(np.array([self.count_dim], np.int64)), ov_ops.constant(np.array(0, np.int64))
        ).output(0)

    def marker(self, model: ov.Model, length: int) -> str:
        """The name the C++ runtime finds the positions by (CacheSequence in kv_cache.cpp)."""
        name = f"{CACHE_POSITIONS_NAME}.max={length}"
        if self.counted is not None:
            index = [id(parameter) for parameter in model.get_parameters()].index(id(self.counted))
            name += f".count={index}:{self.count_dim}"
        return name


@not_a_workaround("a speed-up: the KV cache OpenVINO's own LLM pipelines use")
def grow_kv_caches(model: ov.Model) -> ov.Model:
    """Rewrites every cache of `model` that matches the pattern; returns the model."""
    writes = [write for write in map(_match, model.get_sinks()) if write is not None]
    if not writes or len({write.positions.key() for write in writes}) != 1:
        return model
    where = writes[0].positions
    positions = where.parameter
    count = where.count()
    # OpenVINO's fused attention wants a beam index it cannot fold: zeros computed
    # from the positions (batch 1, nothing reordered).
    beam = ov_ops.convert(
        ov_ops.multiply(
            ov_ops.slice(positions, [0], [1], [1]),
            ov_ops.constant(np.array([0], positions.get_element_type().to_dtype())),
        ),
        ov.Type.i32,
    )
    _label_dynamic_sizes(model)
    masked: Set[int] = set()
    for write in writes:
        _append(model, write, beam)
        for attention in write.attention:
            if id(attention) not in masked:
                _cut_mask(attention, positions, count)
                masked.add(id(attention))
    length = writes[0].length
    positions.output(0).get_tensor().add_names({where.marker(model, length)})
    model.validate_nodes_and_infer_types()
    logger.info("OpenVINO delegate: %d KV cache(s) of %d positions grow by concatenation", len(writes), length)
    return model


def _match(assign: ov.Node) -> Optional[_CacheWrite]:
    back = assign.input_value(0).get_node()
    if back.get_type_name() != "Transpose":
        return None
    scatter = back.input_value(0).get_node()
    if scatter.get_type_name() != "ScatterNDUpdate":
        return None
    forth = scatter.input_value(0).get_node()
    if forth.get_type_name() != "Transpose":
        return None
    read = forth.input_value(0).get_node()
    if read.get_type_name() != "ReadValue" or read.get_variable_id() != assign.get_variable_id():
        return None
    forth_order, back_order = _order(forth), _order(back)
    if (
        forth_order is None
        or back_order is None
        or [forth_order[i] for i in back_order] != list(range(len(back_order)))
    ):
        return None
    shape = read.get_output_partial_shape(0)
    if not shape.is_static:
        return None
    axis = forth_order[0]
    indices = scatter.input_value(1)
    positions = _positions_behind(indices.get_node(), shape[axis].get_length())
    indices_shape = indices.get_partial_shape()
    if positions is None or indices_shape.rank.is_dynamic or indices_shape.rank.get_length() != 2:
        return None
    if not indices_shape[1].is_static or indices_shape[1].get_length() != 1:
        return None
    parameter_shape = positions.parameter.get_output_partial_shape(0)
    if parameter_shape.rank.is_dynamic or parameter_shape.rank.get_length() != 1:
        return None
    if positions.counted is None and not parameter_shape.is_static:
        return None  # the count is the positions' own length, which must be known
    # Counted from the tokens, the positions input holds the first position or lists them
    # all (MultimodalRunner's cache_position [n]): the runtime checks that they follow on.
    if scatter.input_value(2).get_partial_shape().rank.is_dynamic:
        return None
    attention = _attention_reading(back.output(0), exclude=assign)
    if attention is None:
        logger.info(
            "OpenVINO delegate: a KV cache is kept as written: it is read by ops other than attention "
            "(ScaledDotProductAttention), such as attention computed by matrix products"
        )
        return None
    if axis == 0 or shape[0].get_length() != 1:
        # The past is gathered along axis 0 with a one-element beam index: batch 1 only.
        logger.info("OpenVINO delegate: a KV cache of shape %s is kept as written: it is not of batch 1", shape)
        return None
    for node in attention:
        if node.get_input_size() < 4 or not _mask_hides_unfilled(
            node.input_value(3), positions, shape[axis].get_length()
        ):
            logger.info(
                "OpenVINO delegate: a KV cache is kept as written: its attention mask is not the rows of a "
                "causal mask chosen by the positions, so attention over the filled positions only would differ"
            )
            return None
    return _CacheWrite(
        assign, read, scatter.input_value(2), back_order, axis, shape[axis].get_length(), positions, attention
    )


def _mask_hides_unfilled(mask: ov.Output, positions: _Positions, length: int) -> bool:
    """Whether the mask rows each call reads hide every cache position past the ones it writes.

    Cutting the mask to the filled length takes the unfilled positions out of attention,
    which agrees with eager PyTorch only where the model masked them anyway: the rows of
    a constant causal mask (-inf, or False, above the diagonal) chosen by the positions,
    as ``mask[input_pos]`` or, in a dynamic-length export, ``mask[input_pos[0]:][:count]``,
    possibly with unit axes put in front. A table that also hides positions below the
    diagonal (a sliding window) qualifies: only the positions above it must be hidden.
    So does ``where(rows, bias, m)`` with such boolean rows and a constant ``m`` of -1e30
    or less, as transformers adds T5's relative position bias to its mask: softmax gives
    such a position exactly 0, as it does a position cut away. So do boolean rows
    combined from such rows (:func:`_rows_hide_unfilled`), as an image's positions that
    see each other (llm/huggingface.py's ``EmbeddingsDecoder``) are.
    """
    return _rows_hide_unfilled(_behind_leading_axes(mask.get_node()), positions, length)


def _rows_hide_unfilled(rows: ov.Node, positions: _Positions, length: int) -> bool:
    """Whether each row of `rows` ([S, length]) hides every position past the call's last.

    Proven from the rows of a constant causal table chosen by the positions (each hides
    the positions after its own, which is at most the call's last), and kept by what
    cannot let a hidden position through: a subset of the rows (Slice or Gather along
    the rows), an OR of rows that both hide them, an AND with rows that hide them, and
    a Select between two such (whatever its condition).
    """
    rows = _skip_converts(rows)
    kind = rows.get_type_name()
    if kind == "Select" and _hides(rows.input_value(2)):
        return _rows_hide_unfilled(_behind_leading_axes(rows.input_value(0).get_node()), positions, length)
    if kind == "Select":
        return all(_rows_hide_unfilled(rows.input_value(i).get_node(), positions, length) for i in (1, 2))
    if kind in ("LogicalOr", "BitwiseOr"):
        return all(_rows_hide_unfilled(rows.input_value(i).get_node(), positions, length) for i in (0, 1))
    if kind in ("LogicalAnd", "BitwiseAnd"):
        return any(_rows_hide_unfilled(rows.input_value(i).get_node(), positions, length) for i in (0, 1))
    if kind not in ("Gather", "Slice"):
        return False
    table = _skip_converts(rows.input_value(0).get_node())
    if table.get_type_name() != "Constant":
        return _selects_rows(rows) and _rows_hide_unfilled(table, positions, length)
    table_shape = table.get_output_partial_shape(0)
    if not table_shape.is_static or len(table_shape) != 2:
        return False
    if table_shape[1].get_length() != length:
        return False
    if kind == "Gather":
        chosen_by_positions = (
            _is_scalar(rows.input_value(2), 0) and _skip_converts(rows.input_value(1).get_node()) is positions.parameter
        )
    else:  # Slice(table, start, stop, step, axes): rows from positions[0] on
        chosen_by_positions = (
            _constant_values(rows.input_value(3)) == [1]
            and _constant_values(rows.input_value(4)) == [0]
            and _first_position_of(rows.input_value(1)) is positions.parameter
        )
    if not chosen_by_positions:
        return False
    values = table.get_data()
    above_diagonal = np.triu(np.ones(values.shape, dtype=bool), 1)
    if values.dtype == np.bool_:
        return not values[above_diagonal].any()
    return bool(np.isneginf(values[above_diagonal]).all())


def _selects_rows(node: ov.Node) -> bool:
    """Whether a Gather or Slice of a [S, L] input keeps some of its rows, every column
    in place: Gather along axis 0 by a scalar or a list, or Slice along axis 0 alone."""
    shape = node.input_value(0).get_partial_shape()
    if shape.rank.is_dynamic or shape.rank.get_length() != 2:
        return False
    if node.get_type_name() == "Gather":
        indices = node.input_value(1).get_partial_shape()
        return (
            _constant_values(node.input_value(2)) in ([0], [-2])
            and indices.rank.is_static
            and indices.rank.get_length() <= 1
        )
    axes = _constant_values(node.input_value(4)) if node.get_input_size() > 4 else None
    return axes in ([0], [-2])


def _hides(value: ov.Output) -> bool:
    """Whether `value` is a constant that takes a score out of softmax (-1e30 or less, or -inf)."""
    node = _skip_converts(value.get_node())
    if node.get_type_name() != "Constant" or not node.get_element_type().is_real():
        return False
    values = node.get_data()
    return values.size > 0 and bool(np.all(values <= _HIDING))


def _behind_leading_axes(node: ov.Node) -> ov.Node:
    """The node behind Converts and behind Unsqueezes that only add axes in front of
    the mask's last two (rows, columns), as a [1, 1, S, L] mask for all batches and
    heads is made from the [S, L] rows (transformers' models take a 4D mask). Such
    axes repeat the same rows for every head and leave the columns, the cache
    positions that _cut_mask cuts, as they were."""
    while True:
        kind = node.get_type_name()
        if kind == "Convert":
            node = node.input_value(0).get_node()
            continue
        if kind != "Unsqueeze" or node.get_output_partial_shape(0).rank.is_dynamic:
            return node
        rank = node.get_output_partial_shape(0).rank.get_length()
        axes = _constant_values(node.input_value(1))
        if axes is None or any(axis % rank >= rank - 2 for axis in axes):
            return node
        node = node.input_value(0).get_node()


def _first_position_of(output: ov.Output) -> Optional[ov.Node]:
    """The positions Parameter whose first element `output` is (``input_pos[0]``), or None."""
    node = _skip_converts(output.get_node(), ("Convert", "Reshape", "Unsqueeze", "Squeeze"))
    if node.get_type_name() != "Gather" or not _is_scalar(node.input_value(2), 0):
        return None
    parameter = node.input_value(0).get_node()
    if parameter.get_type_name() != "Parameter":
        return None
    size = parameter.get_output_partial_shape(0)
    first = [0, -1] if size.is_static and len(size) == 1 and size[0].get_length() == 1 else [0]
    index = _constant_values(node.input_value(1))
    return parameter if index is not None and len(index) == 1 and index[0] in first else None


def _order(transpose: ov.Node) -> Optional[List[int]]:
    order = transpose.input_value(1).get_node()
    return [int(v) for v in order.get_vector()] if order.get_type_name() == "Constant" else None


def _positions_behind(node: ov.Node, length: int) -> Optional[_Positions]:
    """The positions Parameter that `node` only reshapes, converts, or wraps as negative
    indices into the cache (``(p + length) % length``, the same for the positions the
    C++ runtime lets through); or, as a dynamic-length export computes the indices,
    ``arange(count) + positions[0]``."""
    while True:
        kind = node.get_type_name()
        if kind in ("Unsqueeze", "Convert", "Reshape"):
            node = node.input_value(0).get_node()
        elif kind == "Mod" and _is_scalar(node.input_value(1), length):
            added = node.input_value(0).get_node()
            if added.get_type_name() != "Add" or not _is_scalar(added.input_value(1), length):
                return None
            node = added.input_value(0).get_node()
        elif kind == "Add":
            return _counted_from_start(node)
        else:
            return _Positions(node) if kind == "Parameter" else None


def _counted_from_start(add: ov.Node) -> Optional[_Positions]:
    """``arange(0, size(tokens, d)) + positions[0]`` -> the positions and where the count comes from."""
    steps, start = (_skip_converts(add.input_value(i).get_node()) for i in (0, 1))
    if steps.get_type_name() != "Range":
        steps, start = start, steps
    if (
        steps.get_type_name() != "Range"
        or not _is_scalar(steps.input_value(0), 0)
        or not _is_scalar(steps.input_value(2), 1)
    ):
        return None
    size = _skip_converts(steps.input_value(1).get_node())
    shape = _skip_converts(size.input_value(0).get_node()) if size.get_type_name() == "Gather" else None
    if shape is None or shape.get_type_name() != "ShapeOf" or not _is_scalar(size.input_value(2), 0):
        return None
    counted, dim = shape.input_value(0).get_node(), _constant_values(size.input_value(1))
    if counted.get_type_name() != "Parameter" or dim is None or len(dim) != 1:
        return None
    # The count may come from the positions' own length (they list every position, and
    # torch.export read the size there); the runtime checks that they follow on.
    parameter = _first_position_of(start.output(0))
    if parameter is None:
        return None
    return _Positions(parameter, counted, dim[0] % counted.get_output_partial_shape(0).rank.get_length())


def _skip_converts(node: ov.Node, kinds: tuple = ("Convert",)) -> ov.Node:
    while node.get_type_name() in kinds:
        node = node.input_value(0).get_node()
    return node


def _constant_values(output: ov.Output) -> Optional[List[int]]:
    node = _skip_converts(output.get_node())
    return [int(v) for v in node.get_vector()] if node.get_type_name() == "Constant" else None


def _is_scalar(output: ov.Output, value: int) -> bool:
    """Whether `output` is known to hold the single number `value` before running."""
    node = output.get_node()
    while node.get_type_name() == "Convert":
        node = node.input_value(0).get_node()
    if node.get_type_name() == "Constant":
        values = [int(v) for v in node.get_vector()]
    elif node.get_type_name() == "Gather" and node.input_value(0).get_node().get_type_name() == "ShapeOf":
        # A size of a static shape, as the frontend computes it for negative indices.
        shape = node.input_value(0).get_node().input_value(0).get_partial_shape()
        index, axis = node.input_value(1).get_node(), node.input_value(2).get_node()
        if (
            not shape.is_static
            or index.get_type_name() != "Constant"
            or axis.get_type_name() != "Constant"
            or int(axis.get_vector()[0]) != 0
        ):
            return False
        values = [shape[int(i)].get_length() for i in index.get_vector()]
    else:
        return False
    return values == [value]


def _attention_reading(output: ov.Output, exclude: ov.Node) -> Optional[List[ov.Node]]:
    """The attention nodes that read `output` as keys or values, through head repeats
    only; None when anything else reads it."""
    found: List[ov.Node] = []
    pending = [target for target in output.get_target_inputs() if target.get_node() is not exclude]
    while pending:
        target = pending.pop()
        node = target.get_node()
        if node.get_type_name() == "ScaledDotProductAttention" and target.get_index() in (1, 2):
            if all(id(node) != id(seen) for seen in found):
                found.append(node)
        elif node.get_type_name() in _HEAD_REPEAT_OPS and target.get_index() == 0:
            pending.extend(node.output(0).get_target_inputs())
        else:
            return None
    return found or None


def _append(model: ov.Model, write: _CacheWrite, beam: ov.Node) -> None:
    """Puts the growing cache in place of the written one."""
    shape = [dimension.get_length() for dimension in write.read.get_output_partial_shape(0)]
    element_type = write.read.get_output_element_type(0)
    info = VariableInfo()
    info.data_shape = ov.PartialShape([ov.Dimension() if i == write.axis else size for i, size in enumerate(shape)])
    info.data_type = element_type
    info.variable_id = write.read.get_variable_id() + GROWN_CACHE_SUFFIX
    variable = Variable(info)
    empty = ov.Tensor(element_type, ov.Shape([0 if i == write.axis else size for i, size in enumerate(shape)]))
    past = ov.op.read_value(ov.op.Constant(empty), variable)
    cache = ov_ops.concat([ov_ops.gather(past, beam, 0), _values_in_cache_layout(write, element_type)], write.axis)
    _repeat_heads_at_any_length(write.assign.input_value(0), write.axis, write.length)
    written = write.assign.input_value(0)
    for target in list(written.get_target_inputs()):
        if target.get_node() is not write.assign:
            target.replace_source_output(cache.output(0))
    append = ov.op.assign(past, variable)
    append.input(0).replace_source_output(cache.output(0))
    model.remove_sink(write.assign)
    model.add_sinks([append])
    # What still reads the old cache reads only its shape: its initial value has it.
    write.read.output(0).replace(write.read.input_value(0))


def _repeat_heads_at_any_length(written: ov.Output, axis: int, length: int) -> None:
    """Frees the cache's length in the head repeats between the cache and attention.

    transformers' ``repeat_kv`` (unsqueeze, expand, reshape) was exported with the static
    cache's length in the target shapes of its Broadcast and Reshape. The CPU plugin fuses
    the repeats into its attention kernel and never runs them; anything that does run them
    (another device, or a fusion that does not match) would fail on a grown cache of
    another length. Each such length becomes the grown cache's own: a bidirectional
    Broadcast to 1 along it, a Reshape to -1 along it. `written` is what the old cache
    fed into attention; `axis` its position axis."""
    pending = [(target, axis) for target in written.get_target_inputs()]
    while pending:
        target, at = pending.pop()
        node = target.get_node()
        if node.get_type_name() not in _HEAD_REPEAT_OPS or target.get_index() != 0:
            continue
        if node.get_type_name() == "Unsqueeze":
            out_at = _axis_after_unsqueeze(node, at)
        elif node.get_type_name() == "Broadcast":
            node, out_at = _broadcast_at_any_length(node, at, length)
        elif node.get_type_name() == "Reshape":
            out_at = _reshape_at_any_length(node, at, length)
        else:
            out_at = at
        if out_at is not None:
            pending.extend((next_target, out_at) for next_target in node.output(0).get_target_inputs())


def _folded_values(output: ov.Output) -> Optional[List[int]]:
    """The integers a shape input holds before running: a Constant, through Convert and Abs
    (the frontend's expand takes the absolute value of its sizes)."""
    node = _skip_converts(output.get_node(), ("Convert", "Abs"))
    if node.get_type_name() != "Constant":
        return None
    values = [int(v) for v in node.get_vector()]
    return [abs(v) for v in values] if output.get_node().get_type_name() == "Abs" else values


def _axis_after_unsqueeze(node: ov.Node, axis: int) -> Optional[int]:
    inserted = _folded_values(node.input_value(1))
    if inserted is None:
        return None
    rank = node.get_output_partial_shape(0).rank.get_length()
    kept = [i for i in range(rank) if i not in {a % rank for a in inserted}]
    return kept[axis]


def _broadcast_at_any_length(node: ov.Node, axis: int, length: int) -> tuple:
    """A Broadcast to a constant shape of `length` along `axis` becomes a bidirectional one
    to 1 there, which keeps the input's length and, where the old one was valid, gives the
    same result. Returns the node now in its place and the axis in its output."""
    target = _folded_values(node.input_value(1))
    mode = node.get_attributes().get("mode", "").lower()
    if target is None or node.get_input_size() != 2 or mode not in ("numpy", "bidirectional"):
        return node, None
    out_axis = axis + len(target) - node.get_input_partial_shape(0).rank.get_length()
    if target[out_axis] != length:
        return node, out_axis
    target[out_axis] = 1
    free = ov_ops.broadcast(
        node.input_value(0), ov_ops.constant(np.array(target, np.int64)), broadcast_spec="BIDIRECTIONAL"
    )
    free.set_friendly_name(node.get_friendly_name())
    node.output(0).replace(free.output(0))
    return free, out_axis


def _reshape_at_any_length(node: ov.Node, axis: int, length: int) -> Optional[int]:
    """A Reshape to a constant shape that keeps `length` whole, with the sizes before and
    after it, takes -1 there. Returns the axis in its output, or None where the length is
    not kept whole."""
    target = _folded_values(node.input_value(1))
    shape = node.get_input_partial_shape(0)
    if target is None or -1 in target or 0 in target or not shape.is_static:
        return None
    sizes = [dimension.get_length() for dimension in shape]
    before = int(np.prod(sizes[:axis]))
    for index, size in enumerate(target):
        if size == length and int(np.prod(target[:index])) == before:
            target[index] = -1
            node.input(1).replace_source_output(ov_ops.constant(np.array(target, np.int64)).output(0))
            return index
    return None


def _values_in_cache_layout(write: _CacheWrite, element_type: ov.Type) -> ov.Output:
    """This call's keys or values, in the cache's layout and type."""
    own = _values_before_index_put(write)
    if own is None:
        return ov_ops.transpose(write.new_values, ov_ops.constant(np.array(write.to_cache_layout, np.int64))).output(0)
    return own if own.get_element_type() == element_type else ov_ops.convert(own, element_type).output(0)


def _values_before_index_put(write: _CacheWrite) -> Optional[ov.Output]:
    """The model's own keys or values, in the cache's layout, if index_put only moved them.

    The frontend's index_put moves them to positions-first, broadcasts them to the count
    of positions and converts them to the cache's type. Where the broadcast provably
    changes nothing (each size equal, a dynamic one by its shape symbol: the positions
    are counted from the tokens, and so are the values), the tensor from before the
    move is taken: three or four nodes fewer per cache, and in a program of dynamic
    shape OpenVINO spends time on each node on every call.
    """
    broadcast = _skip_converts(write.new_values.get_node(), ("Convert", "ConvertLike"))
    if broadcast.get_type_name() != "Broadcast" or not _same_shape(
        broadcast.input_value(0).get_partial_shape(), broadcast.get_output_partial_shape(0)
    ):
        return None
    moved = broadcast.input_value(0).get_node()
    order = _order(moved) if moved.get_type_name() == "Transpose" else None
    if order is None or [order[i] for i in write.to_cache_layout] != list(range(len(order))):
        return None
    return moved.input_value(0)


def _same_shape(left: ov.PartialShape, right: ov.PartialShape) -> bool:
    """Whether two shapes are known equal: static sizes by value, dynamic ones by symbol."""
    if left.rank.is_dynamic or right.rank.is_dynamic or left.rank.get_length() != right.rank.get_length():
        return False
    for a, b in zip(left, right):
        if a.is_static and b.is_static:
            if a.get_length() != b.get_length():
                return False
        elif not (_symbol(a) is not None and _symbol(a) == _symbol(b)):
            return False
    return True


def _symbol(dimension: ov.Dimension) -> object:
    """The dimension's shape symbol, or None (also where this OpenVINO has no symbols)."""
    has_symbol = getattr(dimension, "has_symbol", None)
    return dimension.get_symbol() if has_symbol is not None and has_symbol() else None


def _label_dynamic_sizes(model: ov.Model) -> None:
    """Gives each dynamic size of each input a shape symbol, which OpenVINO's shape
    inference carries through the model (a no-op where this OpenVINO has no symbols)."""
    symbol_type = getattr(ov, "Symbol", None)
    if symbol_type is None:
        return
    for parameter in model.get_parameters():
        shape = parameter.get_partial_shape()
        if shape.rank.is_dynamic or shape.is_static:
            continue
        for index in range(shape.rank.get_length()):
            dimension = shape[index]
            if dimension.is_dynamic and not dimension.has_symbol():
                dimension.set_symbol(symbol_type())
                shape[index] = dimension
        parameter.set_partial_shape(shape)
    model.validate_nodes_and_infer_types()


def _cut_mask(attention: ov.Node, positions: ov.Node, count: ov.Output) -> None:
    """Keeps the mask's columns up to the last position written: positions[0] + count."""
    start = ov_ops.slice(positions, [0], [1], [1])
    end = ov_ops.add(ov_ops.convert(start, ov.Type.i64), count)
    mask = attention.input_value(3)
    start_type, end_type, step_type, axes_type = _slice_index_types(mask)
    cut = ov_ops.slice(
        mask,
        ov_ops.constant(np.array([0]), start_type),
        end if end_type == ov.Type.i64 else ov_ops.convert(end, end_type),
        ov_ops.constant(np.array([1]), step_type),
        ov_ops.constant(np.array([-1]), axes_type),
    )
    attention.input(3).replace_source_output(cut.output(0))


def _slice_index_types(mask: ov.Output) -> List[ov.Type]:
    """The element types of start, stop, step and axes for a Slice of `mask`: those of the
    Slice that makes `mask`, if one does (the PyTorch frontend gives its step i32), else i64.

    OpenVINO 2025.1 and 2025.2 join two Slices in a row into one (SliceSequenceToSingleSlice)
    by concatenating their inputs without converting them: inputs of different types fail
    the CPU plugin's compilation ("Argument element types are inconsistent"). 2025.3 and
    later compile either way.
    """
    node = mask.get_node()
    if node.get_type_name() == "Slice" and node.get_input_size() == 5:
        return [node.input_value(index).get_element_type() for index in range(1, 5)]
    return [ov.Type.i64] * 4
