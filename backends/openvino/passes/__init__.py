"""Graph passes run on a partition before OpenVINO converts it (conversion.prepare_graph_module).

One pass per file; ``PASSES`` lists them in the order they run, then
``PAGED_ATTENTION_PASSES`` run on a partition the runtime compiles in PagedAttention
form (the compile spec ``paged_attention``), whose layout they suit and the stateful
form's they do not.
"""

from __future__ import annotations

from typing import Callable, List

import torch

from .accumulate_16_bit_floats_in_float32 import accumulate_16_bit_floats_in_float32
from .accurate_log1p import accurate_log1p
from .cast_reduction_input import cast_reduction_input
from .drop_empty_squeezes import drop_empty_squeezes
from .drop_identity_views import drop_identity_views
from .exact_ceil_mode_avg_pool import exact_ceil_mode_avg_pool
from .exact_float_rounded_division import exact_float_rounded_division
from .exact_integer_sum import exact_integer_sum
from .expand_lone_dequantize import expand_lone_dequantize
from .explicit_arange_dtype import explicit_arange_dtype
from .explicit_reduction_dims import explicit_reduction_dims
from .explicit_var_correction import explicit_var_correction
from .fold_miscomputed_constants import fold_miscomputed_constants
from .full_rank_index_put_values import full_rank_index_put_values
from .rewrite_avg_pool_divisor_override import rewrite_avg_pool_divisor_override
from .rewrite_interleaved_rope import rewrite_interleaved_rope
from .rotary_before_head_permute import rotary_before_head_permute
from .single_output_embedding_bag import single_output_embedding_bag
from .wrap_negative_indices import wrap_negative_indices
from .zero_dim_view_as_squeeze import zero_dim_view_as_squeeze

PASSES: List[Callable[[torch.fx.GraphModule], torch.fx.GraphModule]] = [
    exact_float_rounded_division,
    # Before the fold and the cast, which then treat its cumsum as any other.
    exact_integer_sum,
    # Before the cast: a folded cumsum needs none.
    fold_miscomputed_constants,
    cast_reduction_input,
    # Before it: takes the pools with a ceil-mode window past the padding, divisor_override or not.
    exact_ceil_mode_avg_pool,
    rewrite_avg_pool_divisor_override,
    single_output_embedding_bag,
    explicit_var_correction,
    explicit_reduction_dims,
    # After them: the correction and the dims are written out on the 16-bit node, then widened.
    accumulate_16_bit_floats_in_float32,
    explicit_arange_dtype,
    wrap_negative_indices,
    full_rank_index_put_values,
    expand_lone_dequantize,
    rewrite_interleaved_rope,
    accurate_log1p,
    zero_dim_view_as_squeeze,
    # After it: its squeezes list every dimension.
    drop_empty_squeezes,
    drop_identity_views,
]


PAGED_ATTENTION_PASSES: List[Callable[[torch.fx.GraphModule], torch.fx.GraphModule]] = [
    # After rewrite_interleaved_rope, whose rotations it leaves alone.
    rotary_before_head_permute,
]


def run_passes(graph_module: torch.fx.GraphModule, paged_attention: bool = False) -> torch.fx.GraphModule:
    for graph_pass in PASSES + (PAGED_ATTENTION_PASSES if paged_attention else []):
        graph_module = graph_pass(graph_module)
    return graph_module
