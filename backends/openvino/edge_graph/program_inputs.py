"""What an exported program's inputs are: weights, buffers it writes, and their values.

Read by the partitioner (which placeholders are constants, which weights other
methods read too) and by the conversion and serialization (weights become constants,
written buffers become OpenVINO state, weights several methods read are stored once).
"""

from __future__ import annotations

import hashlib
from typing import Dict, FrozenSet, List, Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

#: Weights smaller than this stay in each delegate that reads them: storing them twice costs little.
MIN_SHARED_WEIGHT_BYTES = 64 * 1024


def weight_digest(data: bytes) -> str:
    """The digest that names a weight by its bytes, 24 hex digits: the partitioner finds
    weights several methods read by it, and preprocess the constants holding them."""
    return hashlib.blake2b(data, digest_size=12).hexdigest()


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


def _constant(program: ExportedProgram, target: str) -> torch.Tensor:
    value: Optional[torch.Tensor] = program.state_dict.get(target)
    if value is None:
        value = program.constants[target]
    return value
