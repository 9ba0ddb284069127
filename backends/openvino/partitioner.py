"""OpenvinoPartitioner: tags the parts of an edge program that OpenVINO runs."""

from __future__ import annotations

import logging
from typing import Callable, Collection, Dict, FrozenSet, List, Optional, Set, Tuple

import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.export.exported_program import ExportedProgram
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from .backend_id import BACKEND_ID
from .compile_specs import (
    SHARED_WEIGHTS,
    cpu_settings_place,
    openvino_compile_specs,
    parse_compile_specs,
    with_defaults,
)
from .edge_graph.nodes import op_name
from .edge_graph.program_inputs import constant_input_names
from .partition.buffer_ownership import tag_owned_buffers
from .partition.compressed_weights import warn_about_unpacks_on_cpu
from .partition.copy_placement import CopyPlacement
from .partition.kept_whole import ops_kept_whole
from .partition.missing_kernels import warn_about_ops_without_kernels
from .partition.op_support import OpenvinoOperatorSupport, assert_nodes
from .partition.shared_buffers import BuffersAcrossMethods
from .partition.shared_weights import WeightsAcrossMethods
from .partition.sort_family import warn_about_nodes_left_on_cpu, warn_about_twins_left_on_cpu
from .partition.symint_boundary import symbolic_values_crossing
from .partition.trial_conversion import unconvertible_nodes
from .pre_decomposition import transform_before_decomposition
from .preprocess import ExecutorchOpenvinoBackend  # noqa: F401  (defines the backend to_backend finds by BACKEND_ID)

logger = logging.getLogger(__name__)


def _skip_list(argument: str, names: Optional[Collection[str]]) -> FrozenSet[str]:
    """`names` as a set, refusing a lone string (a set of its characters) and non-strings."""
    if names is None:
        return frozenset()
    if isinstance(names, str):
        raise TypeError(
            f"OpenvinoPartitioner: {argument} is the string {names!r}; accepted: a list of names, [{names!r}]"
        )
    others = [name for name in names if not isinstance(name, str)]
    if others:
        raise TypeError(f"OpenvinoPartitioner: {argument} holds {others[0]!r}; accepted: names, as strings")
    return frozenset(names)


def _check_aten_op_type(op_type: str) -> None:
    """Refuses an aten op type that names no ATen op or overload ("aten.sine", "aten.add.Tensr").

    Other namespaces are not checked: their ops may register only when their library loads.
    """
    parts = op_type.split(".")
    if parts[0] != "aten" or len(parts) not in (2, 3):
        return
    packet = getattr(torch.ops.aten, parts[1], None)
    if packet is None:
        raise ValueError(f"OpenvinoPartitioner: op_types_to_skip names {op_type!r}, which is no ATen op")
    if len(parts) == 3 and parts[2] not in packet.overloads():
        raise ValueError(
            f"OpenvinoPartitioner: op_types_to_skip names {op_type!r}; aten.{parts[1]}'s overloads are "
            f"{', '.join(packet.overloads())}"
        )


