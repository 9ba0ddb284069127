#include "openvino_error.h"

#include <algorithm>

#include <executorch/runtime/platform/log.h>

namespace executorch_openvino {
namespace {

// Below ExecuTorch's log buffer (256 bytes in 1.5.1) with room for the line's prefix.
constexpr size_t kLogChunk = 200;

bool is_location_line(const std::string& line) {
  return line.rfind("Exception from ", 0) == 0 && !line.empty() && line.back() == ':';
}

}  // namespace

std::string openvino_reason(const std::exception& error) {
  const std::string text = error.what();
  std::string reason;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && !is_location_line(line)) {
      reason += (reason.empty() ? "" : " ") + line;
    }
    start = end + 1;
  }
  return reason.empty() ? text : reason;
}

void log_openvino_error(const std::string& context, const std::exception& error) {
  const std::string message = context + ": " + openvino_reason(error);
  for (size_t offset = 0; offset < message.size(); offset += kLogChunk) {
    const size_t length = std::min(kLogChunk, message.size() - offset);
    ET_LOG(Error, "%s%.*s", offset == 0 ? "" : "... ", static_cast<int>(length), message.data() + offset);
  }
}

}  // namespace executorch_openvino
