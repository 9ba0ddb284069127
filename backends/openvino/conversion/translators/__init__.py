"""Conversions of our own, registered with OpenVINO's PyTorch frontend for ops it converts wrong or not at all.

Each translator builds OpenVINO operations from an edge node's inputs, through the
frontend's ``ConversionExtension``; one registered for an op the frontend already
converts replaces the frontend's own. ``TRANSLATORS`` maps the op's name, as the
frontend's FX decoder reports it, to its translator.
"""

from __future__ import annotations

from typing import Callable, Dict, List

import openvino as ov

from ...edge_graph.twin_ops import twin_name
from .clamp_tensor import translate_clamp_tensor
from .embedding_bag import translate_embedding_bag
from .expm1 import translate_expm1
from .histc import translate_histc
from .remainder import frontend_converts_remainder, translate_remainder_scalar, translate_remainder_tensor
from .scatter_reduce import translate_scatter_reduce
from .search import (
    translate_bucketize,
    translate_bucketize_scalar,
    translate_searchsorted,
    translate_searchsorted_scalar,
)
from .selection import (
    translate_kthvalue,
    translate_median,
    translate_median_dim,
    translate_mode,
    translate_nanmedian,
    translate_nanmedian_dim,
)
from .sort import translate_argsort_stable, translate_sort, translate_sort_stable, translate_topk
from .trunc import translate_trunc
from .unique import translate_unique, translate_unique_consecutive, translate_unique_dim

TRANSLATORS: Dict[str, Callable] = {
    "aten._embedding_bag.default": translate_embedding_bag,
    # Issue 40, ops without a kernel anywhere (second half) and the suite's CPU leftovers.
    "aten.scatter_reduce.two": translate_scatter_reduce,
    "aten.trunc.default": translate_trunc,
    # Ops of Hugging Face decoders (PhiMoE's routing, Apertus' xIELU) the frontend lacks.
    "aten.clamp.Tensor": translate_clamp_tensor,
    "aten.expm1.default": translate_expm1,
}

# Sorting, selection and set ops (issue 40): PyTorch's stable order, NaN largest (ordering.py).
TRANSLATORS.update(
    {
        "aten.sort.stable": translate_sort_stable,
        "aten.argsort.stable": translate_argsort_stable,
        "aten.sort.default": translate_sort,
        "aten.topk.default": translate_topk,
        "aten.median.default": translate_median,
        "aten.median.dim": translate_median_dim,
        "aten.nanmedian.default": translate_nanmedian,
        "aten.nanmedian.dim": translate_nanmedian_dim,
        "aten.kthvalue.default": translate_kthvalue,
        "aten.mode.default": translate_mode,
        "aten._unique2.default": translate_unique,
        "aten.unique_dim.default": translate_unique_dim,
        "aten.unique_consecutive.default": translate_unique_consecutive,
        "aten.bucketize.Tensor": translate_bucketize,
        "aten.bucketize.Scalar": translate_bucketize_scalar,
        "aten.searchsorted.Tensor": translate_searchsorted,
        "aten.searchsorted.Scalar": translate_searchsorted_scalar,
        "aten.histc.default": translate_histc,
    }
)

#: Ops the installed frontend lacks and later releases convert (remainder.py).
FOR_OLDER_FRONTENDS: Dict[str, Callable] = {
    "aten.remainder.Tensor": translate_remainder_tensor,
    "aten.remainder.Scalar": translate_remainder_scalar,
}
if not frontend_converts_remainder(ov.get_version()):
    TRANSLATORS.update(FOR_OLDER_FRONTENDS)


def conversion_extensions() -> List[object]:
    """``ConversionExtension``s of the translators, to add to the frontend before converting.

    Each is registered under its op's name and under its twin's (edge_graph/twin_ops.py),
    which the frontend's decoder reports for a twin node.
    """
    from openvino.frontend.pytorch import ConversionExtension

    return [
        ConversionExtension(name, translator) for op, translator in TRANSLATORS.items() for name in (op, twin_name(op))
    ]
