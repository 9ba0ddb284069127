#include "cache_file_names.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <system_error>

#include <openvino/core/version.hpp>

namespace executorch_openvino {

namespace {

std::string hex(const std::array<uint8_t, kBlobDigestSize>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * digest.size());
  for (const uint8_t byte : digest) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 0xf]);
  }
  return text;
}

// OpenVINO's build as part of a file name: the IR a derived model is serialized to
// comes from OpenVINO's own transformations and serializer, which change by release.
std::string openvino_build_tag() {
  std::string build = ov::get_openvino_version().buildNumber;
  for (char& c : build) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      c = '_';
    }
  }
  return "ov" + build;
}

}  // namespace

std::string ir_file_stem(const std::array<uint8_t, kBlobDigestSize>& digest, std::string_view variant) {
  std::string stem = std::string(kIrFilePrefix) + hex(digest);
  if (!variant.empty()) {
    stem += '-';
    stem += variant;
  }
  return stem;
}

// What makes a derived model's bytes is in its variant (the dimension fixed,
// OpenVINO's build), so that loads that would write other bytes never share the
// files. A new way of making a derived model needs a new name: "v2" fixes the
// tokens' length without SmartReshape (OneTokenModel::fix_tokens_at_one).
std::string one_token_variant(size_t tokens_input, size_t tokens_dim, bool paged_attention) {
  return "one-token-v2-" + std::to_string(tokens_input) + "-" + std::to_string(tokens_dim) +
         (paged_attention ? "-paged-attention-" : "-") + openvino_build_tag();
}

std::string paged_attention_variant() {
  return "paged-attention-" + openvino_build_tag();
}

std::string temporary_suffix(pid_t pid, uint64_t instance, unsigned long count) {
  char unique[64];
  std::snprintf(unique, sizeof(unique), "%d-%016llx-%lu", static_cast<int>(pid),
                static_cast<unsigned long long>(instance), count);
  return std::string(kTemporaryMarker) + unique;
}

std::optional<pid_t> writer_of_temporary(std::string_view name) {
  const size_t marker = name.rfind(kTemporaryMarker);
  if (name.substr(0, kIrFilePrefix.size()) != kIrFilePrefix || marker == std::string_view::npos) {
    return std::nullopt;
  }
  const char* digits = name.data() + marker + kTemporaryMarker.size();
  pid_t pid = 0;
  const auto [after, problem] = std::from_chars(digits, name.data() + name.size(), pid);
  if (problem != std::errc() || after == digits || after == name.data() + name.size() || *after != '-' || pid <= 0) {
    return std::nullopt;
  }
  return pid;
}

}  // namespace executorch_openvino
