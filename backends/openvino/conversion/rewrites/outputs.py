"""Rewrites of a converted model's inputs and outputs into the form the runtime binds.

The frontend returns each value once and in its own types; the program expects one
output per returned value, in its order, in PyTorch's dtypes, and never the
caller's own input buffer back.
"""

from __future__ import annotations

import logging
import re
from typing import List, Optional, Tuple

import torch

import openvino as ov
import openvino.opset13 as ov_ops

from ...edge_graph.dtypes import OPENVINO_TYPES
from ...workarounds import not_a_workaround, works_around

logger = logging.getLogger(__name__)


@not_a_workaround("the form the runtime binds: one output per returned value, in order")
def restore_output_positions(model: ov.Model, positions: List[int]) -> ov.Model:
    """Gives the model one Result per original output, in the original order."""
    results = model.get_results()
    if positions == list(range(len(results))):
        return model
    ordered, used = [], set()
    for index in positions:
        # A repeated value gets a Result of its own, bound to its own buffer.
        ordered.append(ov_ops.result(results[index].input_value(0)) if index in used else results[index])
        used.add(index)
    return ov.Model(ordered, model.get_parameters(), model.get_friendly_name())


IDENTITY_MIN_VERSION = (2025, 4)


@works_around("returned_input_not_copied")
def separate_returned_inputs(model: ov.Model, may_run_on_cpu: bool) -> None:
    """Puts an Identity between each input the model returns unchanged and its Result.

    A compiled model whose Parameter feeds a Result directly hands back the input
    buffer itself, and the CPU plugin gives wrong values for it. This matters for
    whole programs lowered with ``to_backend`` (``return x.clone()``), which have no
    CPU part to move the copy to. Only the CPU plugin was checked, so devices that
    never run on it get the model unchanged.
    """
    if not may_run_on_cpu:
        return
    returned_inputs = [
        result for result in model.get_results() if result.input_value(0).get_node().get_type_name() == "Parameter"
    ]
    if not returned_inputs:
        return
    version = openvino_version()
    if version is not None and version < IDENTITY_MIN_VERSION:
        raise RuntimeError(
            "This program returns an input unchanged (such as x.clone()); on the CPU device that "
            f"needs OpenVINO {'.'.join(map(str, IDENTITY_MIN_VERSION))} or newer, whose CPU plugin "
            f"runs Identity, and this is OpenVINO {ov.get_version()}. Lower it with "
            "OpenvinoPartitioner instead, which runs such copies on the CPU, or update OpenVINO."
        )
    import openvino.opset16 as ov_opset16  # Identity is opset16, from OpenVINO 2025.0

    for result in returned_inputs:
        identity = ov_opset16.identity(result.input_value(0))
        result.input(0).replace_source_output(identity.output(0))
    model.validate_nodes_and_infer_types()


def openvino_version() -> Optional[Tuple[int, int]]:
    """(major, minor) of the running OpenVINO, such as (2026, 4); None if unreadable."""
    match = re.match(r"(\d+)\.(\d+)", ov.get_version())
    return (int(match.group(1)), int(match.group(2))) if match else None


@not_a_workaround("the form the runtime binds: outputs in the dtypes PyTorch gives them")
def convert_outputs_to_torch_dtypes(model: ov.Model, expected: List[object]) -> None:
    """Makes each output come out in the dtype PyTorch gives it.

    The frontend keeps a narrower type for some ops, such as sum over int32, which
    PyTorch computes in int64; the runtime binds outputs only in the exact dtype
    the program expects.
    """
    results = model.get_results()
    if len(results) != len(expected):
        raise RuntimeError(f"OpenVINO made {len(results)} outputs for a partition with {len(expected)}")
    changed = False
    for result, value in zip(results, expected):
        if not isinstance(value, torch.Tensor) or value.dtype not in OPENVINO_TYPES:
            continue
        wanted = OPENVINO_TYPES[value.dtype]
        source = result.input_value(0)
        if source.get_element_type() != wanted:
            logger.debug(
                "OpenVINO output %s: converting %s to %s", result.get_friendly_name(), source.get_element_type(), wanted
            )
            result.input(0).replace_source_output(ov_ops.convert(source, wanted).output(0))
            changed = True
    if changed:
        model.validate_nodes_and_infer_types()
