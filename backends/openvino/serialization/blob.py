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
FORMAT_VERSION = 2
HEADER_SIZE = 96
VERSION_FIELD_SIZE = 48
ALIGNMENT = 64
DIGEST_SIZE = 12
_HEADER = struct.Struct(f"<8sII{VERSION_FIELD_SIZE}sQQI{DIGEST_SIZE}s")
assert _HEADER.size == HEADER_SIZE
# Where each field after the magic and format version starts, from the layout above
# (runtime/blob_format.h has the same names; tests/test_blob.py checks they agree).
WRITER_VERSION_OFFSET = struct.calcsize("<8sII")
XML_SIZE_OFFSET = WRITER_VERSION_OFFSET + VERSION_FIELD_SIZE
WEIGHTS_SIZE_OFFSET = XML_SIZE_OFFSET + 8
CHECKSUM_OFFSET = WEIGHTS_SIZE_OFFSET + 8
DIGEST_OFFSET = CHECKSUM_OFFSET + 4
#: The fields from XML_SIZE_OFFSET on: sizes, checksum, digest.
SIZES_AND_CHECKS = struct.Struct(f"<QQI{DIGEST_SIZE}s")
assert DIGEST_OFFSET + DIGEST_SIZE == HEADER_SIZE == XML_SIZE_OFFSET + SIZES_AND_CHECKS.size


@dataclass(frozen=True)
class Blob:
    format_version: int
    openvino_version: str
    ir_xml: bytes
    ir_weights: bytes
    ir_digest: bytes  # all zero when the writer recorded none


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
    )
    weights_offset = _aligned(HEADER_SIZE + len(xml))
    padding = b"\0" * (weights_offset - HEADER_SIZE - len(xml))
    return header + xml + padding + weights


def read_blob(data: bytes) -> Blob:
    """Parses a blob; raises ValueError on anything the runtime would refuse."""
    if len(data) < HEADER_SIZE:
        raise ValueError(f"OpenVINO blob of {len(data)} bytes is shorter than its header")
    magic, version, header_size, writer, xml_size, weights_size, crc, digest = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("not an executorch_openvino blob: bad magic")
    if version != FORMAT_VERSION or header_size != HEADER_SIZE:
        raise ValueError(f"unsupported blob format version {version} (header {header_size} bytes)")
    weights_offset = _aligned(HEADER_SIZE + xml_size)
    if xml_size == 0 or weights_offset + weights_size > len(data):
        raise ValueError("OpenVINO blob sizes do not fit the data")
    blob = Blob(
        format_version=version,
        openvino_version=writer.rstrip(b"\0").decode("ascii"),
        ir_xml=bytes(data[HEADER_SIZE : HEADER_SIZE + xml_size]),
        ir_weights=bytes(data[weights_offset : weights_offset + weights_size]),
        ir_digest=bytes(digest),
    )
    if checksum(blob.ir_xml, blob.ir_weights) != crc:
        raise ValueError("OpenVINO blob checksum does not match: the blob is damaged")
    return blob
