"""Issue 17, conversion safety: small single-op cases for the ops users meet most.

Each Case is data: a name, a factory for the module (called under a fixed seed),
a factory for one input set (called with a seeded torch.Generator, so two seeds
give two different inputs for the same loaded method), and a note on dtypes.
A runner lowers each case with OpenvinoPartitioner, runs two inputs through one
loaded method and compares with eager PyTorch. This module defines no tests:
ops/test_op_variant_sweep.py lowers the cases a family (a `section`) at a time.

Two kinds of cases need more than that:
- `Case.non_core_aten`: ops outside core ATen that have no decomposition, which
  to_edge refuses unless they are in EdgeCompileConfig._core_aten_ops_exception_list.
- RUNS_NOWHERE (at the end): cases that lower, with their op on the CPU, but whose
  program cannot load, because ExecuTorch's portable kernels lack that op too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Tuple

import torch
import torch.nn.functional as F
from torch import nn
from torch._ops import OpOverload

Inputs = Tuple[Any, ...]


@dataclass(frozen=True)
class Case:
    name: str
    module_factory: Callable[[], nn.Module]
    input_factory: Callable[[torch.Generator], Inputs]
    dtype_note: str = "f32"
    family: str = ""  # the section the case is in: "conv", "pooling", ...
    non_core_aten: Tuple[OpOverload, ...] = ()  # non-core ATen ops to_edge must accept


class Fn(nn.Module):
    """A module whose forward is `fn(*inputs)`."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def randn(*shape: int) -> Callable[[torch.Generator], Inputs]:
    return lambda g: (torch.randn(*shape, generator=g),)


