"""The processed blob in Python. The format is described once, in runtime/blob_format.h."""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass

import openvino as ov

MAGIC = b"ETOVBLOB"
FORMAT_VERSION = 3
HEADER_SIZE = 104
#: Version 2, which the runtime and read_blob still read: the header ends before the model facts.
FORMAT_VERSION_V2 = 2
HEADER_SIZE_V2 = 96
VERSION_FIELD_SIZE = 48
ALIGNMENT = 64
DIGEST_SIZE = 12
_HEADER_V2 = struct.Struct(f"<8sII{VERSION_FIELD_SIZE}sQQI{DIGEST_SIZE}s")
_HEADER = struct.Struct(f"<8sII{VERSION_FIELD_SIZE}sQQI{DIGEST_SIZE}sII")
assert _HEADER_V2.size == HEADER_SIZE_V2 and _HEADER.size == HEADER_SIZE
# Where each field after the magic and format version starts, from the layout above
# (runtime/blob_format.h has the same names; tests/runtime/test_blob.py checks they agree).
WRITER_VERSION_OFFSET = struct.calcsize("<8sII")
XML_SIZE_OFFSET = WRITER_VERSION_OFFSET + VERSION_FIELD_SIZE
WEIGHTS_SIZE_OFFSET = XML_SIZE_OFFSET + 8
CHECKSUM_OFFSET = WEIGHTS_SIZE_OFFSET + 8
DIGEST_OFFSET = CHECKSUM_OFFSET + 4
FACTS_OFFSET = DIGEST_OFFSET + DIGEST_SIZE
#: The fields from XML_SIZE_OFFSET on: sizes, checksum, digest.
SIZES_AND_CHECKS = struct.Struct(f"<QQI{DIGEST_SIZE}s")
assert DIGEST_OFFSET + DIGEST_SIZE == HEADER_SIZE_V2 == XML_SIZE_OFFSET + SIZES_AND_CHECKS.size
assert FACTS_OFFSET + 8 == HEADER_SIZE

#: Model facts, bits of the word at FACTS_OFFSET (kBlobFact* in runtime/blob_format.h).
#: The IR has FakeQuantize operations, which OpenVINO's CPU plugin runs on 8-bit kernels.
FACT_FAKE_QUANTIZE = 1 << 0
#: Some of the IR's weights are in the program's named data (named_weights.py).
FACT_NAMED_WEIGHTS = 1 << 1
KNOWN_FACTS = FACT_FAKE_QUANTIZE | FACT_NAMED_WEIGHTS
#: What the runtime assumes of a version-2 blob, which records no facts.
FACTS_ASSUMED_FOR_V2 = FACT_FAKE_QUANTIZE


@dataclass(frozen=True)
class Blob:
    format_version: int
    openvino_version: str
    ir_xml: bytes
    ir_weights: bytes
    ir_digest: bytes  # all zero when the writer recorded none
    model_facts: int  # FACT_* bits; FACTS_ASSUMED_FOR_V2 for a version-2 blob

    @property
    def has_fake_quantize(self) -> bool:
        return bool(self.model_facts & FACT_FAKE_QUANTIZE)

    @property
    def has_named_weights(self) -> bool:
        return bool(self.model_facts & FACT_NAMED_WEIGHTS)


