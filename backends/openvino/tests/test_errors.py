"""Bad input gets a clear error that names it; nothing crashes."""

import struct

import executorch_openvino.preprocess
import pytest
import torch
from harness import assert_close, eager, lower, run
from small_models import AddOne


class WithWeights(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x)


def _truncate(blob):
    return blob[: len(blob) // 2]


def _bad_magic(blob):
    return b"NOTABLOB" + blob[8:]


def _future_version(blob):
    return blob[:8] + struct.pack("<I", 99) + blob[12:]


def _huge_xml_size(blob):
    return blob[:64] + struct.pack("<Q", 2**63) + blob[72:]


def _header_only(blob):
    return blob[:10]


def _flip_a_weight_bit(blob):
    return blob[:-1] + bytes([blob[-1] ^ 0x01])


@pytest.mark.parametrize(
    "tamper, log_text",
    [
        (_truncate, "not fit"),
        (_bad_magic, "bad magic"),
        (_future_version, "format version 99"),
        (_huge_xml_size, "IR XML size"),
        (_header_only, "too short"),
        (_flip_a_weight_bit, "checksum"),
    ],
    ids=["truncated", "bad_magic", "future_version", "huge_xml_size", "ten_bytes", "weight_bit_flipped"],
)
def test_damaged_blob_fails_to_load_with_a_log_line(tamper, log_text, tmp_path, monkeypatch, capfd):
    write_blob = executorch_openvino.preprocess.write_blob
    monkeypatch.setattr(executorch_openvino.preprocess, "write_blob", lambda model: tamper(write_blob(model)))
    lowered = lower(WithWeights(), (torch.randn(2, 3),), tmp_path)
    with pytest.raises(RuntimeError):
        lowered.load_method()
    assert log_text in capfd.readouterr().err


def test_input_of_wrong_dtype_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    bad = torch.ones(2, 3, dtype=torch.int32)
    kept = bad.clone()
    with pytest.raises(RuntimeError):
        method.execute([bad])
    assert torch.equal(bad, kept), "a refused input was modified"
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))


def test_input_of_wrong_shape_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    with pytest.raises(RuntimeError):
        method.execute([torch.randn(4, 5)])
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))


def test_input_beyond_its_dynamic_bound_is_refused_untouched_and_the_method_still_works(tmp_path):
    model = AddOne()
    rows = torch.export.Dim("rows", min=2, max=8)
    method = lower(model, (torch.randn(4, 3),), tmp_path, dynamic_shapes=({0: rows},)).load_method()
    too_big = torch.randn(9, 3)
    kept = too_big.clone()
    with pytest.raises(RuntimeError):
        method.execute([too_big])
    assert torch.equal(too_big, kept), "a refused input was modified"
    good = (torch.randn(8, 3),)
    assert_close(run(method, good), eager(model, good))


def test_wrong_number_of_inputs_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        method.execute([torch.randn(2, 3), torch.randn(2, 3)])
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))
