/*
 * The names of the files in a model cache folder (the cache_dir load option):
 * the IR files the runtime writes (etov-ir-<digest>[-<variant>].xml and .bin,
 * through temporary files named etov-ir-...tmp-<pid>-<instance>-<n>.xml) and
 * the compiled models OpenVINO writes beside them (<hash>.blob).
 *
 * The folder may be one the user also keeps other files in (their project, a
 * home directory holding a virtual environment), so whatever the runtime does to
 * files there (removing abandoned temporaries, dropping the resident pages of
 * mapped files) is limited to files named as below.
 */
#pragma once

#include <string_view>

namespace executorch_openvino {

/// Every file the runtime writes in a cache folder starts with this.
inline constexpr std::string_view kIrFilePrefix = "etov-ir-";
/// What a file's name holds, between its stem and its writer's pid, while it is written.
inline constexpr std::string_view kTemporaryMarker = ".tmp-";
/// How OpenVINO's compiled models in a cache folder end.
inline constexpr std::string_view kCompiledModelSuffix = ".blob";

/// Whether `name` (a file name, no folder) is one the runtime or OpenVINO's model
/// cache writes.
inline bool is_cache_file_name(std::string_view name) {
  const bool ours = name.substr(0, kIrFilePrefix.size()) == kIrFilePrefix;
  const bool openvinos = name.size() > kCompiledModelSuffix.size() &&
                         name.substr(name.size() - kCompiledModelSuffix.size()) == kCompiledModelSuffix;
  return ours || openvinos;
}

}  // namespace executorch_openvino
