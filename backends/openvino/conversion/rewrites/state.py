"""Mutable buffers a delegate owns, kept as OpenVINO state.

A buffer the program writes (an LLM's KV cache, a running statistic) would
otherwise enter the delegate on every call and leave it again, to be copied back
by ExecuTorch. When every reader of the buffer and the node that computes its
new value lie in one partition, the partition owns the buffer: ExecuTorch then
passes nothing of it across the delegate boundary. In the OpenVINO model the
buffer becomes a variable: a ReadValue whose initial value is the buffer's value
at export, and an Assign of its new value. One infer request per loaded method
keeps the variables, so they live as long as the loaded method; each loaded
method has its own.
"""

from __future__ import annotations

import logging
from typing import Dict, FrozenSet, List, Mapping, Optional

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

import openvino as ov
import openvino.opset13 as ov_ops
from openvino.op.util import Variable, VariableInfo

from .dtypes import OPENVINO_TYPES

logger = logging.getLogger(__name__)

# A written buffer of these types is kept in a 32-bit variable: OpenVINO 2026.4.1's
# CPU plugin fails the first inference that reads an i64, f64 or i16 variable ("does
# not support i64 for use with oneDNN"). It computes 64-bit values in 32 bits anyway,
# and int32 holds every int16.
STORED_AS = {
    torch.int64: torch.int32,
    torch.uint64: torch.uint32,
    torch.float64: torch.float32,
    torch.int16: torch.int32,
}


def tag_owned_buffers(program: ExportedProgram, shared: FrozenSet[str] = frozenset()) -> Dict[str, str]:
    """Gives each mutated buffer that one partition reads and writes that partition's tag.

    Call it after the compute nodes are tagged. Unlike ExecuTorch's
    ``tag_mutated_buffer``, a buffer is taken only when the node that computes its
    new value is in the partition too, and nothing outside the partition reads the
    buffer or its new value: a value kept as state cannot also leave the delegate.
    Buffers in `shared` (fully qualified names) are used by other methods of the
    program too (shared_buffers.py) and are never taken. Returns buffer name -> tag.
    """
    signature = program.graph_signature
    new_values = {target: name for name, target in signature.buffers_to_mutate.items()}
    returned = set(signature.user_outputs)
    nodes = {node.name: node for node in program.graph.nodes}
    owned: Dict[str, str] = {}
    for placeholder, target in signature.inputs_to_buffers.items():
        if target not in new_values:
            continue
        node, writer = nodes[placeholder], nodes[new_values[target]]
        tag = writer.meta.get("delegation_tag")
        readers = {user.meta.get("delegation_tag") for user in node.users}
        readers |= {user.meta.get("delegation_tag") for user in writer.users if user.op != "output"}
        reason = None
        if target in shared:
            reason = "another method of the program uses it too"
        elif tag is None:
            reason = "its new value is computed on the CPU"
        elif not readers <= {tag}:
            reason = "it is read outside the partition that writes it"
        elif not node.users:
            # A variable nothing reads would lose its ReadValue, and with it its definition.
            reason = "its old value is never read"
        elif writer.name in returned:
            reason = "the program also returns its new value"
        if reason is None:
            node.meta["delegation_tag"] = tag
            owned[target] = tag
        else:
            logger.info("OpenVINO partitioner: buffer %r stays outside the delegate: %s", target, reason)
    return owned


def buffer_initial_values(program: ExportedProgram) -> Dict[str, torch.Tensor]:
    """Placeholder name -> value at export, for each buffer the partition writes."""
    mutated = set(program.graph_signature.buffers_to_mutate.values())
    values = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER and spec.target in mutated:
            values[spec.arg.name] = _constant(program, spec.target)
    return values


def constant_inputs(program: ExportedProgram) -> Dict[str, torch.Tensor]:
    """Placeholder name -> value, for each input that is a weight or an unwritten buffer."""
    return {name: _constant(program, target) for name, target in _constant_targets(program).items()}


def constant_input_names(program: ExportedProgram) -> FrozenSet[str]:
    """The placeholders that are weights or unwritten buffers; reads no tensor (they may be fake)."""
    return frozenset(_constant_targets(program))


def _constant_targets(program: ExportedProgram) -> Dict[str, str]:
    mutated = set(program.graph_signature.buffers_to_mutate.values())
    constant_kinds = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    return {
        spec.arg.name: spec.target
        for spec in program.graph_signature.input_specs
        if spec.kind in constant_kinds and spec.target not in mutated
    }


def buffer_writes(program: ExportedProgram) -> List[str]:
    """The placeholder of the buffer that each buffer write writes, in output order.

    A partition's buffer writes are its first outputs, in the order the program
    makes them, which need not be the order of the buffers among its inputs
    (``self.v.copy_(...)`` before ``self.k.copy_(...)``).
    """
    specs = program.graph_signature.output_specs
    kinds = [spec.kind for spec in specs]
    count = kinds.count(OutputKind.BUFFER_MUTATION)
    if kinds[:count] != [OutputKind.BUFFER_MUTATION] * count:
        raise RuntimeError(f"OpenVINO delegate: buffer writes are not the first outputs: {kinds}")
    placeholders = {
        spec.target: spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.BUFFER
    }
    return [placeholders[spec.target] for spec in specs[:count]]


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


def _constant(program: ExportedProgram, target: str) -> torch.Tensor:
    value: Optional[torch.Tensor] = program.state_dict.get(target)
    if value is None:
        value = program.constants[target]
    return value
