"""Delegate inputs that an indexing op reads as its indices, marked for the runtime's range check.

OpenVINO has no bounds error: Gather reads a row of zeros for an index past the
table and counts a negative one from the end, ScatterElementsUpdate writes outside
its tensor (an index below -size corrupted the heap and crashed the process), where
eager PyTorch and ExecuTorch's own kernels raise an error. A token id outside the
vocabulary would give an LLM all-zero logits, silently; a KV-cache position past the
cache wrapped into it and spoiled every later call.

An input that embedding, embedding_bag, index_select, index_copy, index_add, gather or scatter reads
as its indices gets the tensor name ``executorch_openvino.index_rows=<n>``, with n the
size of the dimension it indexes; one that ``x[i]``, index_put or index_fill reads,
which count negative indices from the end as PyTorch does,
``executorch_openvino.signed_index_rows=<n>``. The C++ runtime refuses a call with an
index outside ``0 .. n - 1`` (or ``-n .. n - 1``) before anything runs
(tensor_binding.cpp). Only inputs the op reads directly are checked, and only where
the indexed dimension has a static size (with several reads, the smallest such size);
indices computed inside the partition are not checked.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch

import openvino as ov

from ...edge_graph.nodes import op_name
from ...workarounds import not_a_workaround

#: Followed by the indexed dimension's size; read by the C++ runtime (kIndexRowsName
#: and kSignedIndexRowsName in runtime/include/executorch_openvino/backend.h).
INDEX_ROWS_NAME = "executorch_openvino.index_rows="
SIGNED_INDEX_ROWS_NAME = "executorch_openvino.signed_index_rows="

# Op (without overload) -> (position of the data, of the dim or None, of the index).
# With the dim None, the index is a list of index tensors, the k-th indexing dim k.
_READS_INDICES = {
    "aten.embedding": (0, None, 1),
    "aten._embedding_bag": (0, None, 1),
    "aten.index_select": (0, 1, 2),
    "aten.index_copy": (0, 1, 2),
    "aten.index_add": (0, 1, 2),
    "aten.gather": (0, 1, 2),
    "aten.scatter": (0, 1, 2),
    "aten.scatter_add": (0, 1, 2),
    "aten.scatter_reduce": (0, 1, 2),
    "aten.index_fill": (0, 1, 2),
    "aten.index": (0, None, 1),
    "aten.index_put": (0, None, 1),
}
# The ops among them that take a negative index as counting from the end.
_NEGATIVE_FROM_END = frozenset({"aten.index", "aten.index_put", "aten.index_fill"})


@not_a_workaround("a bounds check PyTorch makes and OpenVINO's indexing ops, by their specification, do not")
def mark_index_inputs(parameters: List[ov.Node], placeholders: List[torch.fx.Node]) -> None:
    """Names each parameter whose placeholder an indexing op reads as its indices."""
    for parameter, placeholder in zip(parameters, placeholders):
        bounds = [bound for user in placeholder.users for bound in _bounds_read(user, placeholder)]
        sizes = [size for size, _ in bounds if size is not None]
        if not sizes:
            continue
        # Every read must be in range: the smallest size, and no negatives if one read takes none.
        size = min(sizes)
        name = SIGNED_INDEX_ROWS_NAME if all(signed for _, signed in bounds) else INDEX_ROWS_NAME
        parameter.output(0).get_tensor().add_names({f"{name}{size}"})


def _written_as_index_copy(node: torch.fx.Node) -> bool:
    """Whether the model called index_copy, which export writes as an index_put: that
    would take negative indices, which index_copy refuses."""
    torch_fn = node.meta.get("torch_fn")
    called = torch_fn[1].rsplit(".", 1)[-1] if isinstance(torch_fn, tuple) and len(torch_fn) > 1 else ""
    return called.rstrip("_") == "index_copy" or "index_copy" in str(node.meta.get("original_aten", ""))


def _bounds_read(user: torch.fx.Node, placeholder: torch.fx.Node) -> List[Tuple[Optional[int], bool]]:
    """(size of the dimension indexed, whether negatives count from the end) for each way
    `user` reads `placeholder` as indices; the size is None where it is not static."""
    name = op_name(user).rsplit(".", 1)[0] if user.op == "call_function" else ""
    if name not in _READS_INDICES:
        return []
    data_at, dim_at, index_at = _READS_INDICES[name]
    if len(user.args) <= index_at or not isinstance(user.args[data_at], torch.fx.Node):
        return []
    shape = user.args[data_at].meta["val"].shape if "val" in user.args[data_at].meta else None
    if name in ("aten.embedding", "aten._embedding_bag"):
        dims = [0] if user.args[index_at] is placeholder else []
    elif dim_at is None:
        indices = user.args[index_at] if isinstance(user.args[index_at], (list, tuple)) else []
        dims = [k for k, index in enumerate(indices) if index is placeholder]
    else:
        dims = [user.args[dim_at]] if user.args[index_at] is placeholder else []
    signed = name in _NEGATIVE_FROM_END and not _written_as_index_copy(user)
    bounds = []
    for dim in dims:
        size = shape[dim % len(shape)] if shape is not None and len(shape) > 0 else None
        bounds.append((size if isinstance(size, int) else None, signed))
    return bounds