def distinct_ints(shape: Tuple[int, ...], dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """Integers without ties (so argmax/cummax indices are well defined), in [-n/2, n/2)."""
    n = 1
    for size in shape:
        n *= size
    return (torch.randperm(n, generator=g) - n // 2).reshape(shape).to(dtype)


aten = torch.ops.aten
CASES: List[Case] = []
_FAMILY = [""]


def section(family: str) -> None:
    """Starts a family of cases: the cases `add` appends from here on belong to it."""
    _FAMILY[0] = family


def add(
    name: str, module_factory, input_factory, dtype_note: str = "f32", non_core_aten: Tuple[OpOverload, ...] = ()
) -> None:
    CASES.append(Case(name, module_factory, input_factory, dtype_note, _FAMILY[0], non_core_aten))


# --------------------------------------------------------------------------- conv
section("conv")
CONV = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
CONV_T = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}
SPATIAL = {1: (9,), 2: (7, 8), 3: (5, 6, 7)}


def conv_input(dim: int, channels: int):
    return randn(1, channels, *SPATIAL[dim])


def add_conv(dim: int, tag: str, in_ch: int = 2, out_ch: int = 4, kernel: int = 3, **kwargs) -> None:
    add(f"conv{dim}d_{tag}", lambda: CONV[dim](in_ch, out_ch, kernel, **kwargs), conv_input(dim, in_ch))


for d in (1, 2, 3):
    for mode in ("zeros", "reflect", "replicate", "circular"):
        add_conv(d, f"pad1_{mode}", padding=1, padding_mode=mode)
        add_conv(d, f"pad2_{mode}_dil2", padding=2, dilation=2, padding_mode=mode)
    for mode in ("zeros", "replicate", "circular"):
        add_conv(d, f"same_k4_{mode}", kernel=4, padding="same", padding_mode=mode)  # asymmetric pad
    add_conv(d, "same_k3_dil2", padding="same", dilation=2)
    add_conv(d, "valid", padding="valid")
    add_conv(d, "groups2", in_ch=4, out_ch=4, padding=1, groups=2)
    add_conv(d, "depthwise", in_ch=4, out_ch=4, padding=1, groups=4)
    add_conv(d, "stride2_pad1", padding=1, stride=2)
    add_conv(d, "stride2_dil2_pad2_nobias", padding=2, dilation=2, stride=2, bias=False)
    add_conv(d, "groups2_reflect_stride2", in_ch=4, out_ch=2, padding=1, groups=2, stride=2, padding_mode="reflect")
add_conv(2, "pad_tuple_1_2_replicate", padding=(1, 2), padding_mode="replicate")
add_conv(2, "pad_tuple_0_2", padding=(0, 2))
add_conv(2, "k1x3_same", kernel=(1, 3), padding="same")


section("conv_transpose")


def add_conv_t(dim: int, tag: str, in_ch: int = 2, out_ch: int = 3, kernel: int = 3, **kwargs) -> None:
    add(f"convT{dim}d_{tag}", lambda: CONV_T[dim](in_ch, out_ch, kernel, **kwargs), conv_input(dim, in_ch))


for d in (1, 2, 3):
    add_conv_t(d, "basic")
    add_conv_t(d, "pad1")
    add_conv_t(d, "stride2_pad1_outpad1", stride=2, padding=1, output_padding=1)
    add_conv_t(d, "stride3_outpad2", stride=3, output_padding=2)
    add_conv_t(d, "groups2", in_ch=4, out_ch=4, groups=2, padding=1)
    add_conv_t(d, "dil2_pad2", dilation=2, padding=2)
    add_conv_t(d, "stride2_dil2_outpad1_nobias", stride=2, dilation=2, output_padding=1, bias=False)
    add_conv_t(d, "k2_stride2_groups2", in_ch=4, out_ch=2, kernel=2, stride=2, groups=2)

# --------------------------------------------------------------------------- pooling
section("pooling")
MAXPOOL = {1: nn.MaxPool1d, 2: nn.MaxPool2d, 3: nn.MaxPool3d}
AVGPOOL = {1: nn.AvgPool1d, 2: nn.AvgPool2d, 3: nn.AvgPool3d}


POOL_SPATIAL = {1: (8,), 2: (7, 8), 3: (5, 6, 7)}  # even and odd sizes: a ceil window can overhang


def pool_input(dim: int, spatial=None):
    return randn(1, 3, *(spatial or POOL_SPATIAL[dim]))


for d in (1, 2, 3):

    def add_max(tag, *args, d=d, spatial=None, **kwargs):
        add(f"maxpool{d}d_{tag}", lambda: MAXPOOL[d](*args, **kwargs), pool_input(d, spatial))

    add_max("k2", 2)
    add_max("k3_s2_p1", 3, stride=2, padding=1)
    add_max("k2_s2_ceil", 2, stride=2, ceil_mode=True, spatial=(9,) if d == 1 else None)
    add_max("k3_s2_p1_ceil", 3, stride=2, padding=1, ceil_mode=True)
    add_max("k3_s1_dil2", 3, stride=1, dilation=2)
    add_max("k2_indices", 2, return_indices=True)
    add_max("k3_s2_p1_ceil_indices", 3, stride=2, padding=1, ceil_mode=True, return_indices=True)

    def add_avg(tag, *args, d=d, spatial=None, **kwargs):
        add(f"avgpool{d}d_{tag}", lambda: AVGPOOL[d](*args, **kwargs), pool_input(d, spatial))

    add_avg("k2", 2)
    for ceil in (False, True):
        for cip in (True, False):
            add_avg(
                f"k3_s2_p1_ceil{int(ceil)}_cip{int(cip)}", 3, stride=2, padding=1, ceil_mode=ceil, count_include_pad=cip
            )
    add_avg("k2_s2_ceil_nopad", 2, stride=2, ceil_mode=True, spatial=(9,) if d == 1 else None)
    if d > 1:  # AvgPool1d has no divisor_override
        add_avg("k3_s1_p1_divisor3", 3, stride=1, padding=1, divisor_override=3)
        add_avg("k2_divisor3", 2, divisor_override=3)
        add_avg("k3_s2_p1_ceil_divisor5", 3, stride=2, padding=1, ceil_mode=True, divisor_override=5)

ADAPTIVE = {
    ("avg", 1): nn.AdaptiveAvgPool1d,
    ("avg", 2): nn.AdaptiveAvgPool2d,
    ("avg", 3): nn.AdaptiveAvgPool3d,
    ("max", 1): nn.AdaptiveMaxPool1d,
    ("max", 2): nn.AdaptiveMaxPool2d,
    ("max", 3): nn.AdaptiveMaxPool3d,
}
ADAPTIVE_OUT = {1: [4, 1], 2: [(3, 5), (2, 1)], 3: [(2, 4, 3)]}
# adaptive_max_pool2d/3d are not core ATen and have no decomposition (1d runs as 2d).
ADAPTIVE_MAX_OP = {
    1: (aten.adaptive_max_pool2d.default,),
    2: (aten.adaptive_max_pool2d.default,),
    3: (aten.adaptive_max_pool3d.default,),
}
for kind in ("avg", "max"):
    for d in (1, 2, 3):
        for out in ADAPTIVE_OUT[d]:
            tag = "x".join(str(o) for o in (out if isinstance(out, tuple) else (out,)))
            add(
                f"adaptive_{kind}pool{d}d_out{tag}",
                lambda kind=kind, d=d, out=out: ADAPTIVE[kind, d](out),
                pool_input(d),
                non_core_aten=ADAPTIVE_MAX_OP[d] if kind == "max" else (),
            )
    if kind == "max":
        for d in (1, 2):
            out = ADAPTIVE_OUT[d][0]
            add(
                f"adaptive_maxpool{d}d_indices",
                lambda d=d, out=out: ADAPTIVE["max", d](out, return_indices=True),
                pool_input(d),
                non_core_aten=ADAPTIVE_MAX_OP[d],
            )

# --------------------------------------------------------------------------- embedding
section("embedding")
VOCAB, EMB_DIM = 10, 4


def index_input(shape, high=VOCAB, dtype=torch.int64):
    return lambda g: (torch.randint(0, high, shape, generator=g, dtype=dtype),)


add("embedding_1d_idx", lambda: nn.Embedding(VOCAB, EMB_DIM), index_input((6,)), "i64 idx")
add("embedding_2d_idx", lambda: nn.Embedding(VOCAB, EMB_DIM), index_input((2, 5)), "i64 idx")
add("embedding_i32_idx", lambda: nn.Embedding(VOCAB, EMB_DIM), index_input((2, 5), dtype=torch.int32), "i32 idx")
add("embedding_padding_idx0", lambda: nn.Embedding(VOCAB, EMB_DIM, padding_idx=0), index_input((2, 5)), "i64 idx")
add("embedding_padding_idx_neg", lambda: nn.Embedding(VOCAB, EMB_DIM, padding_idx=-1), index_input((2, 5)), "i64 idx")


def bag_1d_input(per_sample: bool = False, empty_bag: bool = False, last_offset: int = 0):
    def make(g):
        indices = torch.randint(0, VOCAB, (8,), generator=g)
        offsets = torch.tensor([0, 3, 3, 6] if empty_bag else [0, 2, 5, 6])
        if last_offset:
            offsets = torch.cat([offsets, torch.tensor([last_offset])])
        inputs = (indices, offsets)
        if per_sample:
            inputs += (torch.rand(8, generator=g),)
        return inputs

    return make


class Bag(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, EMB_DIM, **kwargs)

    def forward(self, *args):
        if len(args) == 3:
            return self.bag(args[0], args[1], per_sample_weights=args[2])
        return self.bag(*args)


for mode in ("sum", "mean", "max"):
    add(f"embedding_bag_{mode}_2d", lambda mode=mode: Bag(mode=mode), index_input((3, 4)), "i64 idx")
    add(f"embedding_bag_{mode}_offsets", lambda mode=mode: Bag(mode=mode), bag_1d_input(), "i64 idx+offsets")
    add(
        f"embedding_bag_{mode}_offsets_empty_bag",
        lambda mode=mode: Bag(mode=mode),
        bag_1d_input(empty_bag=True),
        "i64 idx+offsets",
    )
    add(
        f"embedding_bag_{mode}_last_offset",
        lambda mode=mode: Bag(mode=mode, include_last_offset=True),
        bag_1d_input(last_offset=8),
        "i64 idx+offsets",
    )
    # Eager ends the last bag at a last offset below the number of indices in modes
    # sum and mean, and runs it to the end in mode max.
    add(
        f"embedding_bag_{mode}_last_offset_below_end",
        lambda mode=mode: Bag(mode=mode, include_last_offset=True),
        bag_1d_input(last_offset=7),
        "i64 idx+offsets",
    )
    add(
        f"embedding_bag_{mode}_padding_idx",
        lambda mode=mode: Bag(mode=mode, padding_idx=0),
        lambda g: (
            torch.tensor([[0, 1, 2, 0], [3, 0, 4, 5], [6, 7, 8, 9]])
            if g.initial_seed() % 2
            else torch.tensor([[0, 0, 1, 2], [5, 6, 0, 0], [9, 8, 7, 0]]),
        ),
        "i64 idx",
    )


class FunctionalBag(nn.Module):
    """F.embedding_bag with padding_idx over a weight whose padding row is not zero."""

    def __init__(self, mode):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(VOCAB, EMB_DIM))
        self.mode = mode

    def forward(self, indices):
        return F.embedding_bag(indices, self.weight, mode=self.mode, padding_idx=0)


for mode in ("sum", "mean"):
    add(
        f"embedding_bag_{mode}_padding_idx_nonzero_row",
        lambda mode=mode: FunctionalBag(mode),
        lambda g: (torch.randint(0, 3, (3, 4), generator=g),),
        "i64 idx",
    )
