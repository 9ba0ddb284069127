"""Every rewrite of a converted partition's OpenVINO model, in one ordered list.

``REWRITES`` runs in order on the model the frontend made (conversion/__init__.py):
first the rewrites that give the model the form the runtime binds (index checks,
outputs, state, the growing KV cache), then those that make OpenVINO compute what
eager PyTorch computes where OpenVINO 2026.4.1 (its CPU plugin or its PyTorch
frontend) computes an op otherwise, silently, and last those that change how a
value is computed, not what (for the CPU plugin's speed). They change the model
the blob stores, so every device, and OpenVINO alone reading our blob, computes the same.
Each takes the model and the facts about its partition, and returns the model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

import torch

import openvino as ov

from .additive_attention_masks import add_boolean_attention_masks
from .bool_casts import cast_to_bool_as_not_equal
from .exact_integer_comparisons import compare_integers_exactly
from .exact_integer_division import divide_integers_exactly
from .exp_of_nan import keep_nan_through_exp
from .fully_masked_attention import zero_fully_masked_attention_rows
from .greater_as_less import compare_greater_as_less
from .index_bounds import mark_index_inputs
from .infinite_extremes import keep_infinite_extremes
from .inputs_into_state import copy_inputs_into_state
from .integer_floor_division import floor_integer_divisions
from .integer_to_bfloat16_rounding import round_integers_to_bfloat16
from .interpolation_half_pixel import interpolate_with_half_pixel_centres
from .kv_cache_growth import grow_kv_caches
from .outputs import convert_outputs_to_torch_dtypes, restore_output_positions, separate_returned_inputs
from .per_sequence_values import keep_per_sequence_values
from .scatter_indices_below_range import refuse_scatter_indices_below_range
from .sibling_products import fuse_sibling_products
from .state import keep_buffers_as_state
from .weights_read_both_ways import separate_weights_read_both_ways


@dataclass(frozen=True)
class Partition:
    """What the rewrites read about the partition a model was converted from."""

    #: The partition's placeholders, in the order of the model's parameters.
    placeholders: List[torch.fx.Node]
    #: For each output of the partition, the index of its value among the model's results.
    output_positions: List[int]
    #: Each output's value at export (its dtype is the one the runtime binds).
    expected_outputs: List[object]
    #: Placeholder name -> value at export, for each buffer the partition writes.
    buffer_initial_values: Dict[str, torch.Tensor] = field(default_factory=dict)
    #: The placeholder each buffer write writes, in output order.
    buffer_writes: List[str] = field(default_factory=list)
    #: Whether the device may run the model on the CPU plugin (CPU, or AUTO/MULTI/HETERO/BATCH naming it).
    may_run_on_cpu: bool = True
    #: Inputs that keep their value over a sequence (the compile spec per_sequence_inputs).
    per_sequence_inputs: Tuple[str, ...] = ()


Rewrite = Callable[[ov.Model, Partition], ov.Model]

# A wrapper below takes these from the function it calls, and its __dict__: the
# workarounds.py mark that tells what the rewrite is for.
_NAMED_AFTER = ("__module__", "__name__", "__qualname__", "__doc__")


def _same_model(rewrite: Callable[[ov.Model], None]) -> Rewrite:
    """A rewrite that reads only the model and changes it in place."""

    # The name, and the workarounds.py mark, are the rewrite's.
    @functools.wraps(rewrite)
    def run(model: ov.Model, _: Partition) -> ov.Model:
        rewrite(model)
        return model

    return run


@functools.wraps(mark_index_inputs, assigned=_NAMED_AFTER)
def _mark_index_inputs(model: ov.Model, partition: Partition) -> ov.Model:
    mark_index_inputs(model.get_parameters(), partition.placeholders)
    return model


@functools.wraps(restore_output_positions, assigned=_NAMED_AFTER)
def _restore_output_positions(model: ov.Model, partition: Partition) -> ov.Model:
    return restore_output_positions(model, partition.output_positions)


@functools.wraps(convert_outputs_to_torch_dtypes, assigned=_NAMED_AFTER)
def _convert_outputs_to_torch_dtypes(model: ov.Model, partition: Partition) -> ov.Model:
    convert_outputs_to_torch_dtypes(model, partition.expected_outputs)
    return model


@functools.wraps(keep_buffers_as_state, assigned=_NAMED_AFTER)
def _keep_buffers_as_state(model: ov.Model, partition: Partition) -> ov.Model:
    names = [node.name for node in partition.placeholders]
    return keep_buffers_as_state(model, partition.buffer_initial_values, names, partition.buffer_writes)


@functools.wraps(grow_kv_caches, assigned=_NAMED_AFTER)
def _grow_kv_caches(model: ov.Model, _: Partition) -> ov.Model:
    return grow_kv_caches(model)


@functools.wraps(keep_per_sequence_values, assigned=_NAMED_AFTER)
def _keep_per_sequence_values(model: ov.Model, partition: Partition) -> ov.Model:
    keep_per_sequence_values(model, partition.per_sequence_inputs)
    return model


@functools.wraps(separate_returned_inputs, assigned=_NAMED_AFTER)
def _separate_returned_inputs(model: ov.Model, partition: Partition) -> ov.Model:
    separate_returned_inputs(model, partition.may_run_on_cpu)
    return model


@functools.wraps(fuse_sibling_products, assigned=_NAMED_AFTER)
def _fuse_sibling_products(model: ov.Model, partition: Partition) -> ov.Model:
    if partition.may_run_on_cpu:  # measured there; the GPU plugin joins such products itself
        fuse_sibling_products(model)
    return model


REWRITES: List[Rewrite] = [
    # The form the runtime binds. Index marks first: they name the parameters the
    # partition's placeholders became, before state replaces some of them.
    _mark_index_inputs,
    _restore_output_positions,
    _convert_outputs_to_torch_dtypes,
    _keep_buffers_as_state,
    _grow_kv_caches,
    # After it: needs the positions input the growing cache marks.
    _keep_per_sequence_values,
    _separate_returned_inputs,
    # Eager PyTorch's values where OpenVINO computes otherwise.
    _same_model(copy_inputs_into_state),
    _same_model(separate_weights_read_both_ways),
    # Before the integer comparisons, which make its NotEqual exact.
    _same_model(floor_integer_divisions),
    # After it: floors its truncating Divides, which this makes exact.
    _same_model(divide_integers_exactly),
    # Before the integer comparisons, which make its Less exact.
    _same_model(refuse_scatter_indices_below_range),
    # Before the integer comparisons, which handle Less and LessEqual only.
    _same_model(compare_greater_as_less),
    _same_model(compare_integers_exactly),
    # After them: its comparisons with zero are exact already.
    _same_model(cast_to_bool_as_not_equal),
    _same_model(round_integers_to_bfloat16),
    _same_model(keep_infinite_extremes),
    _same_model(keep_nan_through_exp),
    _same_model(zero_fully_masked_attention_rows),
    _same_model(interpolate_with_half_pixel_centres),
    # The same values, computed faster. After the weight copies: it joins constants. It
    # leaves alone the products _keep_per_sequence_values moved into state.
    _fuse_sibling_products,
    # After the growing KV cache's mask check and the fully masked rows' guard, which
    # read the boolean mask.
    _same_model(add_boolean_attention_masks),
]


def rewrite_model(model: ov.Model, partition: Partition) -> ov.Model:
    """Applies every rewrite of ``REWRITES`` in order; returns the rewritten model."""
    for rewrite in REWRITES:
        model = rewrite(model, partition)
    return model