def _aligned(offset: int) -> int:
    return (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def serialize_ir(model: ov.Model) -> tuple:
    """The model's IR as (xml, weights) bytes, weights kept at their own precision."""
    with tempfile.TemporaryDirectory() as folder:
        xml_path = os.path.join(folder, "model.xml")
        bin_path = os.path.join(folder, "model.bin")
        ov.serialize(model, xml_path, bin_path)
        with open(xml_path, "rb") as xml, open(bin_path, "rb") as weights:
            return xml.read(), weights.read()


def checksum(xml: bytes, weights: bytes) -> int:
    """CRC-32 of the XML followed by the weights, as the runtime checks it."""
    return zlib.crc32(weights, zlib.crc32(xml))


def ir_digest(xml: bytes, weights: bytes) -> bytes:
    """The name of this IR in the runtime's model cache: BLAKE2b of the XML followed by the weights.

    Unlike the checksum, it is strong enough that two different IRs never share a
    name, so a cached model is never taken for another one.
    """
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    digest.update(xml)
    digest.update(weights)
    return digest.digest()


def model_facts(model: ov.Model) -> int:
    """The FACT_* bits of `model`, which the runtime reads from the header instead of
    searching the IR's text: FACT_FAKE_QUANTIZE when an op, also inside a sub-graph
    (Loop, TensorIterator, If), is a FakeQuantize; FACT_NAMED_WEIGHTS when a parameter
    stands for a weight in the program's named data."""
    from .named_weights import NAMED_WEIGHT_NAME

    facts = FACT_FAKE_QUANTIZE if any(op.get_type_name() == "FakeQuantize" for op in _all_ops(model)) else 0
    names = (name for parameter in model.get_parameters() for name in parameter.output(0).get_names())
    if any(name.startswith(NAMED_WEIGHT_NAME) for name in names):
        facts |= FACT_NAMED_WEIGHTS
    return facts


# The bodies of OpenVINO's ops that hold sub-graphs (get_function(index) beyond them crashes).
_SUB_GRAPHS = {"If": 2, "Loop": 1, "TensorIterator": 1}


def _all_ops(model: ov.Model):
    for op in model.get_ordered_ops():
        yield op
        for index in range(_SUB_GRAPHS.get(op.get_type_name(), 0)):
            yield from _all_ops(op.get_function(index))


def write_blob(model: ov.Model) -> bytes:
    """Serializes `model` behind our header."""
    xml, weights = serialize_ir(model)
    version = ov.get_version().encode("ascii", "replace")[: VERSION_FIELD_SIZE - 1]
    header = _HEADER.pack(
        MAGIC,
        FORMAT_VERSION,
        HEADER_SIZE,
        version,
        len(xml),
        len(weights),
        checksum(xml, weights),
        ir_digest(xml, weights),
        model_facts(model),
        0,  # reserved
    )
    weights_offset = _aligned(HEADER_SIZE + len(xml))
    padding = b"\0" * (weights_offset - HEADER_SIZE - len(xml))
    return header + xml + padding + weights


def read_blob(data: bytes) -> Blob:
    """Parses a blob of format version 3 or 2; raises ValueError on anything the runtime would refuse."""
    if len(data) < HEADER_SIZE_V2:
        raise ValueError(f"OpenVINO blob of {len(data)} bytes is shorter than its header")
    magic, version, header_size, writer, xml_size, weights_size, crc, digest = _HEADER_V2.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("not an executorch_openvino blob: bad magic")
    if (version, header_size) == (FORMAT_VERSION_V2, HEADER_SIZE_V2):
        facts = FACTS_ASSUMED_FOR_V2
    elif (version, header_size) == (FORMAT_VERSION, HEADER_SIZE) and len(data) >= HEADER_SIZE:
        facts = _HEADER.unpack_from(data)[-2]
        if facts & ~KNOWN_FACTS:
            raise ValueError(f"OpenVINO blob model facts {facts:#010x} hold bits this reader does not know")
    else:
        raise ValueError(f"unsupported blob format version {version} (header {header_size} bytes)")
    weights_offset = _aligned(header_size + xml_size)
    if xml_size == 0 or weights_offset + weights_size > len(data):
        raise ValueError("OpenVINO blob sizes do not fit the data")
    blob = Blob(
        format_version=version,
        openvino_version=writer.rstrip(b"\0").decode("ascii"),
        ir_xml=bytes(data[header_size : header_size + xml_size]),
        ir_weights=bytes(data[weights_offset : weights_offset + weights_size]),
        ir_digest=bytes(digest),
        model_facts=facts,
    )
    if checksum(blob.ir_xml, blob.ir_weights) != crc:
        raise ValueError("OpenVINO blob checksum does not match: the blob is damaged")
    return blob
