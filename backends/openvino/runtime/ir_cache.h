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
 * A model the runtime derives from the IR (the model of one token) gets files of
 * its own in the same way, named by the digest and a variant.
 *
 * OpenVINO compiles from the files on a miss of its own cache (another precision,
 * a new OpenVINO release, a deleted cache entry). The files are then compared
 * with the verified IR (or what it derives to), and written again if they differ,
 * so damaged files never become a model. Whatever the outcome, the caller decides nothing about files:
 * it takes the compiled model, or compiles the verified IR from memory.
 */
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <executorch/runtime/core/result.h>
#include <openvino/runtime/core.hpp>

#include "blob_reader.h"
#include "options.h"

namespace executorch_openvino {

/// Whether OpenVINO imported `compiled` from its model cache; false where the
/// device cannot tell.
bool imported_from_cache(const ov::CompiledModel& compiled) noexcept;

/// The IR files of `blob` (which has a digest) in `cache_dir`, read as a model to
/// compile once more after a load through the cache. A load that OpenVINO served
/// from its cache read neither file, so they are compared with the blob first:
/// nullptr, after a log line, when they differ. Throws what OpenVINO throws.
std::shared_ptr<ov::Model> read_cached_ir(ov::Core& core, const std::string& cache_dir, const BlobView& blob);

/// Makes a model from the verified IR of a blob.
using DeriveModel = std::function<std::shared_ptr<ov::Model>(const VerifiedIr&)>;

/// Compiles a model the runtime derives from the blob's IR (such as the model of
/// one token) through IR files of its own in options.cache_dir (set, and
/// blob.has_ir_digest()): etov-ir-<digest>-<variant>.xml and .bin, so that a load
/// OpenVINO serves from its cache reads no IR. `derive` runs only when the files
/// are missing or OpenVINO compiled them rather than importing them: its model is
/// serialized next to them, then compared with them or put in their place, so
/// damaged files never become a model. A change to what `derive` makes must come
/// with a new `variant`: a cache hit never sees it. An empty model, after a log
/// line, when `derive` throws or the files cannot be written or compiled: compile
/// the derived model from memory then. InvalidArgument when the IR had to be read
/// and its checksum does not match.
executorch::runtime::Result<ov::CompiledModel> compile_derived_through_model_cache(ov::Core& core, const BlobView& blob,
                                                                                   const CompileSettings& options,
                                                                                   const std::string& variant,
                                                                                   const DeriveModel& derive);

/// What a load through the model cache came to.
struct CacheLoad {
  enum class Outcome {
    kCompiled,     // `compiled` holds the model: a cache hit, or compiled from files that hold the verified IR
    kNotCompiled,  // OpenVINO cannot compile the files: compile `verified` from memory, which reports the IR's problems
    kCacheUnusable,  // the folder cannot be created or written: load without the cache
  };
  Outcome outcome = Outcome::kNotCompiled;
  ov::CompiledModel compiled;          // kCompiled only
  std::optional<VerifiedIr> verified;  // set when the IR was read and verified on the way
};

/// The model cache's one entry point: compiles `blob` through its IR files in
/// options.cache_dir (set, and blob.has_ir_digest()), writing or rewriting the
/// files from the verified IR when they are missing or differ. Logs what went
/// wrong before any outcome but kCompiled. InvalidArgument when the IR had to be
/// read and its checksum does not match.
executorch::runtime::Result<CacheLoad> load_through_model_cache(ov::Core& core, const BlobView& blob,
                                                                const CompileSettings& options);

}  // namespace executorch_openvino
