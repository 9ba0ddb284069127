#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <executorch/runtime/core/result.h>

#include "blob_format.h"

namespace executorch_openvino {

/// Views into a processed blob; they point into the buffer that was parsed and
/// are valid only while it lives.
struct BlobView {
  uint32_t format_version = 0;
  std::string_view writer_openvino_version;
  std::string_view ir_xml;
  const uint8_t* ir_weights = nullptr;
  size_t ir_weights_size = 0;
  uint32_t stored_checksum = 0;
  std::array<uint8_t, kBlobDigestSize> ir_digest{};  // all zero: the writer recorded none
  // kBlobFact* bits; for a version-2 blob, which has none, kBlobFactsAssumedForV2.
  uint32_t model_facts = 0;

  bool has_ir_digest() const;
  bool has_fake_quantize() const { return (model_facts & kBlobFactFakeQuantize) != 0; }
  bool has_named_weights() const { return (model_facts & kBlobFactNamedWeights) != 0; }
};

/// Parses and validates a blob (see blob_format.h), checksum included. Never
/// reads past `size`; on a bad blob returns InvalidArgument (or
/// DelegateInvalidCompatibility for a format version this runtime does not know)
/// after logging what is wrong.
executorch::runtime::Result<BlobView> parse_blob(const void* data, size_t size);

/// parse_blob without the checksum, which reads every byte of the IR: for a load
/// that may not need the IR at all (a model cache hit). Verify it (VerifiedIr)
/// before the IR's bytes are used.
executorch::runtime::Result<BlobView> parse_blob_header(const void* data, size_t size);

/// A blob whose IR matched its stored checksum. The runtime compiles or writes out
/// an IR only through one of these, so an IR that was not verified can never
/// become a model; a model cache hit reads no IR and needs none.
class VerifiedIr {
 public:
  /// InvalidArgument, with a log line, when the IR does not match the checksum.
  static executorch::runtime::Result<VerifiedIr> verify(const BlobView& blob);

  const BlobView& blob() const { return blob_; }

 private:
  explicit VerifiedIr(const BlobView& blob) : blob_(blob) {}
  BlobView blob_;
};

/// A blob's IR, verified at most once however many models a load compiles from it
/// (the model of one token after the IR itself): the checksum reads every byte.
class BlobIr {
 public:
  explicit BlobIr(const BlobView& blob) : blob_(blob) {}

  const BlobView& blob() const { return blob_; }

  /// VerifiedIr::verify(blob()) at the first call, the same result after it.
  executorch::runtime::Result<VerifiedIr> verified();

 private:
  BlobView blob_;
  std::optional<VerifiedIr> verified_;
  executorch::runtime::Error refused_ = executorch::runtime::Error::Ok;  // the error of a failed verification
};

}  // namespace executorch_openvino
