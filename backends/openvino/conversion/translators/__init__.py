"""Conversions of our own, registered with OpenVINO's PyTorch frontend for ops it converts wrong or not at all.

Each translator builds OpenVINO operations from an edge node's inputs, through the
frontend's ``ConversionExtension``; one registered for an op the frontend already
converts replaces the frontend's own. ``TRANSLATORS`` maps the op's name, as the
frontend's FX decoder reports it, to its translator.
"""

from __future__ import annotations

from typing import Callable, Dict, List

from .embedding_bag import translate_embedding_bag
from .scatter_reduce import translate_scatter_reduce
from .trunc import translate_trunc

TRANSLATORS: Dict[str, Callable] = {
    "aten._embedding_bag.default": translate_embedding_bag,
    # Issue 40, ops without a kernel anywhere (second half) and the suite's CPU leftovers.
    "aten.scatter_reduce.two": translate_scatter_reduce,
    "aten.trunc.default": translate_trunc,
}


def conversion_extensions() -> List[object]:
    """One ``ConversionExtension`` per translator, to add to the frontend before converting."""
    from openvino.frontend.pytorch import ConversionExtension

    return [ConversionExtension(name, translator) for name, translator in TRANSLATORS.items()]