add(
    "embedding_bag_sum_per_sample_weights",
    lambda: Bag(mode="sum"),
    bag_1d_input(per_sample=True),
    "i64 idx+offsets, f32 weights",
)
add(
    "embedding_bag_sum_per_sample_weights_last_offset_below_end",
    lambda: Bag(mode="sum", include_last_offset=True),
    bag_1d_input(per_sample=True, last_offset=7),
    "i64 idx+offsets, f32 weights",
)

# --------------------------------------------------------------------------- interpolate
section("interpolate")
INTERP_IN = {1: (1, 2, 7), 2: (1, 2, 5, 6), 3: (1, 2, 4, 5, 3)}
INTERP_MODES = {
    1: ["nearest", "nearest-exact", "linear"],
    2: ["nearest", "nearest-exact", "bilinear", "bicubic"],
    3: ["nearest", "nearest-exact", "trilinear"],
}
INTERP_SIZE = {1: 11, 2: (7, 4), 3: (6, 3, 5)}  # up and down, non-integer ratios
for d in (1, 2, 3):
    for mode in INTERP_MODES[d]:
        corners = (None,) if mode.startswith("nearest") else (False, True)
        for ac in corners:
            tag = mode + ("" if ac is None else f"_ac{int(ac)}")
            add(
                f"interp{d}d_{tag}_scale2",
                lambda mode=mode, ac=ac: Fn(lambda x: F.interpolate(x, scale_factor=2, mode=mode, align_corners=ac)),
                randn(*INTERP_IN[d]),
            )
            add(
                f"interp{d}d_{tag}_scale1.5",
                lambda mode=mode, ac=ac: Fn(lambda x: F.interpolate(x, scale_factor=1.5, mode=mode, align_corners=ac)),
                randn(*INTERP_IN[d]),
            )
            add(
                f"interp{d}d_{tag}_size",
                lambda mode=mode, ac=ac, d=d: Fn(
                    lambda x: F.interpolate(x, size=INTERP_SIZE[d], mode=mode, align_corners=ac)
                ),
                randn(*INTERP_IN[d]),
            )
add(
    "interp2d_nearest_scale0.5",
    lambda: Fn(lambda x: F.interpolate(x, scale_factor=0.5, mode="nearest")),
    randn(1, 2, 8, 6),
)
add(
    "interp2d_bilinear_scale1.5_recompute",
    lambda: Fn(lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)),
    randn(*INTERP_IN[2]),
)
# Both lower with the default EdgeCompileConfig (the partitioner writes them in core ATen ops).
for mode in ("bilinear", "bicubic"):
    for ac in (False, True):
        add(
            f"interp2d_{mode}_ac{int(ac)}_antialias_down",
            lambda mode=mode, ac=ac: Fn(
                lambda x: F.interpolate(x, size=(3, 4), mode=mode, align_corners=ac, antialias=True)
            ),
            randn(1, 2, 8, 9),
        )
    add(
        f"interp2d_{mode}_antialias_up",
        lambda mode=mode: Fn(lambda x: F.interpolate(x, scale_factor=2, mode=mode, antialias=True)),
        randn(1, 2, 4, 5),
    )

# --------------------------------------------------------------------------- reductions
section("reductions")
RED_SHAPE = (3, 4, 5)


def float_in(g):
    return (torch.randn(*RED_SHAPE, generator=g),)


def prod_in(g):  # values near +-1 so prod stays well scaled
    x = torch.rand(*RED_SHAPE, generator=g) + 0.5
    return (x * (torch.randint(0, 2, RED_SHAPE, generator=g) * 2 - 1),)


def int_in(dtype):
    return lambda g: (distinct_ints(RED_SHAPE, dtype, g),)


def small_int_in(dtype):
    return lambda g: (torch.randint(-3, 4, RED_SHAPE, generator=g, dtype=dtype),)


def bool_in(g):
    return (torch.rand(*RED_SHAPE, generator=g) > 0.3,)


DIM_VARIANTS = {  # tag -> kwargs
    "all": {},
    "dim1": {"dim": 1},
    "dimneg1_keep": {"dim": -1, "keepdim": True},
    "dims0_neg1": {"dim": (0, -1)},
}
SINGLE_DIM_VARIANTS = {"all": {}, "dim1": {"dim": 1}, "dimneg1_keep": {"dim": -1, "keepdim": True}}


def red(fn, **kwargs):
    return lambda: Fn(lambda x: fn(x, **kwargs))


FLOAT_REDS = {
    "sum": (torch.sum, DIM_VARIANTS),
    "mean": (torch.mean, DIM_VARIANTS),
    "amax": (torch.amax, DIM_VARIANTS),
    "amin": (torch.amin, DIM_VARIANTS),
    "prod": (torch.prod, SINGLE_DIM_VARIANTS),
    "argmax": (torch.argmax, SINGLE_DIM_VARIANTS),
    "argmin": (torch.argmin, SINGLE_DIM_VARIANTS),
    "var": (torch.var, DIM_VARIANTS),
    "std": (torch.std, DIM_VARIANTS),
    "logsumexp": (torch.logsumexp, {k: v for k, v in DIM_VARIANTS.items() if k != "all"}),
    "all": (torch.all, DIM_VARIANTS),
    "any": (torch.any, DIM_VARIANTS),
}
for op, (fn, variants) in FLOAT_REDS.items():
    for tag, kwargs in variants.items():
        if op in ("amax", "amin") and tag == "all":
            kwargs = {"dim": ()}
        make_in = prod_in if op == "prod" else float_in
        if op in ("all", "any"):  # some zeros so the result is not trivially true

            def make_in(g):
                return (torch.randint(0, 3, RED_SHAPE, generator=g).float() * torch.randn(*RED_SHAPE, generator=g),)

        add(f"{op}_f32_{tag}", red(fn, **kwargs), make_in)
add("var_f32_dim1_correction0", red(torch.var, dim=1, correction=0), float_in)
add("std_f32_dims0_neg1_unbiased_false", red(torch.std, dim=(0, -1), unbiased=False), float_in)
add("mean_f32_all_keepdim", red(torch.mean, dim=(0, 1, 2), keepdim=True), float_in)
add("sum_f32_dim1_to_f64_out", red(torch.sum, dim=1, dtype=torch.float64), float_in)

INT_REDS = {
    "sum": (torch.sum, DIM_VARIANTS),
    "amax": (torch.amax, DIM_VARIANTS),
    "amin": (torch.amin, DIM_VARIANTS),
    "prod": (torch.prod, SINGLE_DIM_VARIANTS),
    "argmax": (torch.argmax, SINGLE_DIM_VARIANTS),
    "argmin": (torch.argmin, SINGLE_DIM_VARIANTS),
    "all": (torch.all, {"all": {}, "dim1": {"dim": 1}}),
    "any": (torch.any, {"all": {}, "dim1": {"dim": 1}}),
    "logsumexp": (torch.logsumexp, {"dim1": {"dim": 1}}),
}
for dtype, short in ((torch.int32, "i32"), (torch.int64, "i64")):
    for op, (fn, variants) in INT_REDS.items():
        for tag, kwargs in variants.items():
            if op in ("amax", "amin") and tag == "all":
                kwargs = {"dim": ()}
            make_in = small_int_in(dtype) if op in ("prod", "all", "any") else int_in(dtype)
            add(f"{op}_{short}_{tag}", red(fn, **kwargs), make_in, short)
