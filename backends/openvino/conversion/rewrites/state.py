"""Buffers a partition owns, kept as OpenVINO state.

The partitioner gives a partition the buffers that only it reads and writes
(partition/buffer_ownership.py). In the OpenVINO model each such buffer becomes a
variable: a ReadValue whose initial value is the buffer's value at export, and an
Assign of its new value. One infer request per loaded method keeps the variables,
so they live as long as the loaded method; each loaded method has its own.
"""

from __future__ import annotations

from typing import List, Mapping

import numpy as np
import torch

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.op.util import Variable, VariableInfo

from ...edge_graph.dtypes import OPENVINO_TYPES
from ...workarounds import not_a_workaround

# A written buffer of these types is kept in a 32-bit variable: OpenVINO 2026.4.1's
# CPU plugin fails the first inference that reads an i64, f64 or i16 variable ("does
# not support i64 for use with oneDNN"; workarounds.py, wide_state_refused). It
# computes 64-bit values in 32 bits anyway, and int32 holds every int16.
STORED_AS = {
    torch.int64: torch.int32,
    torch.uint64: torch.uint32,
    torch.float64: torch.float32,
    torch.int16: torch.int32,
}


@not_a_workaround(
    "the form the runtime binds: written buffers as OpenVINO state (STORED_AS is a workaround of its own)"
)
def keep_buffers_as_state(
    model: ov.Model, initial: Mapping[str, torch.Tensor], parameter_names: List[str], writes: List[str]
) -> ov.Model:
    """Turns the buffer parameters and the results that write them into OpenVINO variables.

    `parameter_names` names the model's parameters in order; those found in
    `initial` are buffers. The first results are their new values, result i
    writing the buffer whose placeholder is ``writes[i]`` (``buffer_writes``).
    """
    if not initial:
        return model
    parameters = dict(zip(parameter_names, model.get_parameters()))
    results = model.get_results()
    if sorted(writes) != sorted(initial):
        raise RuntimeError(f"OpenVINO delegate: written buffers {sorted(initial)} but buffer writes {writes}")
    sinks = []
    for name, result in zip(writes, results[: len(writes)]):
        parameter = parameters[name]
        stored = STORED_AS.get(initial[name].dtype, initial[name].dtype)
        variable = _variable(name, parameter, OPENVINO_TYPES[stored])
        value = ov_ops.read_value(_initial_value(initial[name].to(stored), parameter), variable)
        parameter.output(0).replace(_converted(value.output(0), parameter.get_element_type()))
        # Python's Assign takes a node, not one output of it: made on the
        # ReadValue (same type and shape), then pointed at the new value.
        write = ov.op.assign(value, variable)
        write.input(0).replace_source_output(_converted(result.input_value(0), OPENVINO_TYPES[stored]))
        sinks.append(write)
    kept_parameters = [parameter for name, parameter in parameters.items() if name not in initial]
    stateful = ov.Model(results[len(writes) :], sinks, kept_parameters, model.get_friendly_name())
    # The dropped Results stay attached to the new values while anything (the old
    # model) holds them, and later rewrites would count them as readers of the cache.
    for result in results[: len(writes)]:
        result.input(0).replace_source_output(ov_ops.constant(np.zeros((), np.float32)).output(0))
    stateful.validate_nodes_and_infer_types()
    return stateful


def _converted(output: ov.Output, element_type: ov.Type) -> ov.Output:
    if output.get_element_type() == element_type:
        return output
    return ov_ops.convert(output, element_type).output(0)


def _variable(name: str, parameter: ov.Node, element_type: ov.Type) -> Variable:
    info = VariableInfo()
    info.data_shape = parameter.get_partial_shape()
    info.data_type = element_type
    info.variable_id = name
    return Variable(info)


def _initial_value(value: torch.Tensor, parameter: ov.Node) -> ov.Node:
    if value.dtype not in OPENVINO_TYPES:
        raise ValueError(
            f"OpenVINO delegate: buffer {parameter.get_friendly_name()!r} has dtype "
            f"{value.dtype}, accepted: {', '.join(str(t) for t in OPENVINO_TYPES)}"
        )
    value = value.detach().contiguous()
    tensor = ov.Tensor(OPENVINO_TYPES[value.dtype], ov.Shape(list(value.shape)))
    # Bytes for bytes: numpy has no bfloat16, and nothing is rounded on the way.
    raw = value.reshape(-1).view(torch.uint8).numpy()
    np.copyto(tensor.data.reshape(-1).view(np.uint8), raw)
    return ov.op.Constant(tensor)
