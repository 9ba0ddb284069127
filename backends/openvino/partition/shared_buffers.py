"""Buffers that several methods of one program use, at least one of them writing.

A program of several methods (an LLM's ``prefill`` and ``decode``, a model and
its ``reset``) can share one buffer between them: eager PyTorch has one tensor,
and ExecuTorch gives all methods one copy when the program is made with
``MemoryPlanningPass(share_mutable_buffers=True)``. A buffer kept as OpenVINO
state, or baked into a delegate as a constant, would instead belong to one
method's delegate, and the other methods would not see what it writes. Such a
buffer therefore stays with ExecuTorch in every method that uses it.

Buffers count as one when they have the same name and the same tensor: two methods
exported from one module. Separate modules whose buffers happen to share a name (two
models of one program, each with its ``total``) keep a buffer each.

``to_edge_transform_and_lower`` shows the partitioner each method once, through
``transform_for_pre_decomposition``, before it partitions any: that is where the
methods are recorded. Lowering that skips that hook (``to_edge`` then
``to_backend``) records nothing, and each method is partitioned on its own.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import FrozenSet, List, Optional, Tuple

import torch
from torch.export import ExportedProgram

logger = logging.getLogger(__name__)

# A buffer as the methods hold it: its fully qualified name and the address of its
# tensor's data (None where the program holds no tensor for it).
_BufferKey = Tuple[str, Optional[int]]


def _buffer_key(method: ExportedProgram, target: str) -> _BufferKey:
    tensor = method.state_dict.get(target, method.constants.get(target))
    return target, tensor.data_ptr() if isinstance(tensor, torch.Tensor) else None


def _written_in_place(buffer: torch.fx.Node) -> bool:
    """Whether an op writes the buffer, directly or through a view of it.

    The methods come before functionalization (``buffers_to_mutate`` is still empty): a
    write is an op whose schema marks the argument written (``add_``, ``copy_``,
    ``index_put_``), a view one whose result aliases its argument (``slice``, ``select``).
    """
    aliases, seen = [buffer], {buffer}
    while aliases:
        node = aliases.pop()
        for user in node.users:
            schema = getattr(user.target, "_schema", None)
            if user.op != "call_function" or schema is None:
                continue
            for index, argument in enumerate(schema.arguments):
                value = user.args[index] if index < len(user.args) else user.kwargs.get(argument.name)
                if value is node and argument.alias_info is not None and argument.alias_info.is_write:
                    return True
            returns_view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
            if returns_view and user not in seen:
                seen.add(user)
                aliases.append(user)
    return False


class BuffersAcrossMethods:
    """Records which buffers each method of the program being lowered uses.

    Example::

        methods = BuffersAcrossMethods()
        methods.record(prefill)  # one call per method, before partitioning
        methods.record(decode)
        methods.shared()  # frozenset({"layers.0.attention.kv_cache.k_cache", ...})
    """

    def __init__(self) -> None:
        self._used: List[FrozenSet[_BufferKey]] = []
        self._written: List[FrozenSet[_BufferKey]] = []
        self._shared: Optional[FrozenSet[str]] = None  # set once partitioning begins
        self._unpartitioned = 0  # recorded methods not partitioned yet

    def record(self, method: ExportedProgram) -> None:
        """Adds a method of the program; a method after partitioning began starts another program."""
        if self._shared is not None:
            self._used, self._written, self._shared = [], [], None
        signature = method.graph_signature
        nodes = {node.name: node for node in method.graph.nodes}
        buffers = {nodes[name]: _buffer_key(method, target) for name, target in signature.inputs_to_buffers.items()}
        written = frozenset(_buffer_key(method, target) for target in signature.buffers_to_mutate.values()) | {
            key for node, key in buffers.items() if _written_in_place(node)
        }
        self._used.append(frozenset(key for node, key in buffers.items() if node.users) | written)
        self._written.append(written)

    def shared(self) -> FrozenSet[str]:
        """The buffers (by fully qualified name) that two or more recorded methods use and one writes.

        Called once per method partitioned. Past the recorded methods, the program was
        not recorded (lowered with ``to_backend`` after the partitioner served another
        lowering): it is partitioned alone, and shares nothing.
        """
        if self._shared is None:
            self._shared, self._unpartitioned = self._find_shared(), len(self._used)
        if self._unpartitioned == 0:
            return frozenset()
        self._unpartitioned -= 1
        return self._shared

    def _find_shared(self) -> FrozenSet[str]:
        uses = Counter(key for used in self._used for key in used)
        written = frozenset().union(*self._written)
        shared = frozenset(key[0] for key, count in uses.items() if count > 1 and key in written)
        if shared:
            logger.warning(
                "OpenVINO partitioner: %d buffer(s) that several methods use stay with ExecuTorch, "
                "so that all methods see one value (%s)",
                len(shared),
                ", ".join(sorted(shared)[:4]) + (", ..." if len(shared) > 4 else ""),
            )
        return shared
