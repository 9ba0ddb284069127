"""Small real models end to end, loaded from a file and from bytes."""

import torch
from harness import check_against_eager
from models import SmallCnn, TransformerBlock


def test_small_cnn_matches_eager(tmp_path):
    inputs = [(torch.randn(2, 3, 32, 32),) for _ in range(2)]
    lowered = check_against_eager(
        SmallCnn(), inputs, tmp_path, expect_delegated=["aten.convolution.default", "aten.addmm.default"]
    )
    assert lowered.cpu_ops() == [], f"ops left on the CPU: {lowered.cpu_ops()}"


def test_transformer_block_matches_eager(tmp_path):
    inputs = [(torch.randn(1, 16, 64),) for _ in range(2)]
    lowered = check_against_eager(
        TransformerBlock(),
        inputs,
        tmp_path,
        expect_delegated=["aten.native_layer_norm.default", "aten._softmax.default"],
    )
    assert lowered.cpu_ops() == [], f"ops left on the CPU: {lowered.cpu_ops()}"


def test_program_loaded_from_bytes_matches_eager(tmp_path):
    # OpenVINO's constants may point into the blob: loading from bytes must keep it alive too.
    inputs = [(torch.randn(2, 3, 32, 32),) for _ in range(2)]
    check_against_eager(SmallCnn(), inputs, tmp_path, from_bytes=True)
