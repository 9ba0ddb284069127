/*
 * The processed blob that preprocess (serialization/blob.py) writes and init (blob_reader.cpp)
 * reads. This comment is the one description of the format; serialization/blob.py follows it.
 *
 *   offset  size  field
 *        0     8  magic "ETOVBLOB"
 *        8     4  format version, uint32 little-endian (kBlobFormatVersion)
 *       12     4  header size in bytes, uint32 LE (kBlobHeaderSize for version 3,
 *                 kBlobHeaderSizeV2 for version 2)
 *       16    48  OpenVINO version that wrote the blob, ASCII, NUL-padded
 *       64     8  IR XML size, uint64 LE
 *       72     8  IR weights size, uint64 LE
 *       80     4  CRC-32 (IEEE, as zlib.crc32) of the IR XML followed by the IR
 *                 weights, uint32 LE: a damaged program fails to load instead of
 *                 computing with damaged weights
 *       84    12  IR digest: the first 12 bytes of BLAKE2b (Python's
 *                 hashlib.blake2b) of the IR XML followed by the IR weights, or
 *                 all zero when the writer recorded none. It names the IR's files
 *                 in the model cache (ir_cache.h), so that a cached load needs
 *                 neither the weights nor the checksum. The checksum does not
 *                 cover it: a damaged digest only misses the cache.
 *       96     4  model facts, uint32 LE, a set of kBlobFact* bits: what the
 *                 runtime needs to know about the IR, found by the writer on the
 *                 model rather than by the runtime in the XML text. Every other
 *                 bit is zero; a reader refuses a blob with a bit it does not know.
 *      100     4  reserved, zero; readers ignore it
 *      104        IR XML text (not NUL-terminated)
 *                 padding to a multiple of kBlobAlignment from the blob start
 *                 IR weights (the .bin of the IR)
 *
 * The blob carries OpenVINO's IR, not a compiled model: a compiled model is tied
 * to the exact OpenVINO build and CPU instruction set that exported it, while the
 * IR compiles on every release and CPU we support. OpenVINO's model cache
 * (cache_dir) makes later loads fast.
 *
 * A reader refuses a version it does not know, checks every size against the
 * buffer before touching the bytes it describes, and checks the CRC.
 *
 * Version history: 1 had no CRC (bytes 80-95 reserved); 2 adds it. The digest
 * went into version 2's reserved bytes, which every version-2 reader ignored, so
 * it needed no new version: older blobs carry zeros there. 3 adds the model facts
 * (and a reserved word), after which the XML starts: a version-2 reader would
 * have read them as XML, so they needed a new version. Version-2 blobs still
 * load; they carry no facts, and the runtime assumes the ones that keep results
 * right (kBlobFactsAssumedForV2).
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch_openvino {

inline constexpr char kBlobMagic[8] = {'E', 'T', 'O', 'V', 'B', 'L', 'O', 'B'};
inline constexpr uint32_t kBlobFormatVersion = 3;
inline constexpr uint32_t kBlobHeaderSize = 104;
// Version 2, which readers still load: the header ends before the model facts.
inline constexpr uint32_t kBlobFormatVersionV2 = 2;
inline constexpr uint32_t kBlobHeaderSizeV2 = 96;
inline constexpr size_t kBlobVersionFieldSize = 48;
inline constexpr size_t kBlobAlignment = 64;
inline constexpr size_t kBlobDigestSize = 12;
// Where each header field starts (the table above); serialization/blob.py has the same names.
inline constexpr size_t kBlobWriterVersionOffset = 16;
inline constexpr size_t kBlobXmlSizeOffset = 64;
inline constexpr size_t kBlobWeightsSizeOffset = 72;
inline constexpr size_t kBlobChecksumOffset = 80;
inline constexpr size_t kBlobDigestOffset = 84;
inline constexpr size_t kBlobFactsOffset = 96;

// The model facts (bits of the word at kBlobFactsOffset).
// The IR has FakeQuantize operations: quantized layers, which OpenVINO's CPU plugin
// runs on its 8-bit kernels (quantized_layers.h).
inline constexpr uint32_t kBlobFactFakeQuantize = 1u << 0;
// Some of the IR's weights are Parameters named kNamedWeightName (backend.h), whose
// bytes are in the program's named data (named_weights.h).
inline constexpr uint32_t kBlobFactNamedWeights = 1u << 1;
inline constexpr uint32_t kBlobKnownFacts = kBlobFactFakeQuantize | kBlobFactNamedWeights;
// A version-2 blob may have FakeQuantize operations; assuming it does costs nothing on
// CPUs with VNNI or AMX, and keeps the quantized model's values on the others.
inline constexpr uint32_t kBlobFactsAssumedForV2 = kBlobFactFakeQuantize;

}  // namespace executorch_openvino
