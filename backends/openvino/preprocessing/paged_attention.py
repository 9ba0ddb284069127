"""Lowering's check of the compile spec ``paged_attention`` (runtime/paged_attention.h).

The runtime rewrites the IR with OpenVINO's SDPAToPagedAttention when it loads the
program. That rewrite is tried here on a copy of the IR, so that a delegate it cannot
rewrite fails at lowering, naming why, instead of loading in the other form.
"""

from __future__ import annotations

import math
from typing import List

import openvino as ov

from ..compile_specs import OpenvinoOptions
from ..edge_graph.kv_cache_names import CACHE_POSITIONS_NAME, GROWN_CACHE_SUFFIX
from ..workarounds import works_around

# The names SDPAToPagedAttention finds the model's input by: token ids, or their
# embeddings (a vision-language model's text decoder).
_TOKENS_NAME = "input_ids"
_EMBEDDINGS_NAME = "inputs_embeds"


class PagedAttentionRefused(ValueError):
    """The compile spec paged_attention cannot apply to this delegate or model, and why:
    the export command, which turns the form on by default, catches it to export in the
    stateful form instead."""


def check_paged_attention_options(options: OpenvinoOptions) -> None:
    """Raises PagedAttentionRefused where the compile specs alone rule the form out,
    whatever the model: a device whose blocks the runtime does not lay out, or a u8 cache
    with one_token_model (prompts' stateful cache cannot move into u8 blocks)."""
    if options.device_type != "CPU":
        raise PagedAttentionRefused(f"OpenVINO paged_attention runs on CPU; device is {options.device!r}")
    if options.kv_cache_precision == "u8" and options.one_token_model:
        # Prompts keep the stateful cache and decode steps the blocks, and the runtime
        # moves the sequence between them by copying rows: a u8 cache's blocks also carry
        # the scales the CPU plugin computes over each block.
        raise PagedAttentionRefused(
            "OpenVINO paged_attention with one_token_model moves the cache between a state and blocks, which "
            "kv_cache_precision 'u8' does not allow (its blocks carry their scales): leave one_token_model out "
            "(prompts then run in PagedAttention form too) or use an f32, f16 or bf16 cache"
        )


def check_paged_attention(model: ov.Model, options: OpenvinoOptions) -> None:
    """Raises PagedAttentionRefused naming why the runtime could not keep `model`'s KV
    cache in PagedAttention form: what check_paged_attention_options refuses, no grown
    KV cache, tokens of another shape than one token or [1, tokens] (embeddings: [1,
    tokens, hidden]), attention the rewrite leaves, or a layout of the rewrite the
    runtime does not change back. With one_token_model, only the model of one token
    takes the form."""
    check_paged_attention_options(options)
    trial = model.clone()
    if not _grown_caches(trial):
        raise PagedAttentionRefused(
            "OpenVINO paged_attention: this delegate has no KV cache that grows by concatenation"
        )
    tokens = [port for port in trial.inputs if not any(name.startswith(CACHE_POSITIONS_NAME) for name in port.names)]
    if len(tokens) != 1:
        raise PagedAttentionRefused(
            f"OpenVINO paged_attention takes a decoder called with tokens and positions; this delegate has "
            f"inputs {[port.get_any_name() for port in trial.inputs]}"
        )
    shape = tokens[0].get_partial_shape()
    if tokens[0].get_element_type().is_real():
        _check_embeddings_shape(shape, options)
        name = _EMBEDDINGS_NAME
    else:
        name = _TOKENS_NAME
    if shape.is_dynamic and options.one_token_model:
        # Its calls of one token run on the model of one token, which the runtime keeps
        # in this form; prompts stay on the stateful model.
        shape = ov.PartialShape([1 if dim.is_dynamic else dim.get_length() for dim in shape])
        # As the runtime fixes it (one_token_model.cpp): on the parameter, without SmartReshape.
        tokens[0].get_node().set_partial_shape(shape)
        trial.validate_nodes_and_infer_types()
    elif options.one_token_model:
        raise PagedAttentionRefused(
            "OpenVINO paged_attention with one_token_model is for dynamic-length exports; this delegate "
            "already takes one token a call: leave one_token_model out"
        )
    one_token = name == _TOKENS_NAME and shape.is_static and math.prod(shape.to_shape()) == 1
    sequence = shape.rank.is_static and len(shape) == 2 and shape[0].is_static and shape[0].get_length() == 1
    if not (one_token or sequence or name == _EMBEDDINGS_NAME):
        raise PagedAttentionRefused(
            f"OpenVINO paged_attention takes one token a call or the tokens of one sequence, [1, tokens]; "
            f"this delegate's tokens input is {shape}"
        )
    if not one_token:
        refuse_several_tokens_at_f16(options)
    from openvino._offline_transformations import paged_attention_transformation

    tokens[0].get_tensor().set_names({name})
    tokens[0].get_node().set_friendly_name(name)
    try:
        paged_attention_transformation(trial)
    except RuntimeError as error:
        raise PagedAttentionRefused(
            f"OpenVINO paged_attention: OpenVINO's SDPAToPagedAttention failed: {error}"
        ) from error
    left = _grown_caches(trial)
    if left:
        raise PagedAttentionRefused(
            f"OpenVINO paged_attention: OpenVINO's SDPAToPagedAttention left {len(left)} KV cache(s) as state "
            f"(such as {left[0]!r}): their attention is not one it rewrites"
        )
    if not one_token:
        _check_sequence_layout(trial, name)


