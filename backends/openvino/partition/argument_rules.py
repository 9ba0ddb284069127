"""Op variants that OpenVINO converts without an error but computes wrong.

The partitioner asks ``argument_refusal`` for every node it would take: a node
whose arguments fall on a known wrong variant stays on ExecuTorch's CPU kernels.
Each rule says what OpenVINO does and the release it was seen on, so that it can
be dropped once OpenVINO computes the variant right. Variants that OpenVINO's
frontend refuses with an error need no rule: the partitioner's trial conversion
(trial_conversion.py) finds them.
"""

from __future__ import annotations

import functools
import operator
from typing import Callable, Dict, Optional

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ..edge_graph.multi_index import integer_index_dims
from ..edge_graph.nodes import DTYPE_CASTS, op_name
from ..edge_graph.pool_geometry import AvgPool, is_static, needs_explicit_padding
from ..workarounds import works_around
from . import sort_family


@works_around("avg_pool_ceil_window_past_padding")
def _avg_pool_refusal(node: torch.fx.Node, spatial: int) -> Optional[str]:
    pool = AvgPool.of(node, spatial)
    if needs_explicit_padding(pool) and not is_static(pool):
        # OpenVINO 2026.4.1: the frontend makes AvgPool-14 with exclude_pad=false and
        # CEIL_TORCH rounding, which divides that last window by the whole kernel;
        # PyTorch divides by the part of it that lies within the padded input. The
        # rewrite (passes/exact_ceil_mode_avg_pool.py) needs static sizes.
        return (
            "ceil_mode with count_include_pad or divisor_override adds a last window past the padding, "
            "which OpenVINO averages over the whole kernel and PyTorch over the padded input, and the "
            "rewrite that pads explicitly needs static sizes"
        )
    return None


@works_around("negative_index_in_multi_index")
def _index_refusal(node: torch.fx.Node) -> Optional[str]:
    sizes = node.args[0].meta["val"].shape
    if any(not isinstance(sizes[dim], int) for dim in integer_index_dims(node)):
        # passes/wrap_negative_indices.py wraps negative indices, given the size.
        return (
            "it indexes with several tensors over a dimension of dynamic size, and OpenVINO "
            "reads a negative index after the first wrong"
        )
    return None


@works_around("getitem_of_own_translation")
def _embedding_bag_refusal(node: torch.fx.Node) -> Optional[str]:
    # Our translation (conversion/translators/embedding_bag.py) computes the bags alone; the other
    # three results (offset2bag, bag sizes, max indices) serve the gradient.
    read = sorted({user.args[1] for user in node.users if user.target is operator.getitem and user.args[1] != 0})
    if read or any(user.target is not operator.getitem for user in node.users):
        return f"its results {read} besides the bags are read, and the delegate computes the bags only"
    return None


def _float_dtype(node: object) -> Optional[torch.dtype]:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value.dtype if isinstance(value, torch.Tensor) and value.dtype.is_floating_point else None


@works_around("narrowing_cast_skipped")
def _rounding_cast_refusal(node: torch.fx.Node) -> Optional[str]:
    source, result = _float_dtype(node.args[0]), _float_dtype(node)
    if result not in (torch.float16, torch.bfloat16) or source in (None, result):
        return None
    cast_back = [
        user for user in node.users if op_name(user) in DTYPE_CASTS and _float_dtype(user) not in (None, result)
    ]
    if cast_back:
        # OpenVINO 2026.4.1, CPU at f32 (our default): the plugin computes 16-bit floats in
        # f32, so a cast to f16 or bf16 and straight back drops the rounding it exists for
        # (x.half().float() - x came back all zeros, and 70000.0 did not overflow to inf).
        return f"it rounds to {result} and is cast straight back, and OpenVINO would skip the rounding"
    return None


# OpenVINO 2026.4.1's CPU plugin computes these in float32 when given integers, which
# holds every integer only below 2**24: the int32 max of [100000001, 3] came back
# 100000000 and the relu of 2**31 - 1 came back -2**31. Such nodes run on the CPU.
# Its add, multiply, cumsum and top-k are exact; an integer sum becomes a cumsum
# (passes/exact_integer_sum.py), and integer division (100000001 // 3 came back
# 33333334) is rebuilt exactly from them (conversion/rewrites/exact_integer_division.py).
# Its remainder is not exact either, but ExecuTorch's portable remainder takes the
# dividend's sign (-3 % 7 gives -3, not 4), so that stays.
_FLOAT32_EXACT_BELOW = 2**24
_IN_FLOAT32 = frozenset(
    {
        "aten.amax.default",
        "aten.amin.default",
        "aten.max.default",
        "aten.min.default",
        "aten.max.dim",
        "aten.min.dim",
        "aten.relu.default",
        "aten.pow.Tensor_Scalar",
        "aten.pow.Tensor_Tensor",
    }
)


# Integer matrix products are computed in float32 too, and their sums of products pass
# 2**24 from small factors: [[4097, 4097]] @ [[4097], [4097]] lost 2. Every integer
# dtype stays on the CPU.
_INTEGER_PRODUCTS = frozenset({"aten.mm.default", "aten.bmm.default", "aten.addmm.default", "aten.baddbmm.default"})


