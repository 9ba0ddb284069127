"""Delegate inputs that index an embedding table, marked for the runtime's range check.

OpenVINO's Gather has no bounds error: an index past the table reads a row of zeros
and a negative one counts from the end, where eager PyTorch and ExecuTorch's own
kernel raise an error. A token id outside the vocabulary would give an LLM all-zero
logits, silently. An input that ``aten.embedding`` reads as its indices gets the
tensor name ``executorch_openvino.index_rows=<rows>``; the C++ runtime refuses a call
with an index outside ``0 .. rows - 1`` (tensor_binding.cpp). Indices computed inside
the partition are not checked.
"""

from __future__ import annotations

from typing import Dict, List

import torch

import openvino as ov

from .node_names import op_name

#: Followed by the table's row count; read by the C++ runtime (kIndexRowsName in
#: runtime/include/executorch_openvino/backend.h).
INDEX_ROWS_NAME = "executorch_openvino.index_rows="


def mark_embedding_indices(parameters: List[ov.Node], placeholders: List[torch.fx.Node]) -> None:
    """Names each parameter whose placeholder an embedding reads as its indices."""
    for parameter, placeholder in zip(parameters, placeholders):
        rows = _smallest_table_indexed_by(placeholder)
        if rows is not None:
            parameter.output(0).get_tensor().add_names({f"{INDEX_ROWS_NAME}{rows}"})


def _smallest_table_indexed_by(placeholder: torch.fx.Node):
    tables: Dict[str, int] = {}
    for user in placeholder.users:
        if op_name(user) != "aten.embedding.default" or len(user.args) < 2 or user.args[1] is not placeholder:
            continue
        weight = user.args[0].meta.get("val") if isinstance(user.args[0], torch.fx.Node) else None
        if weight is not None and isinstance(weight.shape[0], int):
            tables[user.name] = weight.shape[0]
    return min(tables.values()) if tables else None