@works_around("paged_attention_f16_several_tokens")
def refuse_several_tokens_at_f16(options: OpenvinoOptions) -> None:
    """Raises PagedAttentionRefused at inference precision f16 for a delegate whose calls take
    several tokens (the runtime does the same for the load option: to_paged_attention)."""
    if options.effective_precision == "f16":
        raise PagedAttentionRefused(
            "OpenVINO paged_attention at inference_precision 'f16': OpenVINO 2026.4.1's CPU plugin computes "
            "calls of two or more tokens wrong in PagedAttention form at f16 (NaN): use f32 or bf16, add "
            "one_token_model (prompts then keep the stateful cache), or leave paged_attention out"
        )


def _check_embeddings_shape(shape: ov.PartialShape, options: OpenvinoOptions) -> None:
    """Raises PagedAttentionRefused unless `shape`, a float tokens input's, is embeddings of one
    sequence, [1, tokens, hidden] with a static hidden size, called with any count of
    tokens (the runtime lays them out as one sequence; no model of one token)."""
    if options.one_token_model:
        raise PagedAttentionRefused(
            "OpenVINO paged_attention with one_token_model is for token ids; this delegate takes embeddings: "
            "leave one_token_model out"
        )
    if not (
        shape.rank.is_static
        and len(shape) == 3
        and shape[0].is_static
        and shape[0].get_length() == 1
        and shape[2].is_static
    ):
        raise PagedAttentionRefused(
            f"OpenVINO paged_attention takes the embeddings of one sequence, [1, tokens, hidden]; this delegate's "
            f"embeddings input is {shape}"
        )


def _check_sequence_layout(model: ov.Model, name: str) -> None:
    """Raises PagedAttentionRefused when the rewrite's layout of a call's tokens is not the one the
    runtime lays out again as one sequence (lay_out_as_one_sequence in
    runtime/paged_attention.cpp; OpenVINO 2026.4.1): the tokens (input `name`: ids or
    embeddings) unsqueezed into batch rows, each PagedAttention's queries, keys and
    values flattened by a Reshape from [batch, tokens, heads, size] with static heads
    and size, and its output shaped back by a Reshape."""
    consumers = [target.get_node() for target in model.input(name).get_target_inputs()]
    problems = [
        f"the tokens feed a {node.get_type_name()}" for node in consumers if node.get_type_name() != "Unsqueeze"
    ]
    for op in model.get_ordered_ops():
        if op.get_type_name() != "PagedAttentionExtension":
            continue
        for index in range(3):
            flatten = op.input_value(index).get_node()
            shape = flatten.get_input_partial_shape(0) if flatten.get_type_name() == "Reshape" else None
            if shape is None or shape.rank.is_dynamic or len(shape) != 4 or shape[2].is_dynamic or shape[3].is_dynamic:
                problems.append(
                    f"{op.get_friendly_name()} input {index} comes from a {flatten.get_type_name()} of {shape}"
                )
        problems += [
            f"{op.get_friendly_name()}'s output feeds a {target.get_node().get_type_name()}"
            for target in op.output(0).get_target_inputs()
            if target.get_node().get_type_name() != "Reshape"
        ]
    if problems:
        raise PagedAttentionRefused(
            "OpenVINO paged_attention: the layout OpenVINO's SDPAToPagedAttention gives a call of several tokens "
            f"is not the one the runtime lays out as one sequence: {'; '.join(problems)}"
        )


def _grown_caches(model: ov.Model) -> List[str]:
    """The grown caches read in `model` (the transformation keeps the variables it no longer reads)."""
    ids = [op.get_variable_id() for op in model.get_ops() if op.get_type_name() == "ReadValue"]
    return [variable_id for variable_id in ids if variable_id.endswith(GROWN_CACHE_SUFFIX)]
