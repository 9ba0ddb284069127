#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <executorch/runtime/core/result.h>

namespace executorch_openvino {

/// Views into a processed blob; they point into the buffer that was parsed and
/// are valid only while it lives.
struct BlobView {
  uint32_t format_version = 0;
  std::string_view writer_openvino_version;
  std::string_view ir_xml;
  const uint8_t* ir_weights = nullptr;
  size_t ir_weights_size = 0;
};

/// Parses and validates a blob (see blob_format.h). Never reads past `size`;
/// on a bad blob returns InvalidArgument (or DelegateInvalidCompatibility for a
/// format version this runtime does not know) after logging what is wrong.
executorch::runtime::Result<BlobView> parse_blob(const void* data, size_t size);

}  // namespace executorch_openvino