for op, fn, kwargs in (
    ("sum", torch.sum, {"dim": 1}),
    ("sum", torch.sum, {}),
    ("all", torch.all, {"dim": -1}),
    ("any", torch.any, {}),
    ("amax", torch.amax, {"dim": 1}),
    ("prod", torch.prod, {"dim": 1}),
):
    tag = "_".join(f"{k}{v}" for k, v in kwargs.items()) or "all"
    add(f"{op}_bool_{tag}", red(fn, **kwargs), bool_in, "bool")

# --------------------------------------------------------------------------- index and scatter
section("index_scatter")
X_SHAPE = (5, 6)


def with_index(high: int, n: int, unique: bool = False, negative: bool = False, dtype=torch.int64):
    def make(g):
        x = torch.randn(*X_SHAPE, generator=g)
        idx = torch.randperm(high, generator=g)[:n] if unique else torch.randint(0, high, (n,), generator=g)
        if negative:
            idx = idx - high
        return x, idx.to(dtype)

    return make


add("index_select_dim0", lambda: Fn(lambda x, i: torch.index_select(x, 0, i)), with_index(5, 4), "f32, i64 idx")
add("index_select_dimneg1", lambda: Fn(lambda x, i: torch.index_select(x, -1, i)), with_index(6, 7), "f32, i64 idx")
add(
    "index_select_i32_idx",
    lambda: Fn(lambda x, i: torch.index_select(x, 1, i)),
    with_index(6, 3, dtype=torch.int32),
    "f32, i32 idx",
)
add("getitem_x_idx", lambda: Fn(lambda x, i: x[i]), with_index(5, 4), "f32, i64 idx")
add("getitem_x_idx_negative", lambda: Fn(lambda x, i: x[i]), with_index(5, 4, negative=True), "f32, i64 idx<0")
add("getitem_x_colon_idx", lambda: Fn(lambda x, i: x[:, i]), with_index(6, 3), "f32, i64 idx")
add("getitem_x_colon_idx_negative", lambda: Fn(lambda x, i: x[:, i]), with_index(6, 3, negative=True), "f32, i64 idx<0")
add("getitem_x_idx2d", lambda: Fn(lambda x, i: x[i.reshape(2, 2)]), with_index(5, 4), "f32, i64 idx")
add("getitem_x_i32_idx", lambda: Fn(lambda x, i: x[i]), with_index(5, 4, dtype=torch.int32), "f32, i32 idx")


def two_indices(g):
    x = torch.randn(*X_SHAPE, generator=g)
    return x, torch.randint(0, 5, (4,), generator=g), torch.randint(-6, 6, (4,), generator=g)


add("getitem_x_idx1_idx2", lambda: Fn(lambda x, i, j: x[i, j]), two_indices, "f32, i64 idx (neg in idx2)")
add("getitem_x_negidx1_idx2", lambda: Fn(lambda x, i, j: x[i - 5, j % 6]), two_indices, "f32, i64 idx (neg in idx1)")
add(
    "getitem_3d_idx1_colon_negidx2",
    lambda: Fn(lambda x, i, j: x.reshape(5, 2, 3)[i, :, j % 3 - 3]),
    two_indices,
    "f32, i64 idx (neg in idx2)",
)
add(
    "getitem_3d_colon_idx1_idx2",
    lambda: Fn(lambda x, i, j: x.reshape(5, 2, 3)[:, i % 2, j % 3]),
    two_indices,
    "f32, i64 idx",
)


def gather_in(dim: int, shape=(5, 3)):
    def make(g):
        x = torch.randn(*X_SHAPE, generator=g)
        return x, torch.randint(0, X_SHAPE[dim], shape, generator=g)

    return make


add("gather_dim0", lambda: Fn(lambda x, i: torch.gather(x, 0, i)), gather_in(0), "f32, i64 idx")
add("gather_dim1", lambda: Fn(lambda x, i: torch.gather(x, 1, i)), gather_in(1), "f32, i64 idx")
add("gather_dimneg1_wider_idx", lambda: Fn(lambda x, i: torch.gather(x, -1, i)), gather_in(1, (3, 8)), "f32, i64 idx")
add("take_along_dim_dim1", lambda: Fn(lambda x, i: torch.take_along_dim(x, i, dim=1)), gather_in(1), "f32, i64 idx")
add("take_along_dim_argsort", lambda: Fn(lambda x: torch.take_along_dim(x, x.argsort(dim=0), dim=0)), randn(*X_SHAPE))
add(
    "take_along_dim_nodim",
    lambda: Fn(lambda x, i: torch.take_along_dim(x, i.reshape(-1) % 30)),
    gather_in(1),
    "f32, i64 idx",
)


def put_in(unique: bool, two: bool = False, negative: bool = False):
    def make(g):
        x = torch.randn(*X_SHAPE, generator=g)
        idx = torch.randperm(5, generator=g)[:3] if unique else torch.randint(0, 5, (4,), generator=g)
        if negative:
            idx = idx - 5
        if two:
            col = (
                torch.randperm(6, generator=g)[: len(idx)] if unique else torch.randint(0, 6, (len(idx),), generator=g)
            )
            return x, idx, col, torch.randn(len(idx), generator=g)
        return x, idx, torch.randn(len(idx), 6, generator=g)

    return make


add("index_put_row_unique", lambda: Fn(lambda x, i, v: torch.index_put(x, (i,), v)), put_in(True), "f32, i64 idx")
add(
    "index_put_row_negative",
    lambda: Fn(lambda x, i, v: torch.index_put(x, (i,), v)),
    put_in(True, negative=True),
    "f32, i64 idx<0",
)
add(
    "index_put_row_accumulate_dups",
    lambda: Fn(lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True)),
    put_in(False),
    "f32, i64 idx",
)
add(
    "index_put_2idx_unique",
    lambda: Fn(lambda x, i, j, v: torch.index_put(x, (i, j), v)),
    put_in(True, True),
    "f32, i64 idx",
)
add(
    "index_put_2idx_accumulate_dups",
    lambda: Fn(lambda x, i, j, v: torch.index_put(x, (i, j), v, accumulate=True)),
    put_in(False, True),
    "f32, i64 idx",
)
add(
    "index_put_2idx_negative_col",
    lambda: Fn(lambda x, i, j, v: torch.index_put(x, (i, j - 6), v)),
    put_in(True, True),
    "f32, i64 idx (neg in idx2)",
)
add(
    "index_put_2idx_accumulate_negative_col",
    lambda: Fn(lambda x, i, j, v: torch.index_put(x, (i, j - 6), v, accumulate=True)),
    put_in(False, True),
    "f32, i64 idx (neg in idx2)",
)
add(
    "index_put_scalar_broadcast",
    lambda: Fn(lambda x, i, v: torch.index_put(x, (i,), v[0, 0])),
    put_in(True),
    "f32, i64 idx",
)


