"""What is done to each method's program before ExecuTorch decomposes it, in order.

``to_edge_transform_and_lower`` calls the partitioner's ``transform_for_pre_decomposition``
on each method first, then asks it which ops to keep whole (``ops_to_not_decompose``,
partition/kept_whole.py), then decomposes the rest into core ATen and makes the edge
dialect. What needs the program as exported goes here: ops that neither an ExecuTorch
kernel nor OpenVINO's frontend runs, written in ops both run; twins for the nodes of
several results the partitioner takes, which the edge dialect would refuse; and forms
that ExecuTorch's decomposition or its prim ops would compute otherwise than eager.

One transform per module; ``TRANSFORMS`` lists them in the order they run. Each takes
the program and what the user keeps on the CPU (the partitioner's ``op_types_to_skip``
and ``op_names_to_skip``) and returns a new program, or `program` itself when it
changes nothing.
"""

from __future__ import annotations

from typing import Callable, Collection, List

from torch.export import ExportedProgram

from .attention_layout import copy_before_views_after_attention
from .ops_without_kernels import decompose_ops_without_kernels
from .sort_family_twins import twin_claimed_nodes
from .symbolic_remainder import remainders_through_floor_division
from .torchao_ops import decompose_torchao_ops

#: A transform: (program, op_types_to_skip, op_names_to_skip) -> program.
Transform = Callable[[ExportedProgram, Collection[str], Collection[str]], ExportedProgram]

TRANSFORMS: List[Transform] = [
    # First: torchao's quantization ops become the aten ops they are written in, which
    # every transform after it then reads as any other op.
    decompose_torchao_ops,
    # Ops no kernel runs, written in core ATen ops; before the twins, since this retraces
    # the program through run_decompositions with a table of its own.
    decompose_ops_without_kernels,
    # After every decomposition above: the twins go on the nodes the partitioner will see.
    twin_claimed_nodes,
    # After the decompositions: a remainder of symbolic ints that they write is rewritten too.
    remainders_through_floor_division,
    # After the decompositions: a view that they put after attention gets its copy too.
    copy_before_views_after_attention,
]


def transform_before_decomposition(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> ExportedProgram:
    """`program` after every transform of ``TRANSFORMS``, in order; `program` itself is not changed."""
    for transform in TRANSFORMS:
        program = transform(program, op_types_to_skip, op_names_to_skip)
    return program
