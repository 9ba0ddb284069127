#include "ir_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

#include <executorch/runtime/platform/log.h>
#include <openvino/core/graph_util.hpp>
#include <openvino/runtime/properties.hpp>

#include "cache_file_names.h"
#include "openvino_error.h"

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::Result;
namespace fs = std::filesystem;

namespace {

// The paths of one IR in a cache directory.
struct IrFiles {
  fs::path xml;
  fs::path bin;
};

// Where the IR files of `blob` (which has a digest) are in `cache_dir`: those of
// the IR itself, or with a `variant`, of a model derived from it.
IrFiles ir_files_in(const std::string& cache_dir, const BlobView& blob, std::string_view variant) {
  const fs::path stem = fs::path(cache_dir) / ir_file_stem(blob.ir_digest, variant);
  IrFiles files{stem, stem};
  files.xml += ".xml";
  files.bin += ".bin";
  return files;
}

// Whether the file at `path` has `size` bytes, each chunk of which `matches(chunk,
// offset, count)` accepts, read in order.
template <typename Matches>
bool file_reads_as(const fs::path& path, uintmax_t size, Matches matches) {
  std::error_code error;
  if (fs::file_size(path, error) != size || error) {
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  std::array<char, 1 << 16> chunk;
  for (uintmax_t done = 0; done < size;) {
    const size_t count = static_cast<size_t>(std::min<uintmax_t>(chunk.size(), size - done));
    if (!file.read(chunk.data(), static_cast<std::streamsize>(count)) || !matches(chunk.data(), done, count)) {
      return false;
    }
    done += count;
  }
  return true;
}

bool file_holds(const fs::path& path, const void* data, size_t size) {
  const auto* expected = static_cast<const char*>(data);
  return file_reads_as(path, size, [expected](const char* chunk, uintmax_t offset, size_t count) {
    return std::memcmp(chunk, expected + offset, count) == 0;
  });
}

bool files_hold_the_same(const fs::path& one, const fs::path& other) {
  std::error_code error;
  const uintmax_t size = fs::file_size(other, error);
  if (error) {
    return false;
  }
  std::ifstream second(other, std::ios::binary);
  std::array<char, 1 << 16> expected;
  return file_reads_as(one, size, [&](const char* chunk, uintmax_t, size_t count) {
    return second.read(expected.data(), static_cast<std::streamsize>(count)) &&
           std::memcmp(chunk, expected.data(), count) == 0;
  });
}

// A number that tells this process's temporary files from those of a process
// with the same pid in another PID namespace sharing the folder (two containers,
// each its own pid 1).
uint64_t process_instance() {
  static const uint64_t instance = [] {
    try {
      std::random_device device;
      return (static_cast<uint64_t>(device()) << 32) ^ device();
    } catch (const std::exception&) {  // no entropy source: the clock still tells processes apart
      return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
  }();
  return instance;
}

// Creates `path` if no file has that name; otherwise, or when it cannot be made,
// the errno of the failure.
int claim(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return errno;
  }
  ::close(fd);
  return 0;
}

// A new, empty file next to `target` that no other writer uses: named by this
// process's id, its instance and a per-process count, before the extension
// (OpenVINO writes IR only to a path ending in .xml), and created exclusively.
// Empty, after a log line, when none could be made.
fs::path temporary_next_to(const fs::path& target) {
  static std::atomic<unsigned long> count{0};
  int problem = EEXIST;
  for (int attempt = 0; attempt < 8 && problem == EEXIST; ++attempt) {
    fs::path temporary = target.parent_path() / target.stem();
    temporary += temporary_suffix(::getpid(), process_instance(), count++);
    temporary += target.extension();
    problem = claim(temporary);
    if (problem == 0) {
      return temporary;
    }
  }
  ET_LOG(Error, "OpenVINO model cache: cannot write %s: no temporary file next to it (%s)", target.c_str(),
         std::strerror(problem));
  return {};
}

// A temporary file is abandoned when its writer is gone (it crashed or was killed
// before renaming it) and the file has not changed for a minute: a writer in
// another PID namespace sharing the folder may have a pid that is free here, but
// it writes or renames its file within seconds.
bool is_abandoned(const fs::directory_entry& entry, pid_t writer) {
  if (writer == ::getpid() || (::kill(writer, 0) == 0 || errno != ESRCH)) {
    return false;
  }
  std::error_code error;
  const fs::file_time_type written = entry.last_write_time(error);
  return !error && fs::file_time_type::clock::now() - written > std::chrono::minutes(1);
}

// Removes the temporary files (weights-sized) that writers which died before
// renaming them left in `cache_dir`; nothing else there is touched.
void remove_abandoned_temporaries(const std::string& cache_dir) {
  std::error_code error;
  for (fs::directory_iterator it(cache_dir, error), end; !error && it != end; it.increment(error)) {
    const std::optional<pid_t> writer = writer_of_temporary(it->path().filename().native());
    if (writer && is_abandoned(*it, *writer)) {
      std::error_code ignored;
      if (fs::remove(it->path(), ignored)) {
        // Debug: this happens in a load that succeeds, which logs nothing (see init in OpenvinoBackend.cpp).
        ET_LOG(Debug, "OpenVINO model cache: removed %s, left by process %d, which is gone", it->path().c_str(),
               static_cast<int>(*writer));
      }
    }
  }
}

// Renames a written `temporary` file to `target`; when `later_than` is set, the
// file's modification time is pushed past it by at least a second first. The
// temporary file is gone either way.
bool put_in_place(const fs::path& temporary, const fs::path& target, const fs::file_time_type* later_than) {
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

// Writes `data` to `target` through a temporary file (see put_in_place).
bool write_file(const fs::path& target, const void* data, size_t size, const fs::file_time_type* later_than) {
  const fs::path temporary = temporary_next_to(target);
  if (temporary.empty()) {
    return false;
  }
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
  return put_in_place(temporary, target, later_than);
}

// OpenVINO's error is logged and an empty model returned: the caller compiles
// from memory, which reports the IR's own problems.
ov::CompiledModel compile_file(ov::Core& core, const IrFiles& files, const CompileSettings& options) {
  try {
    return core.compile_model(files.xml.string(), options.device, compile_config(options));
  } catch (const std::exception& e) {
    log_openvino_error("OpenVINO model cache: OpenVINO cannot compile " + files.xml.string(), e);
    return {};
  }
}

bool ir_files_hold(const IrFiles& files, const BlobView& blob) {
  return file_holds(files.xml, blob.ir_xml.data(), blob.ir_xml.size()) &&
         file_holds(files.bin, blob.ir_weights, blob.ir_weights_size);
}

// Whether `name` looks like the name OpenVINO gives a node that has none of its own
// (Constant_1778): a word, an underscore and a number.
bool is_automatic_name(const std::string& name) {
  const size_t underscore = name.find('_');
  if (underscore == 0 || underscore == std::string::npos || underscore + 1 == name.size()) {
    return false;
  }
  const auto is_letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  return std::all_of(name.begin(), name.begin() + underscore, is_letter) &&
         std::all_of(name.begin() + underscore + 1, name.end(), is_digit);
}

// OpenVINO numbers the names of nodes made without one (by reshaping, folding) from
// a count that runs through the process, so the same derived model would serialize
// differently at every load. Those names are replaced by the node's place in the
// model, which the same IR always gives.
void name_by_place(ov::Model& model) {
  size_t place = 0;
  for (const std::shared_ptr<ov::Node>& node : model.get_ordered_ops()) {
    const std::string name = node->get_friendly_name();
    if (is_automatic_name(name)) {
      node->set_friendly_name(name.substr(0, name.find('_')) + "_at_" + std::to_string(place));
    }
    ++place;
  }
}

// Begins replacing the IR files whose XML is `xml`: removes it, and returns its
// modification time (nullopt when there was none), which the new XML must pass.
// OpenVINO keys a path on the XML's size and time in whole seconds, so an entry
// compiled from the old files stops matching; and a rewrite that stops halfway
// leaves no XML beside weights it does not belong to.
std::optional<fs::file_time_type> remove_old_xml(const fs::path& xml) {
  std::error_code error;
  const fs::file_time_type time = fs::last_write_time(xml, error);
  if (error) {
    return std::nullopt;
  }
  fs::remove(xml, error);
  return time;
}

// Writes the blob's IR to `files`, each through a temporary file and a rename, so
// that a reader never sees half a file; false, after a log line, when they cannot
// be written. A replaced XML is removed first and comes back with a later
// modification time (remove_old_xml).
bool write_ir_files(const IrFiles& files, const VerifiedIr& ir) {
  const BlobView& blob = ir.blob();
  const std::optional<fs::file_time_type> old_xml_time = remove_old_xml(files.xml);
  // The weights go first: a reader that finds the XML finds its weights too.
  return write_file(files.bin, blob.ir_weights, blob.ir_weights_size, nullptr) &&
         write_file(files.xml, blob.ir_xml.data(), blob.ir_xml.size(), old_xml_time ? &*old_xml_time : nullptr);
}

// Temporary files next to `files` that no other writer uses (temporary_next_to),
// removed when this goes: a derived model is serialized into them, then they are
// compared with `files` or renamed to them.
class TemporaryIrFiles {
 public:
  explicit TemporaryIrFiles(const IrFiles& files)
      : paths_{temporary_next_to(files.xml), temporary_next_to(files.bin)} {}
  TemporaryIrFiles(const TemporaryIrFiles&) = delete;
  TemporaryIrFiles& operator=(const TemporaryIrFiles&) = delete;
  // Once renamed into place, a path names no file, and removing it does nothing.
  ~TemporaryIrFiles() {
    std::error_code ignored;
    fs::remove(paths_.xml, ignored);
    fs::remove(paths_.bin, ignored);
  }

  bool made() const { return !paths_.xml.empty() && !paths_.bin.empty(); }
  const IrFiles& paths() const { return paths_; }

 private:
  IrFiles paths_;
};

// The outcome of a load whose IR files hold the verified IR (or what it derives
// to) and that OpenVINO compiled into `compiled` (empty when it could not).
CacheLoad compiled_from_files(ov::CompiledModel compiled) {
  CacheLoad load;
  load.outcome = compiled ? CacheLoad::Outcome::kCompiled : CacheLoad::Outcome::kNotCompiled;
  load.compiled = std::move(compiled);
  return load;
}

CacheLoad cache_unusable() {
  CacheLoad load;
  load.outcome = CacheLoad::Outcome::kCacheUnusable;
  return load;
}

// The blob's IR itself: `files` (`found` holds what OpenVINO compiled from them, when
// they were there) must hold its bytes; written again when they do not.
CacheLoad load_blob_ir(ov::Core& core, const IrFiles& files, std::optional<ov::CompiledModel> found,
                       const VerifiedIr& ir, const CompileSettings& options) {
  if (found && ir_files_hold(files, ir.blob())) {
    return compiled_from_files(std::move(*found));
  }
  if (found) {
    ET_LOG(Error, "OpenVINO model cache: %s does not hold this program's IR; writing it again", files.xml.c_str());
  }
  if (!write_ir_files(files, ir)) {
    return cache_unusable();
  }
  return compiled_from_files(compile_file(core, files, options));
}

// A model derived from the blob's IR: `files` (`found` as in load_blob_ir) must hold
// what `derive` makes of the verified IR, serialized next to them, then compared
// with them or put in their place.
Result<CacheLoad> load_derived_ir(ov::Core& core, const IrFiles& files, std::optional<ov::CompiledModel> found,
                                  const VerifiedIr& ir, const CompileSettings& options, const DeriveModel& derive) {
  const TemporaryIrFiles written(files);
  if (!written.made()) {
    return cache_unusable();
  }
  Result<std::shared_ptr<ov::Model>> model = derive(ir);
  if (!model.ok()) {
    return model.error();
  }
  try {
    name_by_place(**model);
    ov::serialize(*model, written.paths().xml.string(), written.paths().bin.string());
  } catch (const std::exception& e) {
    log_openvino_error("OpenVINO model cache: cannot write " + files.xml.string(), e);
    return cache_unusable();
  }
  if (found && files_hold_the_same(written.paths().xml, files.xml) &&
      files_hold_the_same(written.paths().bin, files.bin)) {
    return compiled_from_files(std::move(*found));
  }
  if (found) {
    ET_LOG(Error, "OpenVINO model cache: %s does not hold the model derived from this program's IR; writing it again",
           files.xml.c_str());
  }
  const std::optional<fs::file_time_type> old_xml_time = remove_old_xml(files.xml);
  // The weights go first, as in write_ir_files.
  if (!put_in_place(written.paths().bin, files.bin, nullptr) ||
      !put_in_place(written.paths().xml, files.xml, old_xml_time ? &*old_xml_time : nullptr)) {
    return cache_unusable();
  }
  return compiled_from_files(compile_file(core, files, options));
}

// Creates `cache_dir` when it is not there; false, after a log line, when it cannot be.
bool make_folder(const std::string& cache_dir) {
  std::error_code error;
  fs::create_directories(cache_dir, error);
  if (error) {
    ET_LOG(Error, "OpenVINO model cache: cannot create %s: %s", cache_dir.c_str(), error.message().c_str());
    return false;
  }
  return true;
}

}  // namespace

bool imported_from_cache(const ov::CompiledModel& compiled) noexcept {
  try {
    return compiled.get_property(ov::loaded_from_cache);
  } catch (const std::exception&) {
    return false;
  }
}

Result<CacheLoad> load_through_model_cache(ov::Core& core, BlobIr& blob_ir, const CompileSettings& options,
                                           const IrForm& form) {
  remove_abandoned_temporaries(options.cache_dir);
  const IrFiles files = ir_files_in(options.cache_dir, blob_ir.blob(), form.variant);
  std::error_code error;
  std::optional<ov::CompiledModel> found;
  if (fs::exists(files.xml, error) && fs::exists(files.bin, error)) {
    found = compile_file(core, files, options);
    if (*found && imported_from_cache(*found)) {
      return compiled_from_files(std::move(*found));  // OpenVINO read no IR: nothing to verify
    }
  }
  // OpenVINO compiled the files, or they are about to be written: the IR must be
  // the one that was exported, and the files must hold it (or what it derives to).
  Result<VerifiedIr> ir = blob_ir.verified();
  if (!ir.ok()) {
    return ir.error();
  }
  if (!found && !make_folder(options.cache_dir)) {
    return cache_unusable();
  }
  if (form.variant.empty()) {
    return load_blob_ir(core, files, std::move(found), *ir, options);
  }
  return load_derived_ir(core, files, std::move(found), *ir, options, form.derive);
}

}  // namespace executorch_openvino
