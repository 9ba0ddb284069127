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

from typing import List, Optional

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


def _smallest_table_indexed_by(placeholder: torch.fx.Node) -> Optional[int]:
    rows = [
        user.args[0].meta["val"].shape[0]
        for user in placeholder.users
        if op_name(user) == "aten.embedding.default"
        and len(user.args) > 1
        and user.args[1] is placeholder
        and isinstance(user.args[0], torch.fx.Node)
        and "val" in user.args[0].meta
    ]
    static_rows = [count for count in rows if isinstance(count, int)]
    return min(static_rows) if static_rows else None
