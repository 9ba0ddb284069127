"""Real processed blobs, as preprocess writes them, and damaged ones made from them.

    python backends/openvino/tests/blob_seeds.py OUTPUT_FOLDER [--crafted] [--mutations N]

writes seed_<model>.blob for a few small models (the bytes of
ExecutorchOpenvinoBackend.preprocess(...).processed_bytes, kept small so that fuzzing
mutates structure rather than weights); with --crafted, also damaged blobs aimed at
OpenVINO's IR reader (a consistent header around a bad IR), named
<expected outcome>_<what>.blob as in fuzz_corpus/; with --mutations N, N blobs
with 1-3 random byte changes in the IR XML of a seed and a consistent header
(mutation_NNNNN.blob). These are the fuzzer's seeds (scripts/fuzz.sh) and the
blobs scripts/sanitize.sh runs under AddressSanitizer.
"""

from __future__ import annotations

import argparse
import random
import re
import struct
import sys
from pathlib import Path
from typing import Dict, Tuple

import torch
from executorch.exir import to_edge
from executorch_openvino import ExecutorchOpenvinoBackend, openvino_compile_specs
from executorch_openvino.serialization.blob import (
    ALIGNMENT,
    FACTS_OFFSET,
    FORMAT_VERSION_V2,
    HEADER_SIZE,
    HEADER_SIZE_V2,
    SIZES_AND_CHECKS,
    XML_SIZE_OFFSET,
    checksum,
    ir_digest,
)
from small_models import AddOne, DynamicGelu, LinearRelu, TwoOutputs  # noqa: E402


class IntMax(torch.nn.Module):
    def forward(self, x):
        return torch.maximum(x, torch.tensor(3, dtype=torch.int32))


class QuantizeDequantize(torch.nn.Module):
    """A quantize -> dequantize pair, which OpenVINO's frontend makes a FakeQuantize."""

    def forward(self, x):
        import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers quantized_decomposed

        q = torch.ops.quantized_decomposed.quantize_per_tensor(x, 0.05, 0, -128, 127, torch.int8)
        return torch.ops.quantized_decomposed.dequantize_per_tensor(q, 0.05, 0, -128, 127, torch.int8) * 2


def seed_blobs() -> Dict[str, bytes]:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=8)
    cases = {
        "add_one": (AddOne(), (torch.randn(2, 3),), None),
        "linear_relu": (LinearRelu(4), (torch.randn(2, 4),), None),
        "two_outputs": (TwoOutputs(), (torch.randn(2, 3), torch.randn(2, 3)), None),
        "dynamic_gelu": (DynamicGelu(), (torch.randn(4, 5),), ({0: batch},)),
        "int_max": (IntMax(), (torch.arange(6, dtype=torch.int32).reshape(2, 3),), None),
        "fake_quantize": (QuantizeDequantize(), (torch.randn(2, 3),), None),
    }
    blobs = {}
    for name, (module, inputs, dynamic_shapes) in cases.items():
        exported = torch.export.export(module.eval(), inputs, dynamic_shapes=dynamic_shapes)
        edge = to_edge(exported).exported_program()
        result = ExecutorchOpenvinoBackend.preprocess(edge, openvino_compile_specs())
        blobs[name] = bytes(result.processed_bytes)
    return blobs


