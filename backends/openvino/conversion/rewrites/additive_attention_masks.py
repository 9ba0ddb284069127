"""Boolean attention masks given to attention as the additive masks they stand for.

A ``ScaledDotProductAttention`` with a boolean mask adds 0 to a score the mask keeps
and -inf to one it hides, which is what it computes when given that additive mask
itself. OpenVINO 2026.4.1's CPU plugin runs the two differently fast: with the boolean
mask an LLM's attention took about 8 times as long, and filling a 900-token prompt
into a dim-1024, 8-layer Llama with 4-bit weights 1145 ms instead of 585 ms (f32),
780 ms instead of 255 ms (bf16), a decode step about 10% longer (Intel Xeon with AMX,
OpenVINO alone on our IR; benchmarks/llm_genai.py). transformers' own export for
OpenVINO (optimum-intel) gives attention additive masks. No upstream issue was found.

So each boolean mask becomes ``Select(mask, 0, -inf)`` in the queries' type, once per
mask however many attention ops read it. A query row the mask hides entirely gets the
same (NaN) result either way; fully_masked_attention.py handles those rows.
"""

from __future__ import annotations

from typing import Dict, Tuple

import openvino as ov
import openvino.opset13 as ov_ops

from ...workarounds import not_a_workaround
from .model_edits import scalar_like

_MASK_PORT = 3


@not_a_workaround("speed: the CPU plugin's attention is slower with a boolean mask than with the same additive one")
def add_boolean_attention_masks(model: ov.Model) -> int:
    """Gives every attention op that reads a boolean mask its additive form; returns how many masks were made."""
    made: Dict[Tuple[int, int, str], ov.Output] = {}
    for node in model.get_ordered_ops():
        if node.get_type_name() != "ScaledDotProductAttention" or node.get_input_size() <= _MASK_PORT:
            continue
        mask = node.input_value(_MASK_PORT)
        if mask.get_element_type() != ov.Type.boolean:
            continue
        query = node.input_value(0)
        key = (mask.get_node().get_instance_id(), mask.get_index(), str(query.get_element_type()))
        if key not in made:
            kept, hidden = scalar_like(query, 0.0), scalar_like(query, float("-inf"))
            made[key] = ov_ops.select(mask, kept, hidden).output(0)
        node.input(_MASK_PORT).replace_source_output(made[key])
    if made:
        model.validate_nodes_and_infer_types()
    return len(made)