@works_around("clamp_bounds_in_input_type", "integer_ops_in_float32")
def _clamp_refusal(node: torch.fx.Node) -> Optional[str]:
    value, result = node.args[0].meta.get("val"), node.meta.get("val")
    if isinstance(value, torch.Tensor) and isinstance(result, torch.Tensor) and value.dtype != result.dtype:
        # clamp(int tensor, 2.5) is a float in PyTorch; the frontend casts the bounds to
        # the integer type instead (a uint8 clamp_min(x, -3.5) gave 253).
        return f"it clamps {value.dtype} values into {result.dtype}; OpenVINO's frontend computes in {value.dtype}"
    if _bounds_exact_in_float32(node):
        return None
    return _in_float32_refusal(node)


def _bounds_exact_in_float32(node: torch.fx.Node) -> bool:
    """Whether an integer clamp between two bounds of at most 2**24 comes back exact in float32.

    Rounding to float32 keeps the order of values and leaves such bounds as they are:
    a value at or past a bound still clamps to it, and one between the bounds is below
    2**24 and exact (checked on OpenVINO 2026.4.1 at +-(2**31 - 1), int32 and int64, in
    tests/ops/test_integer_reductions.py). With one bound missing, a value past 2**24
    comes back changed (relu(2**31 - 1) gave -2**31).
    """
    bounds = [node.args[1] if len(node.args) > 1 else node.kwargs.get("min")]
    bounds.append(node.args[2] if len(node.args) > 2 else node.kwargs.get("max"))
    return all(isinstance(bound, int) and abs(bound) <= _FLOAT32_EXACT_BELOW for bound in bounds)


@works_around("integer_matmul_in_float32")
def _integer_product_refusal(node: torch.fx.Node) -> Optional[str]:
    for arg in node.args:
        value = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
        if isinstance(value, torch.Tensor) and not value.dtype.is_floating_point:
            return f"OpenVINO's CPU plugin sums its {value.dtype} products in float32, exact only below 2**24"
    return None


@works_around("integer_ops_in_float32")
def _in_float32_refusal(node: torch.fx.Node) -> Optional[str]:
    for arg in node.args:
        value = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
        if not isinstance(value, torch.Tensor) or value.dtype.is_floating_point or value.dtype == torch.bool:
            continue
        info = torch.iinfo(value.dtype)
        if max(-info.min, info.max) >= _FLOAT32_EXACT_BELOW:
            return (
                f"OpenVINO's CPU plugin computes it in float32, which holds integers exactly only below 2**24, "
                f"and {value.dtype} values may reach that"
            )
    return None


@works_around("pad_fill_through_float32")
def _constant_pad_refusal(node: torch.fx.Node) -> Optional[str]:
    value = node.args[0].meta.get("val")
    fill = node.args[2] if len(node.args) > 2 else node.kwargs.get("value", 0)
    if isinstance(value, torch.Tensor) and not value.dtype.is_floating_point and float(fill) != _as_float32(fill):
        # The frontend makes the fill a float32 constant: an int32 pad of 2**31 - 1 wrote -2**31.
        return f"it pads {value.dtype} with {fill}, which OpenVINO's frontend rounds through float32"
    return None


@works_around("gather_elements_index_narrower")
def _gather_refusal(node: torch.fx.Node) -> Optional[str]:
    source, index = node.args[0].meta.get("val"), node.args[2].meta.get("val")
    if not isinstance(source, torch.Tensor) or not isinstance(index, torch.Tensor):
        return None
    dim = node.args[1] % max(source.dim(), 1)
    for axis in range(source.dim()):
        if axis != dim and not statically_known_true(source.shape[axis] == index.shape[axis]):
            # torch.gather takes an index smaller than the input; GatherElements does not
            # (the frontend checks this only where both sizes are known).
            return (
                f"its index is {index.shape[axis]} long along dim {axis} where the input is "
                f"{source.shape[axis]}; OpenVINO's GatherElements needs them equal"
            )
    return None


def _as_float32(number: float) -> float:
    return torch.tensor(number, dtype=torch.float64).to(torch.float32).item()


# Op name -> why a node of that op stays on the CPU, or None when OpenVINO computes it right.
ARGUMENT_RULES: Dict[str, Callable[[torch.fx.Node], Optional[str]]] = {
    "aten.avg_pool2d.default": functools.partial(_avg_pool_refusal, spatial=2),
    "aten.avg_pool3d.default": functools.partial(_avg_pool_refusal, spatial=3),
    "aten.index.Tensor": _index_refusal,
    "aten._embedding_bag.default": _embedding_bag_refusal,
    **dict.fromkeys(DTYPE_CASTS, _rounding_cast_refusal),
    **dict.fromkeys(_IN_FLOAT32, _in_float32_refusal),
    **dict.fromkeys(_INTEGER_PRODUCTS, _integer_product_refusal),
    "aten.clamp.default": _clamp_refusal,
    "aten.constant_pad_nd.default": _constant_pad_refusal,
    "aten.gather.default": _gather_refusal,
}
# Sorting, selection and set ops (issue 40): the variants no OpenVINO form reproduces.
ARGUMENT_RULES.update(sort_family.REFUSALS)


def argument_refusal(name: str, node: torch.fx.Node) -> Optional[str]:
    """Why OpenVINO would compute `node` (of op `name`) wrong, or None."""
    rule = ARGUMENT_RULES.get(name)
    return rule(node) if rule is not None else None
