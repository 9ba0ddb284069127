"""Sorting, selection and set ops: which nodes the partitioner keeps whole, and which variants stay on the CPU.

Our translators (conversion/translators/) compute these ops as eager PyTorch does.
Those outside core ATen have no decomposition, so ExecuTorch's edge dialect refuses
them unless the partitioner claims them: the ops of one result through
``ops_to_not_decompose`` (kept_whole.py), the ops of several results by giving each
node a twin before the edge dialect is made (pre_decomposition/sort_family_twins.py;
edge_graph/twin_ops.py says why). A
node is claimed exactly when the partitioner takes it, that is when ``refusal``
finds nothing. The variants refused are those no OpenVINO form reproduces; each
reason says why.
"""

from __future__ import annotations

import logging
import math
import operator
from typing import Callable, Collection, Dict, FrozenSet, Optional

import torch
from torch.export import ExportedProgram

from ..edge_graph.dtypes import BOUND_DTYPES
from ..edge_graph.nodes import matches_op_type, op_name
from ..edge_graph.twin_ops import aten_op_of
from ..workarounds import not_a_workaround, works_around

logger = logging.getLogger(__name__)

aten = torch.ops.aten

# Non-core ATen ops of one result, which our translators convert. None has a decomposition
# but argsort.stable's, into sort.stable, which has none.
KEPT_WHOLE: FrozenSet[torch._ops.OpOverload] = frozenset(
    {
        aten.argsort.stable,
        aten.median.default,
        aten.nanmedian.default,
        aten.bucketize.Tensor,
        aten.bucketize.Scalar,
        aten.searchsorted.Tensor,
        aten.searchsorted.Scalar,
        aten.histc.default,
    }
)
# Non-core ATen ops of several results, which our translators convert.
TWINNED: FrozenSet[torch._ops.OpOverload] = frozenset(
    {
        aten.sort.stable,
        aten.median.dim,
        aten.nanmedian.dim,
        aten.kthvalue.default,
        aten.mode.default,
        aten._unique2.default,
        aten.unique_dim.default,
        aten.unique_consecutive.default,
    }
)


def _reads_result(node: torch.fx.Node, index: int) -> bool:
    """Whether something reads result `index` of a node of several results: export leaves a
    getitem for each result, read or not (``torch.unique`` without ``return_inverse``)."""
    return any(user.target is operator.getitem and user.args[1] == index and user.users for user in node.users)


def _reduced_size(node: torch.fx.Node, dim_index: int, default_dim: int) -> Optional[int]:
    """The size of the dim a reduction's node reduces, or None when it is not static."""
    value = node.args[0].meta.get("val")
    dim = node.args[dim_index] if len(node.args) > dim_index else node.kwargs.get("dim", default_dim)
    if value.dim() == 0:
        return 1
    size = value.shape[dim % value.dim()]
    return size if isinstance(size, int) else None


# Eager's mode takes the index from std::sort's order, which is an insertion sort, so
# stable, up to this many elements (libstdc++'s _S_threshold).
_STD_SORT_INSERTION_LIMIT = 16


@not_a_workaround("eager's index among equal values comes from a quickselect no OpenVINO op reproduces")
def _kthvalue_refusal(node: torch.fx.Node) -> Optional[str]:
    if _reads_result(node, 1):
        return "its index is read, which eager picks among equal values by a quickselect no OpenVINO op reproduces"
    return None


@not_a_workaround("eager's answer past 16 elements follows std::sort's steps, which no OpenVINO op reproduces")
def _mode_refusal(node: torch.fx.Node) -> Optional[str]:
    size = _reduced_size(node, 1, -1)
    if node.args[0].meta["val"].dtype.is_floating_point and (size is None or size > _STD_SORT_INSERTION_LIMIT):
        # The translation repeats the insertion sort, whose comparisons a NaN breaks.
        return (
            f"it reduces {size or 'a dynamic number of'} floats, where a NaN makes eager's answer depend "
            f"on std::sort's steps, which no OpenVINO op reproduces past {_STD_SORT_INSERTION_LIMIT} elements"
        )
    if _reads_result(node, 1) and (size is None or size > _STD_SORT_INSERTION_LIMIT):
        return (
            f"its index is read over {size or 'a dynamic number of'} elements, of which eager takes the one "
            f"std::sort's order puts last, which no OpenVINO op reproduces past {_STD_SORT_INSERTION_LIMIT}"
        )
    return None


@not_a_workaround("the index eager gives a row of NaN is read for a static size only")
def _nanmedian_refusal(node: torch.fx.Node) -> Optional[str]:
    if _reads_result(node, 1) and _reduced_size(node, 1, -1) is None:
        return (
            "its index is read over a dynamic number of elements, and the index eager gives a row of "
            "NaN only is read for the row's size when the program is lowered"
        )
    return None


@not_a_workaround("eager numbers the NaNs in std::sort's order, which no OpenVINO op reproduces")
def _unique_refusal(node: torch.fx.Node) -> Optional[str]:
    value = node.args[0].meta["val"]
    count = value.numel()
    if value.dtype.is_floating_point and _reads_result(node, 1):
        if not isinstance(count, int) or count > _STD_SORT_INSERTION_LIMIT:
            # Eager sorts with std::sort, whose order among the NaNs (each a value of its own) is its own.
            return (
                f"its inverse over {count if isinstance(count, int) else 'a dynamic number of'} floats is read, "
                f"whose NaNs eager numbers in std::sort's order, which no OpenVINO op reproduces past "
                f"{_STD_SORT_INSERTION_LIMIT} elements"
            )
    return None


