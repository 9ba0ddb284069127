/*
 * A program's IR as files in the model cache directory.
 *
 * OpenVINO's model cache keys a model given as a buffer on a hash of all its
 * weights, which costs about 3 ms per 16 MB at every load. A model given as a
 * file path is keyed on the path alone (and the XML file's size and
 * modification time), and a cache hit reads neither the XML nor the weights. So
 * the first load with a cache_dir writes the blob's IR there, named by the IR
 * digest the exporter stored in the blob (etov-ir-<digest>.xml and .bin), and
 * every load compiles that path: a hit costs OpenVINO's import alone.
 *
 * OpenVINO compiles from the files on a miss of its own cache (another precision,
 * a new OpenVINO release, a deleted cache entry). The files are then compared
 * with the blob, and written again if they differ, so damaged files never
 * become a model.
 */
#pragma once

#include <filesystem>

#include <executorch/runtime/core/result.h>
#include <openvino/runtime/core.hpp>

#include "blob_reader.h"
#include "options.h"

namespace executorch_openvino {

/// Whether OpenVINO imported `compiled` from its model cache; false where the
/// device cannot tell.
bool imported_from_cache(const ov::CompiledModel& compiled) noexcept;

/// The paths of one IR in a cache directory.
struct IrFiles {
  std::filesystem::path xml;
  std::filesystem::path bin;
};

/// Where the IR of `blob` (which has a digest) lives in `cache_dir`.
IrFiles ir_files_in(const std::string& cache_dir, const BlobView& blob);

/// Whether both files hold exactly the blob's IR.
bool ir_files_match(const IrFiles& files, const BlobView& blob);

/// Writes the blob's IR to `files`, each through a temporary file and a rename,
/// so that a reader never sees half a file. Returns false, after a log line, when
/// the directory cannot be written. A replaced XML gets a modification time at
/// least a second later than the old one: OpenVINO's cache entries record it in
/// whole seconds, and an entry compiled from the old files must stop matching.
bool write_ir_files(const IrFiles& files, const BlobView& blob);

/// Compiles `blob` through its IR files in options.cache_dir (options.cache_dir
/// set, blob.has_ir_digest()). After a log line, returns:
///   - an empty CompiledModel when OpenVINO cannot compile the files: the caller
///     compiles from memory, which reports the IR's own problems;
///   - AccessFailed when the folder cannot be created or written: the caller
///     loads without the cache;
///   - InvalidArgument when the IR had to be read and its checksum does not match.
executorch::runtime::Result<ov::CompiledModel> compile_through_ir_files(ov::Core& core,
                                                                        const BlobView& blob,
                                                                        const CompileSettings& options);

}  // namespace executorch_openvino