class SetItemCols(nn.Module):
    def forward(self, x, i, v):
        y = x.clone()
        y[:, i] = v
        return y


add(
    "setitem_x_colon_idx",
    lambda: SetItemCols(),
    lambda g: (torch.randn(*X_SHAPE, generator=g), torch.randperm(6, generator=g)[:2], torch.randn(5, 2, generator=g)),
    "f32, i64 idx",
)


def scatter_in(unique: bool, dim: int = 1):
    def make(g):
        x = torch.randn(*X_SHAPE, generator=g)
        rows = 4
        if unique:  # each row its own permutation: no two sources write one place
            idx = torch.stack([torch.randperm(X_SHAPE[dim], generator=g)[:3] for _ in range(rows)])
            idx = idx if dim == 1 else idx.T.contiguous()
        else:
            idx = torch.randint(0, X_SHAPE[dim], (rows, 3) if dim == 1 else (3, rows), generator=g)
        return x, idx, torch.randn(*idx.shape, generator=g)

    return make


add("scatter_src_dim1", lambda: Fn(lambda x, i, s: torch.scatter(x, 1, i, s)), scatter_in(True), "f32, i64 idx")
add("scatter_src_dim0", lambda: Fn(lambda x, i, s: torch.scatter(x, 0, i, s)), scatter_in(True, 0), "f32, i64 idx")
add("scatter_value_dim1", lambda: Fn(lambda x, i, s: torch.scatter(x, 1, i, 2.5)), scatter_in(True), "f32, i64 idx")
add(
    "scatter_add_dim1_dups",
    lambda: Fn(lambda x, i, s: torch.scatter_add(x, 1, i, s)),
    scatter_in(False),
    "f32, i64 idx",
)
add(
    "scatter_add_dim0_dups",
    lambda: Fn(lambda x, i, s: torch.scatter_add(x, 0, i, s)),
    scatter_in(False, 0),
    "f32, i64 idx",
)
for reduce in ("sum", "prod", "amax", "amin", "mean"):
    for include_self in (True, False):
        add(
            f"scatter_reduce_{reduce}_self{int(include_self)}",
            lambda reduce=reduce, include_self=include_self: Fn(
                lambda x, i, s: torch.scatter_reduce(x, 1, i, s, reduce, include_self=include_self)
            ),
            scatter_in(False),
            "f32, i64 idx",
        )


def int_scatter_in(g):
    x, idx, s = scatter_in(False)(g)
    return (x * 10).to(torch.int32), idx, (s * 10).to(torch.int32)


add(
    "scatter_reduce_mean_i32",
    lambda: Fn(lambda x, i, s: torch.scatter_reduce(x, 1, i, s, "mean")),
    int_scatter_in,
    "i32, i64 idx",
)
add("scatter_add_i32", lambda: Fn(lambda x, i, s: torch.scatter_add(x, 1, i, s)), int_scatter_in, "i32, i64 idx")


def mask_in(g):
    x = torch.randn(*X_SHAPE, generator=g)
    return x, torch.rand(*X_SHAPE, generator=g) > 0.5


add("masked_fill_scalar", lambda: Fn(lambda x, m: x.masked_fill(m, -1.5)), mask_in, "f32, bool")
add("masked_fill_neg_inf", lambda: Fn(lambda x, m: x.masked_fill(m, float("-inf"))), mask_in, "f32, bool")
add("masked_fill_broadcast_mask", lambda: Fn(lambda x, m: x.masked_fill(m[:1], 3.0)), mask_in, "f32, bool")
add("masked_fill_i64", lambda: Fn(lambda x, m: (x * 10).long().masked_fill(m, 7)), mask_in, "i64, bool")
add("where_tensor", lambda: Fn(lambda x, m: torch.where(m, x, -x)), mask_in, "f32, bool")
add("where_scalar", lambda: Fn(lambda x, m: torch.where(m, x, 0.0)), mask_in, "f32, bool")
add("where_cond_from_compare", lambda: Fn(lambda x, m: torch.where(x > 0, x, x * 0.1)), mask_in, "f32")
add("where_broadcast", lambda: Fn(lambda x, m: torch.where(m[:, :1], x, x[:1])), mask_in, "f32, bool")

# --------------------------------------------------------------------------- cumulative
section("cumulative")
CUM_SHAPE = (4, 6)


def cum_float(g):
    return (torch.randn(*CUM_SHAPE, generator=g),)


def cum_prod_float(g):
    return (torch.rand(*CUM_SHAPE, generator=g) + 0.5,)


# cumsum is core ATen; cumprod, cummax, cummin and logcumsumexp are not, and lower with the
# default EdgeCompileConfig because the partitioner writes them in core ATen ops.
for dim in (0, -1):
    add(f"cumsum_f32_dim{dim}", lambda dim=dim: Fn(lambda x: torch.cumsum(x, dim)), cum_float)
    add(
        f"cumprod_f32_dim{dim}",
        lambda dim=dim: Fn(lambda x: torch.cumprod(x, dim)),
        cum_prod_float,
    )
    add(
        f"cummax_f32_dim{dim}",
        lambda dim=dim: Fn(lambda x: tuple(torch.cummax(x, dim))),
        cum_float,
    )
    add(
        f"cummin_f32_dim{dim}",
        lambda dim=dim: Fn(lambda x: tuple(torch.cummin(x, dim))),
        cum_float,
    )
    add(
        f"logcumsumexp_f32_dim{dim}",
        lambda dim=dim: Fn(lambda x: torch.logcumsumexp(x, dim)),
        cum_float,
    )
for dtype, short in ((torch.int32, "i32"), (torch.int64, "i64")):
    add(
        f"cumsum_{short}_dim1",
        lambda: Fn(lambda x: torch.cumsum(x, 1)),
        lambda g, dtype=dtype: (torch.randint(-50, 50, CUM_SHAPE, generator=g, dtype=dtype),),
        short,
    )
    add(
        f"cumsum_{short}_to_same_dtype",
        lambda dtype=dtype: Fn(lambda x: torch.cumsum(x, 1, dtype=dtype)),
        lambda g, dtype=dtype: (torch.randint(-50, 50, CUM_SHAPE, generator=g, dtype=dtype),),
        short,
    )
    add(
        f"cumprod_{short}_dim1",
        lambda: Fn(lambda x: torch.cumprod(x, 1)),
        lambda g, dtype=dtype: (torch.randint(-3, 4, CUM_SHAPE, generator=g, dtype=dtype),),
        short,
    )
    add(
        f"cummax_{short}_dim1",
        lambda: Fn(lambda x: tuple(torch.cummax(x, 1))),
        lambda g, dtype=dtype: (distinct_ints(CUM_SHAPE, dtype, g),),
        short,
    )
    add(
        f"cummin_{short}_dim0",
        lambda: Fn(lambda x: tuple(torch.cummin(x, 0))),
        lambda g, dtype=dtype: (distinct_ints(CUM_SHAPE, dtype, g),),
        short,
    )
