"""Ops that no ExecuTorch CPU kernel runs, written in core ATen ops before ExecuTorch decomposes the program.

``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp``, ``fmax``, ``fmin``, ``addmv``,
``nn.Bilinear``, ``round(decimals=)`` and antialiased bilinear or bicubic ``interpolate`` are not core
ATen and have no kernel in ExecuTorch 1.5.1's portable library (what
``executorch.runtime`` links), and OpenVINO's PyTorch frontend converts none of
them. Each has an exact form in core ATen ops that OpenVINO converts and the
portable kernels run: the partitioner's ``transform_for_pre_decomposition`` writes
it in (``decompose_ops_without_kernels``), so that the program lowers with the
default ``EdgeCompileConfig``, runs in OpenVINO, and still runs if a node of it stays
on the CPU.

Written before ExecuTorch's decomposition rather than kept whole for a translation
of our own (``ops_to_not_decompose``, partition/kept_whole.py): ExecuTorch 1.5.1
refuses to keep ops with more than one result whole (its
``_remove_invalid_ops_for_not_decompose`` drops any op whose schema's
``aliased_return_names()`` is not ``[None]``, which is ``[None, None]`` for
``cummax``), so ``cummax`` could only be kept this way, and every scan shares one
form. Each decomposition returns ``NotImplemented`` for a case it does not compute
(say, a scan over a dimension with no largest size), which leaves the op as it is.
"""

from __future__ import annotations

import logging
from typing import Callable, Collection, Dict, Set

import torch
from torch.export import ExportedProgram

from ...edge_graph.nodes import matches_op_type
from ...workarounds import not_a_workaround
from . import antialiased_resize, nan_ignoring_extremes, products, rounding, scans

logger = logging.getLogger(__name__)
aten = torch.ops.aten

DECOMPOSITIONS: Dict[torch._ops.OpOverload, Callable] = {
    aten.cumprod.default: scans.cumprod,
    aten.cummax.default: scans.cummax,
    aten.cummin.default: scans.cummin,
    aten.logcumsumexp.default: scans.logcumsumexp,
    aten.fmax.default: nan_ignoring_extremes.fmax,
    aten.fmin.default: nan_ignoring_extremes.fmin,
    aten.addmv.default: products.addmv,
    aten.round.decimals: rounding.round_decimals,
    # nn.Bilinear: ExecuTorch would decompose it into aten._trilinear, which no kernel runs.
    aten.bilinear.default: products.bilinear,
    aten._upsample_bilinear2d_aa.default: antialiased_resize.upsample_bilinear2d_aa,
    aten._upsample_bilinear2d_aa.vec: antialiased_resize.upsample_bilinear2d_aa_vec,
    aten._upsample_bicubic2d_aa.default: antialiased_resize.upsample_bicubic2d_aa,
    aten._upsample_bicubic2d_aa.vec: antialiased_resize.upsample_bicubic2d_aa_vec,
}


@not_a_workaround(
    "ops with no ExecuTorch CPU kernel and no conversion in OpenVINO's PyTorch frontend, not ops it computes wrong"
)
def decompose_ops_without_kernels(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """`program` with each op of ``DECOMPOSITIONS`` it calls written in core ATen ops.

    Ops the user keeps on the CPU (`op_types_to_skip`, "aten.cummax") are left as
    they are; `op_names_to_skip` is not read (a decomposition applies to every node of
    its op). Returns `program` itself when it calls none of them.
    """
    found = _ops_called(program) & {op for op in DECOMPOSITIONS if not matches_op_type(str(op), op_types_to_skip)}
    if not found:
        return program
    logger.info("OpenVINO partitioner: writing %s in core ATen ops", ", ".join(sorted(str(op) for op in found)))
    return program.run_decompositions({op: DECOMPOSITIONS[op] for op in found})


def _ops_called(program: ExportedProgram) -> Set[torch._ops.OpOverload]:
    return {node.target for node in program.graph.nodes if isinstance(node.target, torch._ops.OpOverload)}
