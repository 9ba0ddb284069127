#include "blob_reader.h"

#include <cstring>

#include <executorch/runtime/platform/log.h>

#include "blob_format.h"
#include "crc32.h"

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::Result;

namespace {

template <typename T>
T read_le(const uint8_t* p) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(p[i]) << (8 * i);
  }
  return value;
}

// Rounds up without overflow; returns false when the result does not fit.
bool align_up(uint64_t value, uint64_t alignment, uint64_t* out) {
  const uint64_t rem = value % alignment;
  if (rem == 0) {
    *out = value;
    return true;
  }
  const uint64_t pad = alignment - rem;
  if (value > UINT64_MAX - pad) {
    return false;
  }
  *out = value + pad;
  return true;
}

}  // namespace

bool BlobView::has_ir_digest() const {
  for (const uint8_t byte : ir_digest) {
    if (byte != 0) {
      return true;
    }
  }
  return false;
}

Result<BlobView> parse_blob(const void* data, size_t size) {
  Result<BlobView> view = parse_blob_header(data, size);
  if (view.ok()) {
    ET_CHECK_OK_OR_RETURN_ERROR(VerifiedIr::verify(*view).error());
  }
  return view;
}

Result<VerifiedIr> VerifiedIr::verify(const BlobView& blob) {
  const auto* xml = reinterpret_cast<const uint8_t*>(blob.ir_xml.data());
  const uint32_t crc = crc32(blob.ir_weights, blob.ir_weights_size, crc32(xml, blob.ir_xml.size()));
  if (crc != blob.stored_checksum) {
    ET_LOG(Error, "OpenVINO blob: checksum %08x does not match the stored %08x; the program is damaged", crc,
           blob.stored_checksum);
    return Error::InvalidArgument;
  }
  return VerifiedIr(blob);
}

Result<VerifiedIr> BlobIr::verified() {
  if (!verified_ && refused_ == Error::Ok) {
    Result<VerifiedIr> ir = VerifiedIr::verify(blob_);
    if (ir.ok()) {
      verified_ = *ir;
    } else {
      refused_ = ir.error();
    }
  }
  if (verified_) {
    return *verified_;
  }
  return refused_;
}

Result<BlobView> parse_blob_header(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (bytes == nullptr || size < 16) {
    ET_LOG(Error, "OpenVINO blob: %zu bytes is too short for a header", size);
    return Error::InvalidArgument;
  }
  if (std::memcmp(bytes, kBlobMagic, sizeof(kBlobMagic)) != 0) {
    ET_LOG(Error, "OpenVINO blob: bad magic, this is not a blob written by executorch_openvino");
    return Error::InvalidArgument;
  }
  BlobView view;
  view.format_version = read_le<uint32_t>(bytes + 8);
  if (view.format_version != kBlobFormatVersion && view.format_version != kBlobFormatVersionV2) {
    ET_LOG(Error,
           "OpenVINO blob: format version %u is not supported by this runtime (it reads versions %u and %u); "
           "export the program again or update executorch_openvino",
           view.format_version, kBlobFormatVersionV2, kBlobFormatVersion);
    return Error::DelegateInvalidCompatibility;
  }
  const uint32_t expected_header_size =
      view.format_version == kBlobFormatVersionV2 ? kBlobHeaderSizeV2 : kBlobHeaderSize;
  const uint32_t header_size = read_le<uint32_t>(bytes + 12);
  if (size < expected_header_size) {
    ET_LOG(Error, "OpenVINO blob: %zu bytes is shorter than the %u-byte header", size, expected_header_size);
    return Error::InvalidArgument;
  }
  if (header_size != expected_header_size) {
    ET_LOG(Error, "OpenVINO blob: header size %u is not the %u bytes of format version %u", header_size,
           expected_header_size, view.format_version);
    return Error::InvalidArgument;
  }
  if (view.format_version == kBlobFormatVersionV2) {
    view.model_facts = kBlobFactsAssumedForV2;
  } else {
    view.model_facts = read_le<uint32_t>(bytes + kBlobFactsOffset);
    if ((view.model_facts & ~kBlobKnownFacts) != 0) {
      ET_LOG(Error,
             "OpenVINO blob: model facts 0x%08x hold bits this runtime does not know (it knows 0x%08x); "
             "update executorch_openvino",
             view.model_facts, kBlobKnownFacts);
      return Error::DelegateInvalidCompatibility;
    }
  }
  const char* version = reinterpret_cast<const char*>(bytes + kBlobWriterVersionOffset);
  view.writer_openvino_version = std::string_view(version, strnlen(version, kBlobVersionFieldSize));

  const uint64_t xml_size = read_le<uint64_t>(bytes + kBlobXmlSizeOffset);
  const uint64_t weights_size = read_le<uint64_t>(bytes + kBlobWeightsSizeOffset);
  const uint64_t available = size - header_size;
  if (xml_size == 0 || xml_size > available) {
    ET_LOG(Error, "OpenVINO blob: IR XML size %llu does not fit the %llu bytes after the header",
           static_cast<unsigned long long>(xml_size), static_cast<unsigned long long>(available));
    return Error::InvalidArgument;
  }
  uint64_t weights_offset = 0;
  if (!align_up(header_size + xml_size, kBlobAlignment, &weights_offset) || weights_offset > size ||
      weights_size > size - weights_offset) {
    ET_LOG(Error, "OpenVINO blob: IR weights (%llu bytes) do not fit a blob of %zu bytes",
           static_cast<unsigned long long>(weights_size), size);
    return Error::InvalidArgument;
  }
  view.ir_xml = std::string_view(reinterpret_cast<const char*>(bytes + header_size), xml_size);
  view.ir_weights = bytes + weights_offset;
  view.ir_weights_size = weights_size;
  view.stored_checksum = read_le<uint32_t>(bytes + kBlobChecksumOffset);
  std::memcpy(view.ir_digest.data(), bytes + kBlobDigestOffset, kBlobDigestSize);
  return view;
}

}  // namespace executorch_openvino
