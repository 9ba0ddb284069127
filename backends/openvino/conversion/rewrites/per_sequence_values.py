"""Values computed from inputs that stay the same over a sequence, kept as OpenVINO state.

An encoder-decoder's decoder reads the encoder's output at every step, and its
cross-attention projects that output to keys and values: the same ones at every
step of a sequence, at a cost that grows with the encoder's length (1500 positions
for Whisper). OpenVINO's own stateful encoder-decoders (optimum-intel's export, which
OpenVINO GenAI's WhisperPipeline runs) keep such values in a variable whose ReadValue
takes them as its initial value; the CPU plugin moves that initial value's ops into
the ReadValue (its MoveReadValueInputsToSubgraph pass) and computes them only when
the variable starts empty. This rewrite gives the decoder that form.

The inputs are named by the compile spec ``per_sequence_inputs``. The values kept are
the ones computed from those inputs and constants alone that other ops read, when
some matrix product is among the ops computing them (a reshape of the input is not
worth a state). The runtime empties the variables, as it empties the growing KV
cache, when a call starts the sequence again at position 0
(``runtime/kv_cache.cpp``): a call at a later position reuses what position 0
computed, whatever the input holds then, as transformers' EncoderDecoderCache and
GenAI do. So the rewrite applies only to a model whose KV cache grows
(``kv_cache_growth.py``), which gives the runtime the positions; otherwise the
values are computed at every call, which is slower and exact.
"""

from __future__ import annotations

import logging
from typing import Dict, Iterable, List, Sequence, Set, Tuple

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.op.util import Variable, VariableInfo

from ...workarounds import not_a_workaround
from .kv_cache_growth import CACHE_POSITIONS_NAME

logger = logging.getLogger(__name__)

#: What the id of a per-sequence variable ends with; the runtime empties those when a
#: call starts again at position 0 (kPerSequenceSuffix in backend.h).
PER_SEQUENCE_SUFFIX = ".per_sequence"
#: The name an input those values are computed from carries (kPerSequenceInputName in
#: backend.h): the runtime refuses a call at a later position whose input has other sizes
#: than at position 0, since the values kept would not fit it.
PER_SEQUENCE_INPUT_NAME = "executorch_openvino.per_sequence_input"
#: The runtime-info key marking the costly ops of a variable's initial value: the CPU
#: plugin computes each initial value on its own, only when it starts empty, so a later
#: rewrite must not join such an op with others (sibling_products.py), which would make
#: the plugin compute it at every call.
COMPUTED_PER_SEQUENCE = "etov_computed_per_sequence"

# Ops whose result is worth keeping rather than computing again at each call.
_COSTLY = frozenset({"MatMul", "Convolution", "GroupConvolution"})


@not_a_workaround("a speed-up: values of a sequence's fixed inputs computed once, as OpenVINO GenAI's decoders do")
def keep_per_sequence_values(model: ov.Model, input_names: Sequence[str]) -> int:
    """Keeps the costly values computed from the named inputs alone as per-sequence state.

    Returns how many values became variables.
    """
    if not input_names:
        return 0
    sources = [parameter for parameter in model.get_parameters() if _names_of(parameter) & set(input_names)]
    if not sources:
        logger.debug("OpenVINO delegate: no input named %s here; nothing is kept per sequence", ", ".join(input_names))
        return 0
    if not any(name.startswith(CACHE_POSITIONS_NAME) for p in model.get_parameters() for name in _names_of(p)):
        logger.info(
            "OpenVINO delegate: the values of %s are computed at every call: the model has no growing KV cache "
            "whose positions would tell when a sequence starts again",
            ", ".join(input_names),
        )
        return 0
    for source in sources:
        _project_before_views(source)
    kept, costly = _edges(model, sources)
    for index, output in enumerate(kept):
        _keep_in_variable(model, output, f"per_sequence_{index}{PER_SEQUENCE_SUFFIX}")
    for node in costly:
        node.get_rt_info()[COMPUTED_PER_SEQUENCE] = True
    if kept:
        for source in sources:
            source.output(0).add_names({PER_SEQUENCE_INPUT_NAME})
        model.validate_nodes_and_infer_types()
        names = ", ".join(input_names)
        logger.info("OpenVINO delegate: %d value(s) of %s computed once per sequence", len(kept), names)
    return len(kept)


