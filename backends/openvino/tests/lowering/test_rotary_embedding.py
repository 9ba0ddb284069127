"""Rotary embeddings written as Meta's Llama writes them (each pair (x[2i], x[2i+1])
turned by angle i, through a [..., D/2, 2] view) reach OpenVINO as one multiply-add
per tensor (passes/rewrite_interleaved_rope.py), with the results of eager."""

import torch
from executorch_openvino import BACKEND_ID
from harness import check_against_eager

HEADS, KV_HEADS, HEAD_DIM, MAX_LENGTH = 4, 2, 16, 32
LENGTH = torch.export.Dim("length", min=2, max=MAX_LENGTH)


def rotate_pairs(x, cos, sin, look_alike=False):
    """Meta's apply_rotary_emb for one tensor. The look-alike swaps cos and sin in the
    second half of each pair: no rotation, but every op of one is there."""
    real, imaginary = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    cos = cos.view(1, x.size(1), 1, -1)
    sin = sin.view(1, x.size(1), 1, -1)
    out_real = real * cos - imaginary * sin
    out_imaginary = real * cos + imaginary * sin if look_alike else real * sin + imaginary * cos
    return torch.stack([out_real, out_imaginary], dim=-1).flatten(3)


class InterleavedRotary(torch.nn.Module):
    """Queries and keys [1, S, heads, 16] rotated by the first S rows of cos and sin tables."""

    def __init__(self, look_alike: bool = False):
        super().__init__()
        angles = torch.outer(torch.arange(MAX_LENGTH).float(), torch.rand(HEAD_DIM // 2) + 0.1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.look_alike = look_alike

    def forward(self, q, k):
        cos, sin = self.cos[: q.size(1)], self.sin[: q.size(1)]
        return (
            rotate_pairs(q, cos, sin, self.look_alike) * 2,
            rotate_pairs(k, cos, sin, self.look_alike) * 2,
        )


def queries_and_keys(length):
    return torch.randn(1, length, HEADS, HEAD_DIM), torch.randn(1, length, KV_HEADS, HEAD_DIM)


def pair_views(lowered):
    """Ops of the delegate's OpenVINO model whose output has the rank of the pair view."""
    [model] = lowered.openvino_models()
    return [op.get_friendly_name() for op in model.get_ordered_ops() if op.get_output_partial_shape(0).rank == 5]


def test_interleaved_rotation_reaches_openvino_without_its_pair_views(tmp_path):
    lowered = check_against_eager(
        InterleavedRotary(),
        [queries_and_keys(5), queries_and_keys(11), queries_and_keys(5)],
        tmp_path,
        dynamic_shapes=({1: LENGTH}, {1: LENGTH}),
    )
    assert lowered.delegate_ids() == [BACKEND_ID]
    assert pair_views(lowered) == []


def test_a_look_alike_that_is_not_a_rotation_is_left_as_written(tmp_path):
    lowered = check_against_eager(
        InterleavedRotary(look_alike=True),
        [queries_and_keys(5), queries_and_keys(11)],
        tmp_path,
        dynamic_shapes=({1: LENGTH}, {1: LENGTH}),
    )
    assert pair_views(lowered) != []