class OpenvinoPartitioner(Partitioner):
    """Hands every part of a program that OpenVINO converts to the OpenVINO delegate.

    Args:
        compile_specs: the delegate's compile specs, best built with
            ``executorch_openvino.openvino_compile_specs(...)``; checked here, so a bad key or
            value fails before anything is converted.
        op_types_to_skip: ops to keep on the CPU even when OpenVINO supports them,
            by name ("aten.add.Tensor") or overload packet ("aten.add").
        op_names_to_skip: node names to keep on the CPU.

    Example::

        edge = to_edge_transform_and_lower(
            torch.export.export(model, example_inputs),
            partitioner=[OpenvinoPartitioner(openvino_compile_specs(device="CPU"))],
        )
    """

    def __init__(
        self,
        compile_specs: Optional[List[CompileSpec]] = None,
        op_types_to_skip: Optional[Collection[str]] = None,
        op_names_to_skip: Optional[Collection[str]] = None,
    ) -> None:
        specs = with_defaults(compile_specs)
        self.options = parse_compile_specs(specs)
        self.delegation_spec = DelegationSpec(BACKEND_ID, specs)
        self.op_types_to_skip = _skip_list("op_types_to_skip", op_types_to_skip)
        for op_type in self.op_types_to_skip:
            _check_aten_op_type(op_type)
        self.op_names_to_skip = _skip_list("op_names_to_skip", op_names_to_skip)
        self._methods = BuffersAcrossMethods()
        self._weights = WeightsAcrossMethods()

    def ops_to_not_decompose(
        self, ep: ExportedProgram
    ) -> Tuple[List[torch._ops.OpOverload], Optional[Callable[[torch.fx.Node], bool]]]:
        """Attention, NNCF's 4-bit weight unpacking and the sort family's ops outside core ATen
        stay whole for OpenVINO (see partition/kept_whole.py)."""
        return ops_kept_whole(ep, self.op_types_to_skip, self.op_names_to_skip)

    def transform_for_pre_decomposition(self, exported_program: ExportedProgram) -> ExportedProgram:
        """Records the method's buffers (partition/shared_buffers.py) and large weights
        (partition/shared_weights.py), names the sort family's nodes left on the CPU, which
        ExecuTorch's portable kernels lack (partition/sort_family.py), then runs the transforms
        of pre_decomposition/ in the order its ``TRANSFORMS`` lists."""
        self._methods.record(exported_program)
        self._weights.record(exported_program)
        warn_about_nodes_left_on_cpu(exported_program, self.op_types_to_skip, self.op_names_to_skip)
        return transform_before_decomposition(exported_program, self.op_types_to_skip, self.op_names_to_skip)

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        placement = CopyPlacement(
            exported_program,
            self.options.effective_precision,
            may_run_on_cpu=cpu_settings_place(self.options.device) is not None,
        )
        cpu_nodes: Dict[str, str] = {}
        converted: Set[FrozenSet[str]] = set()
        # Moving a node out (a copy, a symbolic size crossing a boundary, a node
        # OpenVINO cannot convert) changes the partitions, so repeat until nothing
        # moves; every round moves at least one node, so it ends.
        while True:
            partitions = self._propose_partitions(exported_program, cpu_nodes)
            moved = _asserts_on_values_only_they_read(partitions)
            if not moved:
                moved = placement.input_copies_to_move_out([p.nodes for p in partitions])
            if not moved:
                moved = placement.constant_copies_to_move_out([p.nodes for p in partitions])
            if not moved:
                moved = symbolic_values_crossing(p.nodes for p in partitions)
            if not moved:
                moved = _unconvertible(exported_program, partitions, converted)
            moved = {name: reason for name, reason in moved.items() if name not in cpu_nodes}
            if not moved:
                break
            cpu_nodes.update(moved)
        tags = {}
        delegation_spec = self._delegation_spec_for(exported_program)
        for partition in partitions:
            if all(_is_getitem(node) for node in partition.nodes):
                continue
            tag = f"openvino_{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = delegation_spec
        warn_about_twins_left_on_cpu(exported_program.graph)
        shared = self._methods.shared()
        tag_constant_data(exported_program)
        _untag_constants_read_outside(exported_program, shared)
        owned = tag_owned_buffers(exported_program, shared)
        warn_about_unpacks_on_cpu(exported_program.graph, constant_input_names(exported_program))
        reasons = self._support(exported_program, cpu_nodes)
        warn_about_ops_without_kernels(exported_program, reasons.refusal)
        logger.info("OpenVINO partitioner: %d partition(s), %d buffer(s) kept as OpenVINO state", len(tags), len(owned))
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)

    def _delegation_spec_for(self, exported_program: ExportedProgram) -> DelegationSpec:
        """The delegation spec, naming the weights another method reads too (shared_weights)."""
        shared = self._weights.shared_with_others(exported_program)
        if not shared:
            return self.delegation_spec
        specs = [spec for spec in self.delegation_spec.compile_specs if spec.key != SHARED_WEIGHTS]
        named = [spec for spec in openvino_compile_specs(shared_weights=sorted(shared)) if spec.key == SHARED_WEIGHTS]
        logger.info("OpenVINO partitioner: %d weight(s) that other methods read too are stored once", len(shared))
        return DelegationSpec(BACKEND_ID, specs + named)

    def _support(self, exported_program: ExportedProgram, cpu_nodes: Dict[str, str]) -> OpenvinoOperatorSupport:
        return OpenvinoOperatorSupport(
            self.op_types_to_skip, self.op_names_to_skip, cpu_nodes, constant_input_names(exported_program)
        )

    def _propose_partitions(self, exported_program: ExportedProgram, cpu_nodes: Dict[str, str]):
        return CapabilityBasedPartitioner(
            exported_program.graph_module, self._support(exported_program, cpu_nodes), allows_single_node_partition=True
        ).propose_partitions()


def _untag_constants_read_outside(exported_program: ExportedProgram, shared_buffers: FrozenSet[str]) -> None:
    """Leaves a weight or buffer with ExecuTorch when the program returns it, a CPU op reads
    it, or another method writes it (`shared_buffers`, by fully qualified name).

    ExecuTorch's ``tag_constant_data`` gives a constant its partition's tag even then, and
    lowering fails ("constant data node ... has user (output)"), or the delegate would
    keep the value at export. Untagged, it enters the delegate as an input instead. (A
    constant two partitions read is copied into each, as before.)
    """
    buffers = exported_program.graph_signature.inputs_to_buffers
    for node in exported_program.graph.nodes:
        tag = node.meta.get("delegation_tag") if node.op == "placeholder" else None
        if tag is None:
            continue
        if buffers.get(node.name) in shared_buffers or any(
            user.meta.get("delegation_tag") is None for user in node.users
        ):
            del node.meta["delegation_tag"]


def _asserts_on_values_only_they_read(partitions: list) -> Dict[str, str]:
    """The asserts (and what only they read) that read a value from outside their
    partition that none of its other nodes reads.

    The conversion drops asserts, so such a value would be an input the OpenVINO
    model does not have (after a `nonzero`, export checks the size it made). On the
    CPU they cost nothing: ExecuTorch drops asserts before it runs a program.
    """
    moved: Dict[str, str] = {}
    for partition in partitions:
        members = set(partition.nodes)
        if not members:
            continue
        checks = assert_nodes(next(iter(members)).graph) & members
        read_by_the_rest = {arg for node in members - checks for arg in node.all_input_nodes}
        for node in checks:
            if any(arg not in members and arg not in read_by_the_rest for arg in node.all_input_nodes):
                moved[node.name] = "it checks a value made outside its partition that nothing else in it reads"
    return moved


def _unconvertible(
    exported_program: ExportedProgram, partitions: list, converted: Set[FrozenSet[str]]
) -> Dict[str, str]:
    """Nodes of the proposed partitions that OpenVINO's frontend fails on, with the reason.

    `converted` remembers the partitions that converted, so that each is tried once.
    """
    failed: Dict[str, str] = {}
    for partition in partitions:
        members = frozenset(node.name for node in partition.nodes)
        if members in converted or all(_is_getitem(node) for node in partition.nodes):
            continue
        found = unconvertible_nodes(exported_program, partition.nodes)
        if found:
            failed.update(found)
        else:
            converted.add(members)
    return failed


def _is_getitem(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and op_name(node) == "getitem"
