"""torchao's quantization ops, decomposed so that OpenVINO can take them.

A model quantized with torchao (ExecuTorch's LLM modes ``8da4w``, ``8da8w`` and
``4w``: ``Int8DynamicActivationIntxWeightConfig``, ``IntxWeightOnlyConfig``) exports
with ``torchao::quantize_affine``, ``dequantize_affine`` and
``choose_qparams_affine``. OpenVINO's frontend does not convert them and
ExecuTorch has no kernels for them, so such a program failed at ``to_executorch``
("Missing out variants"), with or without our partitioner. Each of them is
written in aten ops (a CompositeImplicitAutograd kernel); decomposed, OpenVINO
runs the quantization arithmetic and reads the integer weights.
"""

from __future__ import annotations

import logging
from typing import Collection, Set

import torch
from torch._export.utils import _get_decomp_for_cia
from torch.export import ExportedProgram

logger = logging.getLogger(__name__)


def decompose_torchao_ops(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """Decomposes every torchao op of `program` that is written in aten ops; returns `program` if none.

    Every such op, whatever the user keeps on the CPU: ExecuTorch has no kernel for it."""
    ops = _torchao_ops_with_aten_kernels(program)
    if not ops:
        return program
    logger.info("OpenVINO partitioner: decomposing torchao's %s", ", ".join(sorted(str(op) for op in ops)))
    # The op's own aten kernel; `op.decompose` itself would recurse through export's dispatch.
    return program.run_decompositions({op: _get_decomp_for_cia(op) for op in ops})


def _torchao_ops_with_aten_kernels(program: ExportedProgram) -> Set[torch._ops.OpOverload]:
    return {
        node.target
        for node in program.graph.nodes
        if node.op == "call_function"
        and isinstance(node.target, torch._ops.OpOverload)
        and node.target.namespace == "torchao"
        and torch._C._dispatch_has_kernel_for_dispatch_key(node.target.name(), "CompositeImplicitAutograd")
    }
