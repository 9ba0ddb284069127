"""The blob format in Python (serialization/blob.py) against what the runtime expects."""

import hashlib
import re
from pathlib import Path

import executorch_openvino.serialization.blob as blob_module
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from executorch_openvino.serialization.blob import (
    FACT_FAKE_QUANTIZE,
    FORMAT_VERSION,
    FORMAT_VERSION_V2,
    HEADER_SIZE,
    read_blob,
    write_blob,
)


def _model():
    x = ops.parameter([2, 3], np.float32)
    return ov.Model([ops.result(ops.add(x, ops.constant(np.arange(6, dtype=np.float32).reshape(2, 3))))], [x])


def test_blob_round_trips_ir_and_records_the_writer():
    blob = read_blob(write_blob(_model()))
    assert blob.format_version == FORMAT_VERSION
    assert blob.openvino_version == ov.get_version()
    assert blob.ir_xml.startswith(b"<?xml")
    assert np.frombuffer(blob.ir_weights, dtype=np.float32).tolist() == list(range(6))


def test_blob_weights_start_aligned_for_the_runtime():
    data = write_blob(_model())
    offset = data.index(read_blob(data).ir_weights)
    assert offset % 64 == 0 and offset >= HEADER_SIZE


def test_damaged_blob_is_refused_by_its_checksum():
    data = bytearray(write_blob(_model()))
    data[-1] ^= 0x80
    with pytest.raises(ValueError, match="checksum"):
        read_blob(bytes(data))


def test_blob_names_its_ir_by_a_blake2b_digest_of_xml_and_weights():
    blob = read_blob(write_blob(_model()))
    assert blob.ir_digest == hashlib.blake2b(blob.ir_xml + blob.ir_weights, digest_size=12).digest()


def _fake_quantized_model():
    x = ops.parameter([2, 3], np.float32)
    low, high = ops.constant(np.float32(-1)), ops.constant(np.float32(1))
    return ov.Model([ops.result(ops.fake_quantize(x, low, high, low, high, 256))], [x])


def _fake_quantize_inside_an_if():
    """A FakeQuantize only in the then-body of an If: not among the model's own ops."""
    import openvino.opset8 as opset8

    x, condition = ops.parameter([2, 3], np.float32), ops.parameter([], np.bool_)
    then_x, else_x = ops.parameter([2, 3], np.float32), ops.parameter([2, 3], np.float32)
    low, high = ops.constant(np.float32(-1)), ops.constant(np.float32(1))
    then_body = ov.Model([ops.result(ops.fake_quantize(then_x, low, high, low, high, 256))], [then_x])
    else_body = ov.Model([ops.result(ops.relu(else_x))], [else_x])
    branch = opset8.if_op(condition)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(x.output(0), then_x, else_x)
    output = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    return ov.Model([ops.result(output)], [x, condition])


@pytest.mark.parametrize(
    "model, has_fake_quantize",
    [(_model, False), (_fake_quantized_model, True), (_fake_quantize_inside_an_if, True)],
    ids=["float", "fake_quantize", "fake_quantize_in_a_sub_graph"],
)
def test_blob_header_records_whether_the_ir_has_fake_quantize(model, has_fake_quantize):
    blob = read_blob(write_blob(model()))
    assert blob.has_fake_quantize == has_fake_quantize
    assert blob.model_facts == (FACT_FAKE_QUANTIZE if has_fake_quantize else 0)


def test_a_version_2_blob_still_reads_and_is_assumed_to_have_fake_quantize():
    from blob_seeds import as_version_2

    current = write_blob(_model())
    old, new = read_blob(as_version_2(current)), read_blob(current)
    assert (old.format_version, new.format_version) == (FORMAT_VERSION_V2, FORMAT_VERSION)
    assert old.has_fake_quantize and not new.has_fake_quantize
    assert (old.ir_xml, old.ir_weights, old.ir_digest) == (new.ir_xml, new.ir_weights, new.ir_digest)


def test_a_model_fact_the_reader_does_not_know_is_refused():
    from blob_seeds import with_model_facts

    with pytest.raises(ValueError, match="model facts 0x00000020 hold bits this reader does not know"):
        read_blob(with_model_facts(write_blob(_model()), 1 << 5))


@pytest.mark.parametrize(
    "cpp_name, python_name",
    [
        ("kBlobFormatVersion", "FORMAT_VERSION"),
        ("kBlobFormatVersionV2", "FORMAT_VERSION_V2"),
        ("kBlobHeaderSizeV2", "HEADER_SIZE_V2"),
        ("kBlobFactsOffset", "FACTS_OFFSET"),
        ("kBlobFactFakeQuantize", "FACT_FAKE_QUANTIZE"),
        ("kBlobHeaderSize", "HEADER_SIZE"),
        ("kBlobVersionFieldSize", "VERSION_FIELD_SIZE"),
        ("kBlobAlignment", "ALIGNMENT"),
        ("kBlobDigestSize", "DIGEST_SIZE"),
        ("kBlobWriterVersionOffset", "WRITER_VERSION_OFFSET"),
        ("kBlobXmlSizeOffset", "XML_SIZE_OFFSET"),
        ("kBlobWeightsSizeOffset", "WEIGHTS_SIZE_OFFSET"),
        ("kBlobChecksumOffset", "CHECKSUM_OFFSET"),
        ("kBlobDigestOffset", "DIGEST_OFFSET"),
    ],
)
def test_layout_in_the_cpp_header_is_the_python_layout(cpp_name, python_name):
    header = Path(__file__).resolve().parents[2] / "runtime" / "blob_format.h"
    match = re.search(rf"\b{cpp_name}\s*=\s*(\d+)(?:u << (\d+))?;", header.read_text())
    assert match, f"{cpp_name} is not defined in {header}"
    value = int(match.group(1)) << int(match.group(2) or 0)
    assert value == getattr(blob_module, python_name)
