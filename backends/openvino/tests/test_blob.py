"""The blob format in Python (serialization/blob.py) against what the runtime expects."""

import hashlib
import re
from pathlib import Path

import executorch_openvino.serialization.blob as blob_module
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from executorch_openvino.serialization.blob import FORMAT_VERSION, HEADER_SIZE, read_blob, write_blob


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


@pytest.mark.parametrize(
    "cpp_name, python_name",
    [
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
    header = Path(__file__).resolve().parents[1] / "runtime" / "blob_format.h"
    match = re.search(rf"\b{cpp_name}\s*=\s*(\d+);", header.read_text())
    assert match, f"{cpp_name} is not defined in {header}"
    assert int(match.group(1)) == getattr(blob_module, python_name)