add(
    "cumsum_bool_dim1",
    lambda: Fn(lambda x: torch.cumsum(x, 1)),
    lambda g: (torch.rand(*CUM_SHAPE, generator=g) > 0.5,),
    "bool",
)
add("cumsum_f32_to_f64_out", lambda: Fn(lambda x: torch.cumsum(x, 1, dtype=torch.float64)), cum_float)
add(
    "cumsum_i32_to_f32",
    lambda: Fn(lambda x: torch.cumsum(x, 1, dtype=torch.float32)),
    lambda g: (torch.randint(-50, 50, CUM_SHAPE, generator=g, dtype=torch.int32),),
    "i32",
)

# --------------------------------------------------------------------------- F.pad
section("pad")
PAD_IN = {1: (1, 2, 7), 2: (1, 2, 5, 6), 3: (1, 2, 4, 5, 6)}
PADS = {1: [(1, 2)], 2: [(1, 2, 2, 1)], 3: [(1, 2, 0, 1, 2, 1)]}
for d in (1, 2, 3):
    for mode in ("constant", "reflect", "replicate", "circular"):
        for pad in PADS[d]:
            kwargs = {"value": 0.5} if mode == "constant" else {}
            add(
                f"pad{d}d_{mode}",
                lambda mode=mode, pad=pad, kwargs=kwargs: Fn(lambda x: F.pad(x, pad, mode=mode, **kwargs)),
                randn(*PAD_IN[d]),
            )
add("pad2d_constant_negative_crop", lambda: Fn(lambda x: F.pad(x, (-1, 2, 1, -2))), randn(*PAD_IN[2]))
add("pad1d_reflect_pad3", lambda: Fn(lambda x: F.pad(x, (3, 3), mode="reflect")), randn(*PAD_IN[1]))
add("pad2d_circular_negative", lambda: Fn(lambda x: F.pad(x, (-1, 2, 1, 0), mode="circular")), randn(*PAD_IN[2]))
add(
    "pad1d_constant_i64",
    lambda: Fn(lambda x: F.pad(x, (2, 1), value=-3)),
    lambda g: (torch.randint(-9, 9, PAD_IN[1], generator=g),),
    "i64",
)
add("pad1d_reflect_2d_input_unbatched", lambda: Fn(lambda x: F.pad(x, (2, 2), mode="reflect")), randn(3, 7))

# --------------------------------------------------------------------------- issue 40 (second half): ops no kernel ran
# fmax, fmin, addmv, nn.Bilinear and scans with ties lower with the default EdgeCompileConfig
# (pre_decomposition/ops_without_kernels/); trunc and 32/64-bit integer division run in OpenVINO (translators/trunc.py,
# rewrites/exact_integer_division.py). NaN, -0.0 and a zero divisor: tests/ops/test_ops_without_kernels.py.
section("ops_without_kernels")


