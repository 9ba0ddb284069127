"""Which nodes of an edge program the OpenVINO delegate takes, and why it refuses the rest."""

from __future__ import annotations

import functools
import logging
from typing import Collection, Dict, FrozenSet, Mapping, Optional

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from ..conversion.translators import TRANSLATORS
from ..edge_graph.dtypes import BOUND_DTYPES
from ..edge_graph.nodes import DIM_ORDER_OPS, matches_op_type, op_name
from .argument_rules import argument_refusal
from .compressed_weights import is_unpack_node
from .kept_whole import KEPT_WHOLE_OPS

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def openvino_supported_ops() -> FrozenSet[str]:
    """Op names such as "aten.add.Tensor" that OpenVINO's PyTorch frontend converts, with our own translations."""
    from openvino.frontend.pytorch.torchdynamo.op_support import OperatorSupport

    names = set()
    for key in OperatorSupport([])._support_dict:
        names.add(key[len("torch.ops.") :] if key.startswith("torch.ops.") else key)
    return frozenset(names | DIM_ORDER_OPS | KEPT_WHOLE_OPS | TRANSLATORS.keys())


# Checks that ExecuTorch removes before it runs a program (RemoveGraphAssertsPass in
# to_executorch), and the conversion removes before OpenVINO sees a partition.
ASSERT_OPS = frozenset(
    {
        "aten._assert_async.msg",
        "aten._assert_scalar.default",
        "aten.sym_constrain_range_for_size.default",
        "aten.sym_constrain_range.default",
        "aten._assert_tensor_metadata.default",
    }
)


def assert_nodes(graph: torch.fx.Graph) -> FrozenSet[torch.fx.Node]:
    """The asserts of `graph` and the nodes that compute only what asserts read (``u0 <= 255``)."""
    found: set = set()
    for node in reversed(graph.nodes):  # users before the nodes they read
        if node.op != "call_function":
            continue
        if op_name(node) in ASSERT_OPS or (node.users and all(user in found for user in node.users)):
            found.add(node)
    return frozenset(found)


def is_symbolic_scalar(value: object) -> bool:
    """Whether a node's value is a symbolic int, float or bool, such as a size."""
    return isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def _tensors(value: object):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _tensor_problem(tensor: torch.Tensor, role: str) -> Optional[str]:
    if tensor.dtype not in BOUND_DTYPES:
        return f"it {role} a {tensor.dtype} tensor, which the runtime does not bind"
    if tuple(tensor.dim_order()) != tuple(range(tensor.dim())):
        # The runtime binds ExecuTorch memory as a contiguous tensor of its sizes.
        return f"it {role} a tensor in dim order {tuple(tensor.dim_order())}, not the default"
    return None


class OpenvinoOperatorSupport(OperatorSupportBase):
    """Decides node by node what goes to OpenVINO.

    A node is refused when the user asked to skip its op type or name, when the
    copy rules (copy_placement.py) place it on the CPU, when
    OpenVINO's frontend has no conversion for it, when its arguments select a
    variant OpenVINO computes wrong (argument_rules.py), when it reads or makes a tensor
    of a dtype the runtime does not bind, or when it reads a value that is neither a
    tensor nor a symbolic scalar. Symbolic sizes are taken here; the partitioner
    then decides which may cross a partition's boundary (symint_boundary.py).
    Asserts and what only they read are taken too: nobody runs them. Each reason is
    logged once per op.
    """

    def __init__(
        self,
        op_types_to_skip: Optional[Collection[str]] = None,
        op_names_to_skip: Optional[Collection[str]] = None,
        cpu_nodes: Optional[Mapping[str, str]] = None,
        constants: Collection[str] = (),
    ) -> None:
        self.op_types_to_skip = frozenset(op_types_to_skip or ())
        self.constants = frozenset(constants)
        self.op_names_to_skip = frozenset(op_names_to_skip or ())
        self.cpu_nodes = dict(cpu_nodes or {})
        self._logged: set = set()
        self._assert_nodes: Dict[int, FrozenSet[torch.fx.Node]] = {}

    def _asserts(self, graph: torch.fx.Graph) -> FrozenSet[torch.fx.Node]:
        if id(graph) not in self._assert_nodes:
            self._assert_nodes[id(graph)] = assert_nodes(graph)
        return self._assert_nodes[id(graph)]

    def is_node_supported(self, submodules: Mapping[str, torch.nn.Module], node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        reason = self.refusal(node)
        if reason is None:
            return True
        name = op_name(node)
        if (name, reason) not in self._logged:
            self._logged.add((name, reason))
            logger.info("OpenVINO partitioner leaves %s on the CPU: %s", name, reason)
        return False

    def refusal(self, node: torch.fx.Node) -> Optional[str]:
        """Why `node` stays out of the partition, or None when OpenVINO takes it."""
        name = op_name(node)
        if matches_op_type(name, self.op_types_to_skip):
            return "its op type is in op_types_to_skip"
        if node.name in self.op_names_to_skip:
            return f"node {node.name!r} is in op_names_to_skip"
        if node.name in self.cpu_nodes:
            return f"node {node.name!r}: {self.cpu_nodes[node.name]}"
        if name == "getitem" or node in self._asserts(node.graph):
            return None
        if name not in openvino_supported_ops() and not is_unpack_node(node, self.constants):
            return "OpenVINO's PyTorch frontend does not convert it"
        wrong_variant = argument_refusal(name, node)
        if wrong_variant:
            return wrong_variant
        for arg in node.all_input_nodes:
            value = arg.meta.get("val")
            if is_symbolic_scalar(value):
                continue  # symint_boundary.py decides whether it may cross into the partition
            if not isinstance(value, (torch.Tensor, list, tuple)):
                return f"it reads {arg.name!r}, a {type(value).__name__} and not a tensor"
            for tensor in _tensors(value):
                problem = _tensor_problem(tensor, "reads")
                if problem:
                    return problem
        for tensor in _tensors(node.meta.get("val")):
            problem = _tensor_problem(tensor, "makes")
            if problem:
                return problem
        return None
