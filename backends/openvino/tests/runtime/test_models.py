"""Small real models end to end, loaded from a file and from bytes."""

import gc

import torch
from harness import check_against_eager, lower, run
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


def test_a_method_loaded_from_bytes_runs_after_its_program_object_is_collected(tmp_path):
    # ExecuTorch's Method keeps neither its Program nor the bytes it was read from
    # alive; the lowered program keeps them, or this call would read freed memory.
    inputs = (torch.randn(2, 3, 32, 32),)
    model = SmallCnn().eval()
    lowered = lower(model, inputs, tmp_path)
    method = lowered.load_method(from_bytes=True)
    gc.collect()
    reuse_freed_memory = [bytes(range(256)) * 40 for _ in range(20_000)]
    assert reuse_freed_memory
    with torch.no_grad():
        torch.testing.assert_close(run(method, inputs)[0], model(*inputs), rtol=1e-4, atol=1e-4)
