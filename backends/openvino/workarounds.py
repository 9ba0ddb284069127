"""Every OpenVINO behaviour the delegate works around, and the code that does it.

Each entry of ``WORKAROUNDS`` says what OpenVINO does wrong, the OpenVINO release it
was seen on, the upstream issue that reports it where one was found, and the fixes:
graph passes (passes/), model rewrites (conversion/rewrites/), translations of our
own (conversion/translators/) and partitioner rules (partition/), as names under the
package. Each fix names its entry in turn, with ``@works_around("id")``; code in those
lists that works around nothing says so with ``@not_a_workaround("why")``.
tests/workarounds/test_workaround_registry.py checks both directions.

tests/workarounds/test_openvino_bugs.py has one test per entry, ``test_<id>``, that runs OpenVINO
alone on the smallest case and passes while OpenVINO still computes it wrong. When a
release computes it right, that test fails: the entry and its fixes can go (keep the
end-to-end tests, which show that eager's values still come out).

This module imports nothing from the package, so that any module can import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple, TypeVar

#: The OpenVINO release every entry below was seen on, unless it says otherwise.
SEEN_ON = "2026.4.1"

_ISSUES = "https://github.com/openvinotoolkit/openvino/issues/"


@dataclass(frozen=True)
class Workaround:
    """One OpenVINO behaviour the delegate works around."""

    #: Short name, also the name of its OpenVINO-alone test: test_<id>.
    id: str
    #: "CPU plugin", "PyTorch frontend" or "FX decoder": the part of OpenVINO at fault.
    component: str
    #: What OpenVINO does, on the smallest case found.
    what_openvino_does: str
    #: Where the fix lives: dotted names under the package (executorch_openvino), or
    #: "runtime/<file>:<function>" for the C++ runtime, whose comment names the entry.
    fixes: Tuple[str, ...]
    #: The OpenVINO release it was seen on.
    seen_on: str = SEEN_ON
    #: The upstream issue that reports this behaviour, or None if none was found.
    upstream_issue: Optional[str] = None
    #: The CPUs it shows on, where some CPUs compute it right; None: every CPU tried.
    only_on: Optional[str] = None


_ENTRIES = (
    Workaround(
        "integer_floor_division",
        "CPU plugin",
        "ignores Divide's pythondiv on signed integers and truncates: -7 // 8 gives 0, not -1. "
        "(The PyTorch frontend marks integer truncating division pythondiv too, and relies on this.)",
        ("conversion.rewrites.integer_floor_division.floor_integer_divisions",),
        upstream_issue=_ISSUES + "38248",
    ),
    Workaround(
        "integer_floor_in_float32",
        "CPU plugin",
        "computes a Floor of int32 in float32: floor(851235684) gives 851235712",
        ("conversion.rewrites.integer_floor_division.floor_integer_divisions",),
    ),
    Workaround(
        "float_division_one_ulp_off",
        "CPU plugin",
        "divides floats through a reciprocal, up to 1 ulp from the correctly rounded quotient: 84 / 7 gives "
        "12.000001, so a floor or truncation of an exact quotient comes out one off",
        (
            "passes.exact_float_rounded_division.exact_float_rounded_division",
            "conversion.translators.histc.translate_histc",
            "partition.sort_family._histc_refusal",
        ),
    ),
    Workaround(
        "float_truncation_through_int32",
        "PyTorch frontend",
        "truncates a float division by converting the quotient to int32 and back: trunc(1e10 / 1) gives -2**31",
        ("passes.exact_float_rounded_division.exact_float_rounded_division",),
    ),
    Workaround(
        "integer_sum_in_float32",
        "CPU plugin",
        "computes ReduceSum of int32 in float32: the sum of [100000001, 3] gives 100000000",
        ("passes.exact_integer_sum.exact_integer_sum",),
    ),
    Workaround(
        "constant_integer_cumsum",
        "CPU plugin",
        "lets the Add after an int64 CumSum of a Constant write into the CumSum's stored result: "
        "cumsum([1, 1, 0, 1]) + k over calls k = 0, 1, 2, 3 gave cumsum + 0, 1, 3, 6",
        ("passes.fold_miscomputed_constants.fold_miscomputed_constants",),
    ),
    Workaround(
        "constant_abs_dropped",
        "CPU plugin",
        "drops an Abs whose input is computed from constants only: Abs(Range(-1, 3)) gives [-1, 0, 1, 2]",
        ("passes.fold_miscomputed_constants.fold_miscomputed_constants",),
        upstream_issue=_ISSUES + "38166",
    ),
    Workaround(
        "reduction_in_input_type",
        "PyTorch frontend",
        "computes cumsum (and prod) of bool or integer values in the input's type, where PyTorch computes "
        "in int64: the cumsum of 300 True values does not end at 300",
        ("passes.cast_reduction_input.cast_reduction_input",),
    ),
    Workaround(
        "avg_pool_divisor_override_refused",
        "PyTorch frontend",
        "refuses avg_pool2d/3d with a divisor_override",
        (
            "passes.rewrite_avg_pool_divisor_override.rewrite_avg_pool_divisor_override",
            "passes.exact_ceil_mode_avg_pool.exact_ceil_mode_avg_pool",
        ),
    ),
    Workaround(
        "getitem_of_own_translation",
        "FX decoder",
        "reads getitem(node, k) of a node converted by a ConversionExtension from Python as element k of "
        "its first output, not as its output k",
        (
            "passes.single_output_embedding_bag.single_output_embedding_bag",
            "partition.argument_rules._embedding_bag_refusal",
            "conversion.translated_nodes.MultiResultDecoder",
        ),
    ),
    Workaround(
        "keyword_argument_of_own_translation",
        "FX decoder",
        "hands a ConversionExtension from Python only a node's positional arguments: "
        "scatter_reduce(x, 0, i, s, 'sum', include_self=False) has 5 inputs, so include_self reads as its default",
        ("conversion.translated_nodes.positional_arguments",),
    ),
    Workaround(
        "var_default_correction",
        "PyTorch frontend",
        "reads aten.var.correction without a correction as 0 (divides by N), where PyTorch reads 1",
        ("passes.explicit_var_correction.explicit_var_correction",),
    ),
    Workaround(
        "reduction_over_no_dims",
        "PyTorch frontend",
        "reads aten.mean.dim and aten.var.correction with dim [] as a reduction over no dimension, where PyTorch "
        "reduces over every dimension: x - x.mean(dim=[], keepdim=True) gives zeros (dim None does not convert)",
        ("passes.explicit_reduction_dims.explicit_reduction_dims",),
    ),
    Workaround(
        "squeeze_of_no_dims",
        "PyTorch frontend",
        "makes aten.squeeze_copy.dims with dims [] a Squeeze without axes, which removes every dimension of size 1 "
        "(PyTorch removes none): a [2, 1, 3] tensor becomes [2, 3]",
        ("passes.drop_empty_squeezes.drop_empty_squeezes",),
    ),
    Workaround(
        "sixteen_bit_accumulation",
        "CPU plugin",
        "accumulates a bfloat16 CumSum (and var) in bfloat16 on a CPU with bf16 units, even at f32 "
        "inference precision: the cumsum of 4096 ones ends at 256",
        ("passes.accumulate_16_bit_floats_in_float32.accumulate_16_bit_floats_in_float32",),
    ),
    Workaround(
        "arange_in_start_type",
        "PyTorch frontend",
        "casts arange without a dtype to the type of its start: arange(0, 1, 0.25) gives zeros",
        ("passes.explicit_arange_dtype.explicit_arange_dtype",),
    ),
    Workaround(
        "negative_index_in_multi_index",
        "PyTorch frontend",
        "flattens x[i, j] without wrapping a negative j first: x[0, -1] of a 5 x 6 tensor reads x[4, 5]",
        ("passes.wrap_negative_indices.wrap_negative_indices", "partition.argument_rules._index_refusal"),
    ),
    Workaround(
        "index_put_values_of_lower_rank",
        "PyTorch frontend",
        "refuses index_put whose values have fewer dimensions than the slots they fill",
        ("passes.full_rank_index_put_values.full_rank_index_put_values",),
    ),
    Workaround(
        "lone_dequantize_dropped",
        "PyTorch frontend",
        "drops a dequantize with no quantize before it, so the layer reads the raw integers and the conversion fails",
        ("passes.expand_lone_dequantize.expand_lone_dequantize",),
    ),
    Workaround(
        "log1p_as_log_of_sum",
        "PyTorch frontend",
        "converts log1p(x) as log(1 + x): log1p(1e-9) gives 0",
        ("passes.accurate_log1p.accurate_log1p",),
    ),
    Workaround(
        "zero_dim_matmul_result_crash",
        "CPU plugin",
        "crashes the process (SIGSEGV) in compile_model on a MatMul reshaped to shape []",
        ("passes.zero_dim_view_as_squeeze.zero_dim_view_as_squeeze",),
    ),
    Workaround(
        "returned_input_not_copied",
        "CPU plugin",
        "leaves the output of a Parameter that feeds a Result unwritten when the output tensor is set "
        "after the input tensor",
        (
            "conversion.rewrites.outputs.separate_returned_inputs",
            "partition.copy_placement.CopyPlacement.input_copies_to_move_out",
        ),
    ),
    Workaround(
        "weight_read_both_ways",
        "CPU plugin",
        "computes (x @ w.T) @ w as (x @ w.T) @ w.T when both MatMuls read one constant",
        ("conversion.rewrites.weights_read_both_ways.separate_weights_read_both_ways",),
    ),
    Workaround(
        "scatter_index_below_range",
        "CPU plugin",
        "writes outside its tensor, with no error, for a ScatterElementsUpdate index below -size",
        ("conversion.rewrites.scatter_indices_below_range.refuse_scatter_indices_below_range",),
    ),
    Workaround(
        "greater_with_nan",
        "CPU plugin",
        "answers Greater and GreaterEqual with True where either side is NaN",
        ("conversion.rewrites.greater_as_less.compare_greater_as_less",),
        upstream_issue=_ISSUES + "31196",
        only_on="CPUs with AVX-512 (seen on an Intel Xeon with AMX; an AVX2-only AMD EPYC compares NaN right)",
    ),
    Workaround(
        "integer_comparison_in_float32",
        "CPU plugin",
        "compares int32 and int64 in float32: 16777217 == 16777216 gives True",
        ("conversion.rewrites.exact_integer_comparisons.compare_integers_exactly",),
    ),
    Workaround(
        "bool_cast_of_int_min_and_nan",
        "CPU plugin",
        "converts an int32 -2**31 and a float NaN to boolean False",
        ("conversion.rewrites.bool_casts.cast_to_bool_as_not_equal",),
        upstream_issue=_ISSUES + "35932",
    ),
    Workaround(
        "integer_select_in_float32",
        "CPU plugin",
        "computes an int32/int64 Select fused with the comparison it reads in float32: where(x != 0, a, b) "
        "gives -2**31 for 2**31 - 1 and -18084880 for -18084881",
        ("conversion.rewrites.model_edits.select_integers", "pre_decomposition.ops_without_kernels.scans.choose"),
    ),
    Workaround(
        "scatter_extremes_drop_nan",
        "CPU plugin",
        "drops a NaN source in ScatterElementsUpdate-12's max and min reductions: max(2, NaN) gives 2",
        ("conversion.translators.scatter_reduce.translate_scatter_reduce",),
    ),
    Workaround(
        "scatter_integer_mean_truncates",
        "CPU plugin",
        "rounds ScatterElementsUpdate-12's integer mean toward zero: the mean of -5 and -6 gives -5, "
        "where PyTorch's scatter_reduce floors to -6",
        ("conversion.translators.scatter_reduce.translate_scatter_reduce",),
    ),
    Workaround(
        "integer_to_bfloat16_truncates",
        "CPU plugin",
        "converts int32 to bfloat16 by dropping the low bits: 158500 gives 157696, not 158720",
        ("conversion.rewrites.integer_to_bfloat16_rounding.round_integers_to_bfloat16",),
    ),
    Workaround(
        "infinite_extremes_finite",
        "CPU plugin",
        "starts ReduceMax and MaxPool from -3.4e38, not -inf (ReduceMin from +3.4e38): the max of -inf "
        "values gives -3.4e38",
        ("conversion.rewrites.infinite_extremes.keep_infinite_extremes",),
    ),
    Workaround(
        "exp_of_nan_infinite",
        "CPU plugin",
        "computes Exp of NaN as inf (an Intel Xeon with AMX, also with the plugin held to AVX2 or SSE4.1 "
        "by ONEDNN_MAX_CPU_ISA)",
        ("conversion.rewrites.exp_of_nan.keep_nan_through_exp",),
    ),
    Workaround(
        "fully_masked_attention_nan",
        "CPU plugin",
        "gives NaN for a ScaledDotProductAttention query row whose mask hides every key; PyTorch gives zeros",
        ("conversion.rewrites.fully_masked_attention.zero_fully_masked_attention_rows",),
        upstream_issue=_ISSUES + "35959",
    ),
    Workaround(
        "interpolate_single_pixel_output",
        "PyTorch frontend",
        "converts interpolate(align_corners=False) with pytorch_half_pixel, which samples coordinate 0 "
        "where the output is one pixel long; PyTorch samples the centre",
        ("conversion.rewrites.interpolation_half_pixel.interpolate_with_half_pixel_centres",),
    ),
    Workaround(
        "embedding_bag_translation",
        "PyTorch frontend",
        "ignores EmbeddingBag's padding_idx, refuses include_last_offset and mode max, and its "
        "EmbeddingBagOffsets refuses an offset equal to the number of indices",
        ("conversion.translators.embedding_bag.translate_embedding_bag",),
    ),
    Workaround(
        "avg_pool_ceil_window_past_padding",
        "CPU plugin",
        "divides AvgPool-14's last ceil-mode window by the whole kernel with exclude_pad false, where "
        "PyTorch divides by the part within the padded input",
        ("passes.exact_ceil_mode_avg_pool.exact_ceil_mode_avg_pool", "partition.argument_rules._avg_pool_refusal"),
    ),
    Workaround(
        "narrowing_cast_skipped",
        "CPU plugin",
        "computes 16-bit floats in float32 at f32 inference precision, so a cast to float16 and back "
        "does not round: 70000 stays 70000",
        ("partition.argument_rules._rounding_cast_refusal",),
    ),
    Workaround(
        "integer_ops_in_float32",
        "CPU plugin",
        "computes integer max, min, relu, pow and division in float32: relu(2**31 - 1) gives -2**31",
        (
            "partition.argument_rules._in_float32_refusal",
            "partition.argument_rules._clamp_refusal",
            "conversion.rewrites.exact_integer_division.divide_integers_exactly",
        ),
        upstream_issue=_ISSUES + "35830",
    ),
    Workaround(
        "integer_matmul_in_float32",
        "CPU plugin",
        "computes integer MatMul in float32: [[4097, 4097]] @ [[4097], [4097]] loses 2",
        ("partition.argument_rules._integer_product_refusal",),
        upstream_issue=_ISSUES + "37956",
    ),
    Workaround(
        "clamp_bounds_in_input_type",
        "PyTorch frontend",
        "clamps an integer tensor to float bounds in the integer type: uint8 clamp_min(x, -3.5) gives 253",
        ("partition.argument_rules._clamp_refusal",),
    ),
    Workaround(
        "pad_fill_through_float32",
        "PyTorch frontend",
        "makes an integer pad's fill a float32 constant: an int32 fill of 2**31 - 1 writes -2**31",
        ("partition.argument_rules._constant_pad_refusal",),
    ),
    Workaround(
        "gather_elements_index_narrower",
        "CPU plugin",
        "refuses a GatherElements index narrower than the data in another dimension, which torch.gather "
        "allows (OpenVINO's op specification requires equal sizes)",
        ("partition.argument_rules._gather_refusal",),
    ),
    Workaround(
        "attention_enable_gqa_ignored",
        "PyTorch frontend",
        "ignores scaled_dot_product_attention's enable_gqa in a torch.export graph: keys and values with "
        "fewer heads than the queries fail (at conversion with static shapes)",
        ("partition.kept_whole.converts_whole",),
    ),
    Workaround(
        "wide_state_refused",
        "CPU plugin",
        "fails the first inference that reads an i64, f64 or i16 variable",
        ("conversion.rewrites.state.STORED_AS",),
    ),
    Workaround(
        "input_into_state_in_place",
        "CPU plugin",
        "loses a model input that ops it runs in place (a Reshape, a Concat along leading axes) or drops "
        "(x * 1, x + 0) take into an Assign: a variable written as concat(variable[1:], x) keeps stale or "
        "uninitialized rows where x belongs, and other readers of x see them too; one written as x * 1 reads "
        "the current call's x",
        ("conversion.rewrites.inputs_into_state.copy_inputs_into_state",),
    ),
    Workaround(
        "constant_into_state_dropped",
        "CPU plugin",
        "never stores a value computed from constants alone into a variable: after Assign(5) the "
        "ReadValue still gives the initial value",
        ("partition.buffer_ownership._computed_from_constants_only",),
    ),
    Workaround(
        "sixty_four_bit_in_32_bits",
        "CPU plugin",
        "computes int64 and float64 in 32 bits: an int64 constant of 2**40 comes back as 2**31 - 1",
        ("partition.copy_placement.EXACT_CONSTANT_COPY_DTYPES",),
        upstream_issue=_ISSUES + "35891",
    ),
    Workaround(
        "topk_nan_anywhere",
        "CPU plugin",
        "orders NaN in TopK as it meets it, neither largest nor smallest: the top 2 of [1, nan, 3, 2] "
        "come back [1, nan], where PyTorch's topk and sort count NaN the largest ([nan, 3])",
        (
            "conversion.translators.sort.translate_sort",
            "conversion.translators.sort.translate_sort_stable",
            "conversion.translators.sort.translate_argsort_stable",
            "conversion.translators.sort.translate_topk",
        ),
    ),
    Workaround(
        "paged_attention_f16_several_tokens",
        "CPU plugin",
        "computes PagedAttention at INFERENCE_PRECISION_HINT f16 wrong for a call of two or more tokens: NaN "
        "or logits off by their own size (one token a call is right; OpenVINO GenAI's IR too; it takes no f32 "
        "cache at f16). The runtime loads such a program with the KV cache as state (to_paged_attention in "
        "runtime/paged_attention.cpp)",
        ("preprocessing.paged_attention.refuse_several_tokens_at_f16",),
        only_on="CPUs with AVX512-FP16 (seen on an Intel Xeon with AMX)",
    ),
    Workaround(
        "model_cache_key_leaves_out_settings",
        "CPU plugin",
        "keys a cached compiled model on the model and the CPU's name only (CACHING_PROPERTIES lists "
        "FULL_DEVICE_NAME alone), while it bakes settings such as an f16 INFERENCE_PRECISION_HINT into what it "
        "caches: one CACHE_DIR shared by loads at f16 and f32 computes both in whichever precision compiled first",
        ("runtime/options.cpp:openvino_cache_dir",),
    ),
)

#: Every workaround, by id.
WORKAROUNDS: Dict[str, Workaround] = {entry.id: entry for entry in _ENTRIES}

#: The attribute @works_around and @not_a_workaround set on a fix.
WORKAROUND_ATTRIBUTE = "openvino_workarounds"
NOT_A_WORKAROUND_ATTRIBUTE = "not_an_openvino_workaround"

Fix = TypeVar("Fix", bound=Callable)


def works_around(*ids: str) -> Callable[[Fix], Fix]:
    """Marks a pass, rewrite, translation or partitioner rule as the fix of the entries `ids`.

    Raises KeyError, at import, for an id ``WORKAROUNDS`` does not have.
    """
    unknown = [workaround_id for workaround_id in ids if workaround_id not in WORKAROUNDS]
    if not ids or unknown:
        raise KeyError(f"not in workarounds.WORKAROUNDS: {unknown or 'no id given'}")

    def mark(fix: Fix) -> Fix:
        setattr(fix, WORKAROUND_ATTRIBUTE, tuple(ids))
        return fix

    return mark


def not_a_workaround(why: str) -> Callable[[Fix], Fix]:
    """Marks code in a list of passes, rewrites or rules that works around no OpenVINO behaviour."""

    def mark(fix: Fix) -> Fix:
        setattr(fix, NOT_A_WORKAROUND_ATTRIBUTE, why)
        return fix

    return mark