def _project_before_views(source: ov.Node) -> None:
    """Moves a view of `source` that only merges its leading sizes ([1, n, c] to [n, c],
    as ExecuTorch's linear layers take their input) after each product that reads it.

    The CPU plugin computes inside a ReadValue only the ops of its initial value that
    nothing else reads. One view read by every projection stays outside, and at every
    call it runs with its conversion to the inference precision: for Whisper tiny's
    1500 x 384 encoder output, about a tenth of a bf16 decoder step. Projecting the
    input itself and viewing each product gives every initial value ops of its own.
    """
    for target in list(source.output(0).get_target_inputs()):
        view = target.get_node()
        if view.get_type_name() != "Reshape" or not _merges_leading_sizes(source.output(0), view.output(0)):
            continue
        readers = list(view.output(0).get_target_inputs())
        if not all(_reads_as_left_operand(reader) for reader in readers):
            continue
        for reader in readers:
            product = reader.get_node()
            width = product.get_output_partial_shape(0)[1]
            if width.is_dynamic:
                continue
            projected = ov_ops.matmul(
                source.output(0), product.input_value(1), False, product.get_attributes()["transpose_b"]
            )
            viewed = ov_ops.reshape(projected, ov_ops.constant(np.array([-1, width.get_length()], np.int64)), False)
            product.output(0).replace(viewed.output(0))


def _merges_leading_sizes(before: ov.Output, after: ov.Output) -> bool:
    old, new = before.get_partial_shape(), after.get_partial_shape()
    if old.rank.is_dynamic or new.rank.is_dynamic or new.rank.get_length() != 2 or old.rank.get_length() < 2:
        return False
    last = old[old.rank.get_length() - 1]
    return last.is_static and new[1].is_static and last.get_length() == new[1].get_length()


def _reads_as_left_operand(reader: ov.Input) -> bool:
    node = reader.get_node()
    return node.get_type_name() == "MatMul" and reader.get_index() == 0 and not node.get_attributes()["transpose_a"]


def _names_of(parameter: ov.Node) -> Set[str]:
    return set(parameter.output(0).get_names()) | {parameter.get_friendly_name()}


def _edges(model: ov.Model, sources: List[ov.Node]) -> Tuple[List[ov.Output], List[ov.Node]]:
    """The outputs computed from `sources` and constants alone that other ops (or the
    model's results) read, and that a costly op computes; and those costly ops."""
    source_ids = {id(source) for source in sources}
    others = [p for p in model.get_parameters() if id(p) not in source_ids]
    others += [op for op in model.get_ordered_ops() if op.get_type_name() == "ReadValue"]
    from_sources = _reached_from(model, sources)
    from_others = _reached_from(model, others)
    inside = {key: node for key, node in from_sources.items() if key not in from_others}
    costly = _computed_by_costly_ops(model, inside)
    edges: List[ov.Output] = []
    for key, node in inside.items():
        if key not in costly:
            continue
        for output in node.outputs():
            if any(id(target.get_node()) not in inside for target in output.get_target_inputs()):
                edges.append(output)
    costly_ops = [node for key, node in inside.items() if key in costly and node.get_type_name() in _COSTLY]
    return edges, costly_ops


def _reached_from(model: ov.Model, starts: Iterable[ov.Node]) -> Dict[int, ov.Node]:
    """Every node that depends on one of `starts` (the starts included), by id."""
    reached = {id(node): node for node in starts}
    for node in model.get_ordered_ops():
        if any(id(value.get_node()) in reached for value in node.input_values()):
            reached[id(node)] = node
    return reached


def _computed_by_costly_ops(model: ov.Model, inside: Dict[int, ov.Node]) -> Set[int]:
    """The nodes of `inside` that a costly op of `inside` is among the inputs of (itself included)."""
    costly: Set[int] = set()
    for node in model.get_ordered_ops():
        key = id(node)
        if key not in inside:
            continue
        if node.get_type_name() in _COSTLY or any(id(value.get_node()) in costly for value in node.input_values()):
            costly.add(key)
    return costly


def _keep_in_variable(model: ov.Model, output: ov.Output, variable_id: str) -> None:
    """Puts ReadValue(initial value: `output`) and an Assign of it in place of `output` for its readers."""
    info = VariableInfo()
    # Every size left open: OpenVINO infers the initial value's shape again when it reads
    # the stored IR, less precisely where sizes vary (T5's keys came back as [1, 1..128,
    # 1..32, 16] for [1, 4, 1..32, 16], OpenVINO 2026.4.1), and a variable must hold any
    # shape its initial value may have.
    info.data_shape = ov.PartialShape.dynamic(output.get_partial_shape().rank)
    info.data_type = output.get_element_type()
    info.variable_id = variable_id
    variable = Variable(info)
    readers = list(output.get_target_inputs())
    kept = ov.op.read_value(output, variable)
    for reader in readers:
        reader.replace_source_output(kept.output(0))
    # The Assign writes back what was read: the CPU plugin then keeps the value in
    # place, and reset() is what makes the ReadValue compute its initial value again.
    model.add_sinks([ov.op.assign(kept, variable)])
