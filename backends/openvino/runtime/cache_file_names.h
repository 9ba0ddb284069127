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

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "blob_format.h"

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

/// The name, without folder or extension, of the IR files of the IR whose digest is
/// `digest`: etov-ir-<digest in hex>; with a `variant`, of a model the runtime
/// derives from that IR: etov-ir-<digest in hex>-<variant>.
std::string ir_file_stem(const std::array<uint8_t, kBlobDigestSize>& digest, std::string_view variant = {});

/// The variant of the model of one token (one_token_model.h): the size of dimension
/// `tokens_dim` of input `tokens_input` fixed at 1; in PagedAttention form with
/// `paged_attention`.
std::string one_token_variant(size_t tokens_input, size_t tokens_dim, bool paged_attention);

/// The variant of the IR in PagedAttention form (paged_attention.h).
std::string paged_attention_variant();

/// What follows a file's stem while a writer, process `pid` of instance `instance`
/// (a number that tells processes of the same pid in other PID namespaces apart),
/// writes it: kTemporaryMarker, then the pid, the instance and the writer's
/// `count`-th temporary file.
std::string temporary_suffix(pid_t pid, uint64_t instance, unsigned long count);

/// The pid of the process that writes `name` (a file name, no folder) as a
/// temporary file (temporary_suffix), or nullopt when `name` is not one of ours.
std::optional<pid_t> writer_of_temporary(std::string_view name);

}  // namespace executorch_openvino
