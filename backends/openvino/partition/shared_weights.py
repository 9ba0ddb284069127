"""Weights that several methods of one program read, found so that the program stores them once.

Each method's delegate carries the weights of its partitions in its own blob, so a
weight that two methods read would be stored twice: T5's token embedding, which its
encoder and its decoder read, or a vision-language model's embedding table, read by
its ``token_embedding`` method and, as the tied output projection, by its decoder.
ExecuTorch's named data (``NamedDataStore``) holds one copy per key for the whole
program. The partitioner records the large weights of every method it is shown
(``transform_for_pre_decomposition``), and names in each delegate's compile specs
(``shared_weights``) the ones that another method reads too, by the digest of their
bytes; preprocess then stores those in the named data instead of the blob
(serialization/named_weights.py).

Weights are compared by their bytes, so the same tensor exported twice, or equal
tensors in separate modules, count as one; a weight a method changes before it
reaches OpenVINO (compressed, joined with others) is its own.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, FrozenSet, List, Tuple

import torch
from torch.export import ExportedProgram

from ..edge_graph.program_inputs import MIN_SHARED_WEIGHT_BYTES, weight_digest

# A weight as the partitioner finds it again in the edge program: its name and form.
_Entry = Tuple[str, torch.dtype, Tuple[int, ...]]


def _large_weights(method: ExportedProgram) -> Dict[_Entry, torch.Tensor]:
    """The large weights the method's graph reads (a method's module may hold others, such
    as an encoder-decoder's encoder in its decoder method), by name and form."""
    tensors = {**method.state_dict, **method.constants}
    signature = method.graph_signature
    targets = {
        **signature.inputs_to_parameters,
        **signature.inputs_to_buffers,
        **signature.inputs_to_lifted_tensor_constants,
    }
    read = {
        targets[node.name]
        for node in method.graph.nodes
        if node.op == "placeholder" and node.users and node.name in targets
    }
    return {
        (name, tensor.dtype, tuple(tensor.shape)): tensor
        for name, tensor in tensors.items()
        if name in read
        and isinstance(tensor, torch.Tensor)
        and tensor.numel() * tensor.element_size() >= MIN_SHARED_WEIGHT_BYTES
    }


def _digest(tensor: torch.Tensor) -> str:
    data = tensor.detach().contiguous()
    return weight_digest(data.reshape(-1).view(torch.uint8).numpy().tobytes())


class WeightsAcrossMethods:
    """Records the large weights of each method; tells a method which of its weights another method reads.

    Example::

        methods = WeightsAcrossMethods()
        methods.record(encoder)  # one call per method, before partitioning
        methods.record(decoder)
        methods.shared_with_others(edge_decoder)  # frozenset({"3fa2...", ...}): digests
    """

    def __init__(self) -> None:
        self._methods: List[Dict[_Entry, torch.Tensor]] = []
        self._started = False  # set once a method is partitioned
        self._unpartitioned = 0  # recorded methods not partitioned yet
        self._shared: Dict[_Entry, str] = {}  # the weights another method reads too, with their digests

    def record(self, method: ExportedProgram) -> None:
        """Adds a method of the program; a method after partitioning began starts another program."""
        if self._started:
            self._methods, self._started = [], False
        self._methods.append(_large_weights(method))

    def shared_with_others(self, method: ExportedProgram) -> FrozenSet[str]:
        """The digests of `method`'s large weights that another recorded method reads too.

        The weights are found again by name and form: the edge program holds them as
        fake tensors at partitioning, and its names are the exported program's. A name
        two methods give to different weights may name a digest this method lacks;
        preprocess then finds no constant with those bytes and stores nothing for it.
        Called once per method partitioned; past the recorded methods, the program was
        not recorded (``to_backend`` after another lowering) and shares nothing.
        """
        if not self._started:
            self._started, self._unpartitioned = True, len(self._methods)
            self._shared = self._find_shared()
        if self._unpartitioned == 0:
            return frozenset()
        self._unpartitioned -= 1
        entries = _large_weights(method)
        return frozenset(digest for entry, digest in self._shared.items() if entry in entries)

    def _find_shared(self) -> Dict[_Entry, str]:
        """Each recorded weight that another method reads too, with its digest: only weights
        whose form another method has are hashed, and only with two methods or more."""
        if len(self._methods) < 2:
            return {}
        form_uses = Counter(form for weights in self._methods for form in {entry[1:] for entry in weights})
        digests: List[Dict[_Entry, str]] = [
            {entry: _digest(tensor) for entry, tensor in weights.items() if form_uses[entry[1:]] > 1}
            for weights in self._methods
        ]
        uses = Counter(digest for method in digests for digest in set(method.values()))
        return {entry: digest for method in digests for entry, digest in method.items() if uses[digest] > 1}
