#include "ir_cache.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include <executorch/runtime/platform/log.h>
#include <openvino/runtime/properties.hpp>

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::Result;
namespace fs = std::filesystem;

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

bool file_holds(const fs::path& path, const void* data, size_t size) {
  std::error_code error;
  if (fs::file_size(path, error) != size || error) {
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  std::array<char, 1 << 16> chunk;
  const auto* expected = static_cast<const char*>(data);
  for (size_t done = 0; done < size;) {
    const size_t count = std::min(chunk.size(), size - done);
    if (!file.read(chunk.data(), static_cast<std::streamsize>(count)) ||
        std::memcmp(chunk.data(), expected + done, count) != 0) {
      return false;
    }
    done += count;
  }
  return true;
}

// A name no other writer uses: this process's id and a per-process count.
fs::path temporary_next_to(const fs::path& target) {
  static std::atomic<unsigned long> count{0};
  fs::path temporary = target;
  temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(count++);
  return temporary;
}

// Writes `data` to `target` through a temporary file; when `later_than` is set,
// the file's modification time is pushed past it by at least a second.
bool write_file(const fs::path& target, const void* data, size_t size,
                const fs::file_time_type* later_than) {
  const fs::path temporary = temporary_next_to(target);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    file.close();
    if (!file) {
      ET_LOG(Error, "OpenVINO model cache: cannot write %s", temporary.c_str());
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return false;
    }
  }
  std::error_code error;
  if (later_than != nullptr) {
    const fs::file_time_type written = fs::last_write_time(temporary, error);
    const fs::file_time_type wanted = *later_than + std::chrono::seconds(1);
    if (!error && written < wanted) {
      fs::last_write_time(temporary, wanted, error);
    }
  }
  if (!error) {
    fs::rename(temporary, target, error);
  }
  if (error) {
    ET_LOG(Error, "OpenVINO model cache: cannot put %s in place: %s", target.c_str(), error.message().c_str());
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return false;
  }
  return true;
}

// OpenVINO's error is logged and an empty model returned: the caller compiles
// from memory, which reports the IR's own problems.
ov::CompiledModel compile_file(ov::Core& core, const IrFiles& files, const CompileSettings& options) {
  try {
    return core.compile_model(files.xml.string(), options.device, compile_config(options));
  } catch (const std::exception& e) {
    ET_LOG(Error, "OpenVINO model cache: OpenVINO cannot compile %s: %s", files.xml.c_str(), e.what());
    return {};
  }
}

}  // namespace

bool imported_from_cache(const ov::CompiledModel& compiled) noexcept {
  try {
    return compiled.get_property(ov::loaded_from_cache);
  } catch (const std::exception&) {
    return false;
  }
}

IrFiles ir_files_in(const std::string& cache_dir, const BlobView& blob) {
  const fs::path stem = fs::path(cache_dir) / ("etov-ir-" + hex(blob.ir_digest));
  IrFiles files{stem, stem};
  files.xml += ".xml";
  files.bin += ".bin";
  return files;
}

bool ir_files_match(const IrFiles& files, const BlobView& blob) {
  return file_holds(files.xml, blob.ir_xml.data(), blob.ir_xml.size()) &&
         file_holds(files.bin, blob.ir_weights, blob.ir_weights_size);
}

bool write_ir_files(const IrFiles& files, const BlobView& blob) {
  std::error_code error;
  fs::create_directories(files.xml.parent_path(), error);
  if (error) {
    ET_LOG(Error, "OpenVINO model cache: cannot create %s: %s", files.xml.parent_path().c_str(),
           error.message().c_str());
    return false;
  }
  const fs::file_time_type old_xml_time = fs::last_write_time(files.xml, error);
  const bool replacing = !error;
  // The weights go first: a reader that finds the XML finds its weights too.
  return write_file(files.bin, blob.ir_weights, blob.ir_weights_size, nullptr) &&
         write_file(files.xml, blob.ir_xml.data(), blob.ir_xml.size(), replacing ? &old_xml_time : nullptr);
}

Result<ov::CompiledModel> compile_through_ir_files(ov::Core& core, const BlobView& blob,
                                                   const CompileSettings& options) {
  const IrFiles files = ir_files_in(options.cache_dir, blob);
  std::error_code error;
  const bool found = fs::exists(files.xml, error) && fs::exists(files.bin, error);
  if (!found) {
    // The IR is about to be copied out: it must be the IR that was exported.
    ET_CHECK_OK_OR_RETURN_ERROR(verify_checksum(blob));
    if (!write_ir_files(files, blob)) {
      return Error::AccessFailed;
    }
    return compile_file(core, files, options);
  }
  ov::CompiledModel compiled = compile_file(core, files, options);
  if (compiled && imported_from_cache(compiled)) {
    return compiled;
  }
  // OpenVINO read the files themselves: they must hold this program's IR.
  ET_CHECK_OK_OR_RETURN_ERROR(verify_checksum(blob));
  if (ir_files_match(files, blob)) {
    return compiled;
  }
  ET_LOG(Error, "OpenVINO model cache: %s does not hold this program's IR; writing it again",
         files.xml.c_str());
  if (!write_ir_files(files, blob)) {
    return Error::AccessFailed;
  }
  return compile_file(core, files, options);
}

}  // namespace executorch_openvino