def split_blob(blob: bytes) -> Tuple[bytes, str, bytes]:
    """(header, IR XML text, IR weights) of a well-formed blob of the current format version."""
    xml_size, weights_size, _, _ = SIZES_AND_CHECKS.unpack_from(blob, XML_SIZE_OFFSET)
    offset = (HEADER_SIZE + xml_size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    return blob[:HEADER_SIZE], blob[HEADER_SIZE : HEADER_SIZE + xml_size].decode(), blob[offset : offset + weights_size]


def join_blob(header: bytes, xml, weights: bytes) -> bytes:
    """A blob with `header`'s magic, versions and facts, and sizes, checksum and digest that match `xml` and
    `weights`; the XML starts after `header`, whatever its size."""
    xml = xml.encode() if isinstance(xml, str) else bytes(xml)
    header = bytearray(header)
    SIZES_AND_CHECKS.pack_into(
        header, XML_SIZE_OFFSET, len(xml), len(weights), checksum(xml, weights), ir_digest(xml, weights)
    )
    offset = (len(header) + len(xml) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    return bytes(header) + xml + b"\0" * (offset - len(header) - len(xml)) + bytes(weights)


def as_version_2(blob: bytes) -> bytes:
    """The blob as a version-2 writer wrote it: no model facts, the XML right after 96 bytes."""
    header, xml, weights = split_blob(blob)
    old = bytearray(header[:HEADER_SIZE_V2])
    struct.pack_into("<II", old, 8, FORMAT_VERSION_V2, HEADER_SIZE_V2)
    return join_blob(bytes(old), xml, weights)


def with_model_facts(blob: bytes, facts: int) -> bytes:
    """The blob with its model facts word replaced (the checksum does not cover the header)."""
    changed = bytearray(blob)
    struct.pack_into("<I", changed, FACTS_OFFSET, facts)
    return bytes(changed)


def with_header_size(blob: bytes, header_size: int) -> bytes:
    changed = bytearray(blob)
    struct.pack_into("<I", changed, 12, header_size)
    return bytes(changed)


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, f"{old!r} is not in the seed IR"
    return text.replace(old, new, 1)


def crafted_blobs(seeds: Dict[str, bytes]) -> Dict[str, bytes]:
    """Blobs whose header is right and whose IR is not, named <expected outcome>_<what>.

    init_*: parse_blob accepts, init refuses; load_*: init accepts (OpenVINO reads
    the IR and compiles it).
    """
    header, xml, weights = split_blob(seeds["add_one"])
    const = 'offset="0" size="8"'
    dyn_header, dyn_xml, dyn_weights = split_blob(seeds["dynamic_gelu"])
    param_type = 'type="Parameter" version="opset1">\n\t\t\t<data shape="1..8,5" element_type="f32"'
    return {
        "init_const_offset_past_weights": join_blob(header, _replace(xml, const, 'offset="4096" size="8"'), weights),
        "init_const_size_overflow": join_blob(
            header, _replace(xml, const, 'offset="8" size="18446744073709551615"'), weights
        ),
        "init_weights_truncated": join_blob(header, xml, weights[:3]),
        "init_unknown_op": join_blob(header, _replace(xml, 'type="Add"', 'type="NoSuchOp"'), weights),
        "init_edge_cycle": join_blob(
            header,
            _replace(
                xml,
                '<edge from-layer="3" from-port="2" to-layer="4" to-port="0" />',
                '<edge from-layer="3" from-port="2" to-layer="0" to-port="0" />',
            ),
            weights,
        ),
        "init_not_xml": join_blob(header, "hello", b""),
        # OpenVINO cannot allocate this and throws std::bad_alloc (under AddressSanitizer
        # the allocation itself is reported: sanitize.sh leaves this one out).
        "init_bad_alloc_huge_shape": join_blob(
            header,
            re.sub(
                r"<dim>2</dim>(\s*)<dim>3</dim>",
                r"<dim>4294967295</dim>\1<dim>65536</dim>",
                _replace(xml, 'shape="2,3"', 'shape="4294967295,65536"'),
            ),
            weights,
        ),
        # The Parameter loses its element type (dynamic): OpenVINO compiles the model,
        # then create_infer_request throws, and leaks 1 byte (OpenVINO 2026.4.1).
        "init_dynamic_param_without_element_type": join_blob(
            dyn_header, _replace(dyn_xml, param_type, param_type.replace("element_type", "elemXnt_type")), dyn_weights
        ),
        # Format versions: a version-2 blob still loads (assumed to have FakeQuantize);
        # a model fact this runtime does not know, or a header of another version's
        # size, is refused before the IR is read.
        "load_v2_add_one": as_version_2(seeds["add_one"]),
        "load_v3_fake_quantize": seeds["fake_quantize"],
        "parse_v3_unknown_model_fact": with_model_facts(seeds["add_one"], 1 << 5),
        "parse_v3_header_size_of_v2": with_header_size(seeds["add_one"], HEADER_SIZE_V2),
        "load_empty_net": join_blob(
            header, '<?xml version="1.0"?><net name="m" version="11"><layers/><edges/></net>', b""
        ),
        # pugixml does not expand DTD entities: no blow-up.
        "load_xml_entities": join_blob(
            header,
            _replace(
                xml,
                '<?xml version="1.0"?>',
                '<?xml version="1.0"?><!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
                '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>',
            ),
            weights,
        ),
    }


def mutated_blobs(seeds: Dict[str, bytes], count: int, seed: int = 0) -> Dict[str, bytes]:
    """`count` blobs with 1-3 byte changes in a seed's IR XML, headers kept consistent."""
    rng = random.Random(seed)
    names = sorted(seeds)
    blobs = {}
    for index in range(count):
        header, xml, weights = split_blob(seeds[names[index % len(names)]])
        text = bytearray(xml.encode())
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            roll = rng.random()
            if roll < 0.5:
                text[at] = rng.choice(b"0123456789,-?.")
            elif roll < 0.8:
                text[at] ^= 1 << rng.randrange(8)
            else:
                del text[at]
        blobs[f"mutation_{index:05d}"] = join_blob(header, text, weights)
    return blobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--crafted", action="store_true")
    parser.add_argument("--mutations", type=int, default=0)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    seeds = seed_blobs()
    blobs = {f"seed_{name}": blob for name, blob in seeds.items()}
    if args.crafted:
        blobs.update(crafted_blobs(seeds))
    blobs.update(mutated_blobs(seeds, args.mutations))
    for name, blob in blobs.items():
        (args.folder / f"{name}.blob").write_bytes(blob)
    print(f"{len(blobs)} blobs written to {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
