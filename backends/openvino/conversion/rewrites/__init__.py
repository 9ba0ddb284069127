"""Rewrites of a partition's OpenVINO model, each working around a way OpenVINO 2026.4.1
(its CPU plugin or its PyTorch frontend) computes an op unlike PyTorch, silently.

They run in ``preprocess``, after conversion, on the model the blob stores, so every
device and OpenVINO alone with our blob compute what eager PyTorch does.
"""

from __future__ import annotations

import openvino as ov

from .bool_casts import cast_to_bool_as_not_equal
from .exact_integer_comparisons import compare_integers_exactly
from .fully_masked_attention import zero_fully_masked_attention_rows
from .greater_as_less import compare_greater_as_less
from .infinite_extremes import keep_infinite_extremes
from .integer_floor_division import floor_integer_divisions
from .integer_to_bfloat16_rounding import round_integers_to_bfloat16
from .interpolation_half_pixel import interpolate_with_half_pixel_centres
from .scatter_indices_below_range import refuse_scatter_indices_below_range
from .weights_read_both_ways import separate_weights_read_both_ways


def match_pytorch_semantics(model: ov.Model) -> None:
    """Applies every rewrite to `model`, in place."""
    separate_weights_read_both_ways(model)
    floor_integer_divisions(model)
    # Before the integer comparisons, which make its Less exact.
    refuse_scatter_indices_below_range(model)
    # Before the integer comparisons, which handle Less and LessEqual only.
    compare_greater_as_less(model)
    compare_integers_exactly(model)
    # After them: its comparisons with zero are exact already.
    cast_to_bool_as_not_equal(model)
    round_integers_to_bfloat16(model)
    keep_infinite_extremes(model)
    zero_fully_masked_attention_rows(model)
    interpolate_with_half_pixel_centres(model)