def two_randn(*shape: int):
    return lambda g: (torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


def small_ints(shape: Tuple[int, ...], dtype: torch.dtype, low: int = -3, high: int = 4):
    """Few distinct values: ties everywhere."""
    return lambda g: (torch.randint(low, high, shape, generator=g, dtype=dtype),)


def wide_int_pair(dtype: torch.dtype):
    """Dividends over all of int32 and divisors small and large, none zero: past float32's 2**24."""

    def make(g):
        dividend = torch.randint(-(2**31) + 1, 2**31 - 1, (64,), generator=g, dtype=torch.int64)
        small = torch.randint(1, 50, (64,), generator=g) * (torch.randint(0, 2, (64,), generator=g) * 2 - 1)
        large = torch.randint(2**20, 2**31 - 1, (64,), generator=g, dtype=torch.int64)
        divisor = torch.where(torch.arange(64) % 2 == 0, small, large)
        return dividend.to(dtype), divisor.to(dtype)

    return make


for decimals in (0, 1, 3):
    add(f"round_decimals_{decimals}", lambda d=decimals: Fn(lambda x: torch.round(x * 10, decimals=d)), randn(4, 6))
add(
    "round_decimals_minus_1",
    lambda: Fn(lambda x: torch.round(x * 100, decimals=-1)),
    randn(4, 6),
    non_core_aten=(torch.ops.aten.round.decimals,),
)
add("fmax_f32", lambda: Fn(torch.fmax), two_randn(3, 5))
add("fmin_f32_broadcast", lambda: Fn(lambda a, b: torch.fmin(a, b[:1])), two_randn(3, 5))
add("fmax_i32_ints_mixed_with_f32", lambda: Fn(lambda a, b: torch.fmax((a * 4).int(), b)), two_randn(3, 5))
add(
    "fmin_i64_past_2_24",
    lambda: Fn(lambda a, b: torch.fmin(a, b)),
    lambda g: tuple(torch.randint(-(2**31), 2**31, (2, 8), generator=g) for _ in range(2)),
    "i64",
)
MV = (5, 4)


def add_mv_in(g):
    return torch.randn(MV[0], generator=g), torch.randn(*MV, generator=g), torch.randn(MV[1], generator=g)


add("addmv_default", lambda: Fn(torch.addmv), add_mv_in)
add("addmv_beta_alpha", lambda: Fn(lambda i, m, v: torch.addmv(i, m, v, beta=0.5, alpha=-2.0)), add_mv_in)
add("addmv_beta0", lambda: Fn(lambda i, m, v: torch.addmv(i, m, v, beta=0)), add_mv_in)
add("addmv_alpha0_broadcast_input", lambda: Fn(lambda i, m, v: torch.addmv(i[:1], m, v, alpha=0)), add_mv_in)
add(
    "addmv_i32",
    lambda: Fn(lambda i, m, v: torch.addmv(i, m, v, beta=2, alpha=3)),
    lambda g: tuple((t * 1000).to(torch.int32) for t in add_mv_in(g)),
    "i32",
)
add(
    "bilinear_layer",
    lambda: nn.Bilinear(3, 4, 5),
    lambda g: (torch.randn(2, 3, generator=g), torch.randn(2, 4, generator=g)),
)
add(
    "bilinear_layer_3d_no_bias",
    lambda: nn.Bilinear(3, 4, 2, bias=False),
    lambda g: (torch.randn(2, 6, 3, generator=g), torch.randn(2, 6, 4, generator=g)),
)
add("cummax_i32_ties", lambda: Fn(lambda x: tuple(torch.cummax(x, 1))), small_ints(CUM_SHAPE, torch.int32), "i32")
add("cummin_i64_ties_dim0", lambda: Fn(lambda x: tuple(torch.cummin(x, 0))), small_ints(CUM_SHAPE, torch.int64), "i64")
add(
    "cummax_f32_ties_long",
    lambda: Fn(lambda x: tuple(torch.cummax(x, -1))),
    lambda g: (torch.randint(-4, 4, (2, 300), generator=g).float() / 2,),
)
add(
    "cumprod_f32_long",
    lambda: Fn(lambda x: torch.cumprod(x, 0)),
    lambda g: (torch.rand(300, 2, generator=g) * 0.2 + 0.9,),
)
add("cumprod_i8_to_i64", lambda: Fn(lambda x: torch.cumprod(x, 1)), small_ints(CUM_SHAPE, torch.int8), "i8")
add("logcumsumexp_f32_wide_range", lambda: Fn(lambda x: torch.logcumsumexp(x * 40, 1)), cum_float)
add("trunc_f32", lambda: Fn(lambda x: torch.trunc(x * 4)), randn(3, 5))
add("trunc_f32_mid_graph", lambda: Fn(lambda x: torch.trunc(x.exp() * 3) - 1), randn(3, 5))
for dtype, short in ((torch.int32, "i32"), (torch.int64, "i64")):
    for mode in ("trunc", "floor"):
        add(
            f"div_{mode}_{short}_past_2_24",
            lambda mode=mode: Fn(lambda a, b: torch.div(a, b, rounding_mode=mode)),
            wide_int_pair(dtype),
            short,
        )
add("floor_divide_i32_scalar", lambda: Fn(lambda a, b: a // 7), wide_int_pair(torch.int32), "i32")
add(
    "linalg_matrix_norm_ord2",
    lambda: Fn(lambda x: torch.linalg.matrix_norm(x, ord=2)),
    randn(3, 3),
    non_core_aten=(aten._linalg_svd.default,),
)


# --------------------------------------------------------------------------- sorting, selection and set ops
# Issue 40: each lowers with the default EdgeCompileConfig (no non_core_aten) and runs in
# the delegate. Inputs hold ties, NaN, infinities and -0.0; rows along a reduced dim
# stay within 16 elements where eager's index comes from std::sort's insertion sort.
section("sort_family")


def ties(*shape: int, dtype: torch.dtype = torch.float32, nan: float = 0.0):
    """Values in -2..2 (many ties); floats also get infinities, -0.0 and NaN at rate `nan`."""

    def make(g: torch.Generator) -> torch.Tensor:
        values = torch.randint(-2, 3, shape, generator=g).to(dtype)
        if dtype.is_floating_point:
            values[torch.rand(shape, generator=g) < 0.1] = float("inf")
            values[values == 0] = torch.where(torch.rand(shape, generator=g) < 0.5, -0.0, 0.0).to(dtype)[values == 0]
            values[torch.rand(shape, generator=g) < nan] = float("nan")
        return values

    return make


def bits(*shape: int):
    """int32 zeros and ones: rows repeat, next to each other too."""
    return lambda g: torch.randint(0, 2, shape, generator=g, dtype=torch.int32)


def inputs_of(*makers):
    return lambda g: tuple(make(g) for make in makers)


def all_nan_row(make):
    """`make`'s tensor with its first row NaN only."""

    def with_row(g: torch.Generator) -> torch.Tensor:
        values = make(g)
        values[0] = float("nan")
        return values

    return with_row


def sorted_boundaries(count: int, dtype: torch.dtype = torch.float32):
    """`count` values in ascending order, ties included (halves for floats)."""

    def make(g: torch.Generator) -> torch.Tensor:
        values = torch.randint(-4, 5, (count,), generator=g).to(dtype)
        return (values / 2 if dtype.is_floating_point else values).sort().values

    return make


# (bins, min, max) of the histc case; on their bins' edges a float32 division
# rounding an ulp off (OpenVINO's, seen on 2026.4.1) puts values in the wrong bin.
HISTC_RANGES = ((3, 0.0, 1.0), (6, 0.1, 0.7), (7, -1.0, 2.0), (97, -3.7, 12.25))


def on_bin_edges(g: torch.Generator) -> torch.Tensor:
    """Each range's bin edges and the float32 values either side of them (eager's float32
    formula puts some edges in the bin below), values outside the ranges, NaN, random ones."""
    edges = torch.cat([torch.linspace(low, high, bins + 1) for bins, low, high in HISTC_RANGES])
    neighbours = [torch.nextafter(edges, torch.tensor(direction)) for direction in (-1e9, 1e9)]
    extra = torch.tensor([-0.0, -5.0, 20.0, float("nan")])
    values = torch.cat([edges, *neighbours, extra, torch.rand(12, generator=g) * 16 - 4])
    return values[torch.randperm(len(values), generator=g)]


F_NAN = ties(6, 7, nan=0.15)
for name, fn, make in (
    ("sort_stable_f32_nan_dim1", lambda x: tuple(torch.sort(x, stable=True)), F_NAN),
    ("sort_stable_f32_nan_desc_dim0", lambda x: tuple(torch.sort(x, dim=0, descending=True, stable=True)), F_NAN),
    ("sort_stable_i32_indices_only", lambda x: torch.sort(x, stable=True)[1], ties(5, 9, dtype=torch.int32)),
    (
        "argsort_stable_i64_desc",
        lambda x: torch.argsort(x, dim=0, descending=True, stable=True),
        ties(9, 4, dtype=torch.int64),
    ),
    ("argsort_stable_f32_nan_40", lambda x: torch.argsort(x, stable=True), ties(3, 40, nan=0.15)),
    # Past 32767 elements the stable order comes from a radix sort of the ranks (ordering.py).
    ("argsort_stable_f32_nan_33000", lambda x: torch.argsort(x, stable=True), ties(33000, nan=0.15)),
    # Past 16 elements sort without stable=True takes equal values in any order: its values.
    ("sort_f32_nan_values_40", lambda x: torch.sort(x, descending=True).values, ties(3, 40, nan=0.15)),
    ("sort_f32_nan_dim1", lambda x: tuple(torch.sort(x, descending=True)), F_NAN),
    ("argsort_f32_nan_dim0", lambda x: torch.argsort(x, dim=0), F_NAN),
    ("median_f32_nan", torch.median, F_NAN),
    ("median_f32_nan_dim1_keepdim", lambda x: tuple(torch.median(x, 1, keepdim=True)), F_NAN),
    ("median_i64_dim0", lambda x: tuple(torch.median(x, 0)), ties(8, 5, dtype=torch.int64)),
    ("nanmedian_f32_nan", torch.nanmedian, F_NAN),
    ("nanmedian_f32_dim1_nan_row", lambda x: tuple(torch.nanmedian(x, 1)), all_nan_row(F_NAN)),
    ("kthvalue_f32_nan_values", lambda x: torch.kthvalue(x, 3, 1).values, F_NAN),
    ("kthvalue_i32_values_dim0_keepdim", lambda x: torch.kthvalue(x, 2, 0, True).values, ties(5, 9, dtype=torch.int32)),
    ("mode_i64_dim1", lambda x: tuple(torch.mode(x, 1)), ties(5, 9, dtype=torch.int64)),
    ("mode_f32_nan_dim0", lambda x: tuple(torch.mode(x, 0)), F_NAN),
    ("mode_i32_values_30", lambda x: torch.mode(x).values, ties(4, 30, dtype=torch.int32)),
    (
        "unique_f32_nan_inverse_counts",
        lambda x: tuple(torch.unique(x, return_inverse=True, return_counts=True)),
        ties(3, 5, nan=0.15),
    ),
    ("unique_i64_counts_40", lambda x: tuple(torch.unique(x, return_counts=True)), ties(40, dtype=torch.int64)),
    ("unique_bool_inverse", lambda x: tuple(torch.unique(x > 0, return_inverse=True)), ties(3, 4)),
    (
        "unique_dim0_i32",
        lambda x: tuple(torch.unique(x, dim=0, return_inverse=True, return_counts=True)),
        bits(9, 3),
    ),
    (
        "unique_consecutive_f32_nan",
        lambda x: tuple(torch.unique_consecutive(x, return_inverse=True, return_counts=True)),
        ties(20, nan=0.15),
    ),
    (
        "unique_consecutive_i32_dim0",
        lambda x: tuple(torch.unique_consecutive(x, return_counts=True, dim=0)),
        bits(9, 2),
    ),
    ("sort_stable_bf16_nan", lambda x: tuple(torch.sort(x, stable=True)), ties(4, 6, dtype=torch.bfloat16, nan=0.2)),
    ("argsort_stable_u8_desc", lambda x: torch.argsort(x, descending=True, stable=True), ties(3, 8, dtype=torch.uint8)),
    # topk's values with ties and NaN; its indices where no two values tie (eager's order
    # among ties is std::partial_sort's own).
    ("topk_f32_nan_largest_values", lambda x: torch.topk(x, 3).values, ties(5, 4, nan=0.3)),
    ("topk_f32_distinct", lambda x: tuple(torch.topk(x, 3)), lambda g: distinct_ints((5, 7), torch.float32, g)),
    ("topk_f32_nan_smallest_dim0", lambda x: torch.topk(x, 2, dim=0, largest=False).values, ties(5, 4, nan=0.3)),
    # Empty-ish inputs: an empty dim, a dim of one, one NaN alone, one bin.
    ("sort_stable_f32_empty_dim", lambda x: tuple(torch.sort(x, stable=True)), ties(3, 0)),
    ("median_f32_dim_of_one", lambda x: tuple(torch.median(x, 1)), ties(4, 1, nan=0.3)),
    (
        "unique_f32_one_nan",
        lambda x: tuple(torch.unique(x, return_inverse=True, return_counts=True)),
        lambda g: torch.tensor([float("nan")]),
    ),
    ("histc_f32_one_bin", lambda x: torch.histc(x, 1, -1, 1), ties(9, nan=0.2)),
    (
        "histc_f32_on_bin_edges",
        lambda x: tuple(torch.histc(x, *bins_range) for bins_range in HISTC_RANGES),
        on_bin_edges,
    ),
):
    add(name, lambda fn=fn: Fn(fn), inputs_of(make))
for name, fn, makers in (
    ("bucketize_f32_nan", lambda x, b: torch.bucketize(x, b), (ties(12, nan=0.2), sorted_boundaries(7))),
    (
        "bucketize_i32_in_f32_right_int32",
        lambda x, b: torch.bucketize(x, b, right=True, out_int32=True),
        (ties(12, dtype=torch.int32), sorted_boundaries(6)),
    ),
    ("bucketize_scalar", lambda b: torch.bucketize(0.5, b), (sorted_boundaries(5),)),
    (
        "searchsorted_side_right_sorter",
        lambda s, x: torch.searchsorted(s, x, side="right", sorter=s.argsort()),
        (ties(9, nan=0.2), ties(12, nan=0.2)),
    ),
    ("searchsorted_rows", lambda s, x: torch.searchsorted(s.sort().values, x), (ties(3, 6), ties(3, 4, nan=0.2))),
    ("searchsorted_one_boundary", lambda s, x: torch.searchsorted(s, x, right=True), (ties(1), ties(6, nan=0.2))),
    (
        "searchsorted_scalar_int32",
        lambda s: torch.searchsorted(s, 1, right=True, out_int32=True),
        (sorted_boundaries(8, torch.int64),),
    ),
):
    add(name, lambda fn=fn: Fn(fn), inputs_of(*makers))

CASE_BY_NAME = {case.name: case for case in CASES}
assert len(CASE_BY_NAME) == len(CASES), "case names must be unique"


# --------------------------------------------------------------------------- cases that run nowhere
class RunsNowhere(NamedTuple):
    op: str  # the op the case is about, as ExecuTorch's CPU operator table names it
    reason: str


def _no_kernel(op: str) -> str:
    return f"and ExecuTorch's portable kernels have no {op} either"


# Cases that lower (the partitioner leaves their op on the CPU) but cannot load:
# Program.load_method fails with 0x14 (OperatorMissing), and lowering warns about it
# (partition/missing_kernels.py). ops/test_op_variant_sweep.py checks that each op stays on the CPU.
# Only ops with no exact OpenVINO form are left here.
RUNS_NOWHERE: Dict[str, RunsNowhere] = {
    # matrix_norm of order 2 is the largest singular value, which needs an iterative
    # decomposition OpenVINO has no op for (ord="nuc", their sum, likewise).
    "linalg_matrix_norm_ord2": RunsNowhere(
        "aten::_linalg_svd",
        "singular values have no exact OpenVINO form (no SVD op, and no closed form past 2x2), "
        + _no_kernel("_linalg_svd"),
    ),
    # Eager rounds the quotient x / 10: OpenVINO's CPU plugin divides through a
    # reciprocal, up to an ulp off, which moves a tie by ten (pre_decomposition/ops_without_kernels/rounding.py).
    "round_decimals_minus_1": RunsNowhere(
        "aten::round",
        "rounding to tens rounds a quotient that OpenVINO's division may put an ulp off, "
        + _no_kernel("round.decimals"),
    ),
}
assert set(RUNS_NOWHERE) <= set(CASE_BY_NAME), "RUNS_NOWHERE names a case that does not exist"
