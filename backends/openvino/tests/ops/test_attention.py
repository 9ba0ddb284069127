"""Scaled dot-product attention reaches OpenVINO as one op (which its CPU plugin
runs fused) when OpenVINO converts it as it is; otherwise ExecuTorch decomposes it
as before."""

import torch
import torch.nn.functional as F
from executorch_openvino import OpenvinoPartitioner
from harness import assert_close, check_against_eager, eager, lower, run

SDPA = "aten.scaled_dot_product_attention.default"


class MaskedAttention(torch.nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class CausalAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class GroupedAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def heads(count: int, length: int = 5) -> torch.Tensor:
    return torch.randn(1, count, length, 16)


def masked_inputs():
    mask = torch.zeros(5, 5).masked_fill(torch.rand(5, 5) > 0.7, float("-inf")).fill_diagonal_(0)
    return heads(4), heads(4), heads(4), mask


def test_masked_attention_is_one_openvino_op(tmp_path):
    check_against_eager(
        MaskedAttention(), [masked_inputs(), masked_inputs()], tmp_path, expect_delegated=[SDPA], rtol=1e-4, atol=1e-5
    )


def test_attention_with_a_bool_mask_is_one_openvino_op(tmp_path):
    def inputs():
        mask = (torch.rand(5, 5) > 0.3).fill_diagonal_(True)  # True: may attend
        return heads(4), heads(4), heads(4), mask

    check_against_eager(
        MaskedAttention(), [inputs(), inputs()], tmp_path, expect_delegated=[SDPA], rtol=1e-4, atol=1e-5
    )


def test_a_query_whose_mask_hides_every_key_gets_zeros_as_in_pytorch(tmp_path):
    # A padded query: OpenVINO's attention gave NaN for its row.
    def inputs(hidden_row, as_bool):
        mask = torch.ones(5, 5, dtype=torch.bool)
        mask[hidden_row] = False
        if not as_bool:
            mask = torch.zeros(5, 5).masked_fill(~mask, float("-inf"))
        return heads(4), heads(4), heads(4), mask

    for as_bool in (True, False):
        check_against_eager(
            MaskedAttention(),
            [inputs(1, as_bool), inputs(3, as_bool)],
            tmp_path,
            expect_delegated=[SDPA],
            rtol=1e-4,
            atol=1e-5,
        )


def test_causal_attention_is_one_openvino_op(tmp_path):
    check_against_eager(
        CausalAttention(),
        [(heads(4), heads(4), heads(4)) for _ in range(2)],
        tmp_path,
        expect_delegated=[SDPA],
        rtol=1e-4,
        atol=1e-5,
    )


def test_grouped_attention_openvino_ignores_is_decomposed(tmp_path):
    # OpenVINO's frontend drops enable_gqa, so 6 query heads over 2 KV heads would not convert.
    lowered = check_against_eager(
        GroupedAttention(), [(heads(6), heads(2), heads(2)) for _ in range(2)], tmp_path, rtol=1e-4, atol=1e-5
    )
    assert SDPA not in lowered.delegated_ops()


def test_attention_skipped_by_the_user_is_decomposed(tmp_path):
    model, inputs = MaskedAttention(), masked_inputs()
    partitioner = OpenvinoPartitioner(op_types_to_skip=["aten.scaled_dot_product_attention"])
    program = lower(model, inputs, tmp_path, partitioner=partitioner)
    assert SDPA not in program.delegated_ops()
    assert_close(run(program.load_method(), inputs), eager(model, inputs), rtol=1e-4, atol=1e-5)


class AttentionThenMergeHeads(torch.nn.Module):
    """The usual multi-head attention tail: heads moved back next to each other."""

    def forward(self, q, k, v):
        y = F.scaled_dot_product_attention(q, k, v)
        return y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)


def test_attention_whose_heads_are_merged_is_one_openvino_op(tmp_path):
    check_against_eager(
        AttentionThenMergeHeads(),
        [(heads(4), heads(4), heads(4)) for _ in range(2)],
        tmp_path,
        expect_delegated=[SDPA],
        rtol=1e-4,
        atol=1e-5,
    )


def test_attention_over_a_dynamic_length_is_one_openvino_op(tmp_path):
    length = torch.export.Dim("length", min=2, max=64)
    inputs = [tuple(heads(4, size) for _ in range(3)) for size in (5, 9)]
    check_against_eager(
        AttentionThenMergeHeads(),
        inputs,
        tmp_path,
        expect_delegated=[SDPA],
        dynamic_shapes=tuple({2: length} for _ in range(3)),
        rtol=1e-4,
        atol=1e-5,
    )


class ProjectedAttention(torch.nn.Module):
    """A ViT-style block: queries, keys and values come out of one permuted projection."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return self.out(y.transpose(1, 2).reshape(batch, tokens, dim))


def test_attention_over_a_permuted_projection_is_one_openvino_op(tmp_path):
    # Kept whole, attention is traced again with a result laid out unlike at export,
    # under which the merge of its heads could not be a view (pre_decomposition/attention_layout.py).
    check_against_eager(
        ProjectedAttention(),
        [(torch.randn(2, 10, 64),) for _ in range(2)],
        tmp_path,
        expect_delegated=[SDPA],
        rtol=1e-4,
        atol=1e-5,
    )


def test_the_users_program_is_not_changed_by_lowering(tmp_path):
    exported = torch.export.export(ProjectedAttention(), (torch.randn(2, 10, 64),))
    before = str(exported.graph)
    OpenvinoPartitioner().transform_for_pre_decomposition(exported)
    assert str(exported.graph) == before


class PaddedBatchAttention(torch.nn.Module):
    """Hugging Face style: a 0/1 integer attention_mask per key, as a bool and as an additive mask."""

    def forward(self, q, k, v, attention_mask):
        keep = attention_mask.bool()[:, None, None, :]
        additive = torch.zeros(attention_mask.shape).masked_fill(attention_mask == 0, float("-inf"))[:, None, None, :]
        return (
            F.scaled_dot_product_attention(q, k, v, attn_mask=keep),
            F.scaled_dot_product_attention(q, k, v, attn_mask=additive),
        )


def test_a_fully_padded_sequence_from_an_integer_attention_mask_gets_zeros(tmp_path):
    def inputs(padded_sequence):
        attention_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
        attention_mask[padded_sequence] = 0
        return torch.randn(2, 4, 5, 16), torch.randn(2, 4, 5, 16), torch.randn(2, 4, 5, 16), attention_mask

    check_against_eager(
        PaddedBatchAttention(), [inputs(0), inputs(1)], tmp_path, expect_delegated=[SDPA], rtol=1e-4, atol=1e-5
    )


class MaskChosenByABoolInput(torch.nn.Module):
    def forward(self, q, keep):
        bias = torch.tensor([float("-inf"), 0.0])[keep.long()][:, None, None, :]
        return F.scaled_dot_product_attention(q, q, q, attn_mask=bias)


def test_a_mask_whose_rows_a_bool_input_chooses_from_a_constant_is_guarded(tmp_path):
    # Only integer inputs that choose (an LLM's positions) spare the guard.
    def inputs(hidden_row):
        keep = torch.ones(2, 5, dtype=torch.bool)
        keep[hidden_row] = False
        return torch.randn(2, 4, 5, 16), keep

    check_against_eager(
        MaskChosenByABoolInput(), [inputs(0), inputs(1)], tmp_path, expect_delegated=[SDPA], rtol=1e-4, atol=1e-5
    )