@works_around("float_division_one_ulp_off")
def _histc_refusal(node: torch.fx.Node) -> Optional[str]:
    dtype = node.args[0].meta["val"].dtype
    bins, low, high = (list(node.args[1:]) + [100, 0, 0][len(node.args) - 1 :])[:3]
    if dtype != torch.float32:
        return f"it counts {dtype} values, which eager bins in {dtype} arithmetic and OpenVINO in float32"
    if low == high:
        return (
            "its range is the data's (min == max), whose bins need a division at run time, which OpenVINO's "
            "CPU plugin computes up to an ulp off, moving values on a bin's edge"
        )
    if not (math.isfinite(low) and math.isfinite(high) and low < high and bins > 0):
        return f"eager refuses bins={bins}, min={low}, max={high}"
    return None


# Slices of more elements are sorted here by as many stable sorts: a bound on the graph's size.
_UNIQUE_DIM_SLICE_LIMIT = 64


@not_a_workaround("float slices: eager's std::sort order is undefined with NaN; a bound on the graph's size")
def _unique_dim_refusal(node: torch.fx.Node) -> Optional[str]:
    value = node.args[0].meta["val"]
    if value.dtype.is_floating_point:
        return "it compares float slices, which eager sorts with std::sort in an order a NaN leaves undefined"
    dim = node.args[1] % max(value.dim(), 1)
    sizes = [size for axis, size in enumerate(value.shape) if axis != dim]
    if not all(isinstance(size, int) for size in sizes) or math.prod(sizes) > _UNIQUE_DIM_SLICE_LIMIT:
        return f"its slices along dim {dim} hold more than {_UNIQUE_DIM_SLICE_LIMIT} or a dynamic number of elements"
    return None


@not_a_workaround("eager's unsorted order is its own; ExecuTorch's portable kernels have topk")
def _topk_refusal(node: torch.fx.Node) -> Optional[str]:
    if not node.kwargs.get("sorted", node.args[4] if len(node.args) > 4 else True):
        # ExecuTorch's portable kernels have topk: the CPU runs it.
        return "it asks for the values unsorted (sorted=False), which eager returns in an order of its own"
    return None


# Op name -> why a node of that op stays on the CPU, or None.
REFUSALS: Dict[str, Callable[[torch.fx.Node], Optional[str]]] = {
    "aten.kthvalue.default": _kthvalue_refusal,
    "aten.mode.default": _mode_refusal,
    "aten.nanmedian.dim": _nanmedian_refusal,
    "aten._unique2.default": _unique_refusal,
    "aten.unique_dim.default": _unique_dim_refusal,
    "aten.histc.default": _histc_refusal,
    "aten.topk.default": _topk_refusal,
}


def _bound(node: torch.fx.Node) -> bool:
    values = [node.meta.get("val")] + [arg.meta.get("val") for arg in node.all_input_nodes]
    tensors = [t for value in values for t in (value if isinstance(value, (tuple, list)) else [value])]
    return all(t.dtype in BOUND_DTYPES for t in tensors if isinstance(t, torch.Tensor))


def refusal(node: torch.fx.Node) -> Optional[str]:
    """Why a node of the sort family stays on the CPU, or None when the delegate computes it."""
    rule = REFUSALS.get(op_name(node))
    return rule(node) if rule is not None else None


def claims(node: torch.fx.Node) -> bool:
    """Whether the partitioner takes this node, so ExecuTorch is to keep it whole."""
    return node.op == "call_function" and _bound(node) and refusal(node) is None


def warn_about_twins_left_on_cpu(graph: torch.fx.Graph) -> None:
    """Names each twinned node the partitioner did not take after all (its conversion failed),
    for which ``to_executorch`` then finds no kernel. (A partitioner may not change the graph,
    so the node keeps its twin.) Lowering again with the op in ``op_types_to_skip`` leaves its
    nodes the ATen op they were."""
    for node in graph.nodes:
        op = aten_op_of(node.target) if node.op == "call_function" else None
        if op is not None and "delegation_tag" not in node.meta:
            logger.error(
                "OpenVINO partitioner: %s (%s) could not be converted after all, and ExecuTorch has no kernel "
                "for the form it was kept in; pass op_types_to_skip=[%r] to leave it on the CPU as it is",
                node.name,
                op,
                str(op),
            )


def warn_about_nodes_left_on_cpu(
    program: ExportedProgram, op_types_to_skip: Collection[str], op_names_to_skip: Collection[str]
) -> None:
    """Names each node of the ops above that the partitioner leaves on the CPU, and why.

    ExecuTorch's portable kernels (what ``executorch.runtime`` links) have none of these
    ops: with the default EdgeCompileConfig the edge dialect then refuses the node as not
    core ATen, and with the op in ``_core_aten_ops_exception_list`` the program lowers but
    fails to load with ``Missing operator``. The warning says so before either happens."""
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target not in KEPT_WHOLE | TWINNED:
            continue
        if matches_op_type(op_name(node), op_types_to_skip) or node.name in op_names_to_skip:
            why = "op_types_to_skip or op_names_to_skip names it"
        elif not _bound(node):
            why = "a dtype the delegate does not bind"
        else:
            why = refusal(node)
        if why is None:
            continue
        logger.warning(
            "OpenVINO partitioner: %s (%s) stays on ExecuTorch's CPU kernels: %s. executorch.runtime's portable "
            "kernels have no %s: the default EdgeCompileConfig refuses it as not core ATen, and a program that "
            "lists it in _core_aten_ops_exception_list fails to load with Missing operator unless the runtime "
            "links a kernel library that registers it (a kernel of your own through EXECUTORCH_LIBRARY); "
            "or change the model",
            node.name,
            node.target,
            why,
            node.target,
        )
