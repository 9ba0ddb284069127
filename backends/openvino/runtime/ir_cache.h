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
 * A model the runtime derives from the IR (the model of one token, the
 * PagedAttention form) gets files of its own in the same way, named by the digest
 * and a variant.
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

/// Makes a model from the verified IR of a blob: an Error after a log line, or
/// throws what OpenVINO throws.
using DeriveModel = std::function<executorch::runtime::Result<std::shared_ptr<ov::Model>>(const VerifiedIr&)>;

/// Which model of a blob a load compiles.
struct IrForm {
  /// Empty: the blob's IR itself, whose files in the cache are the blob's bytes.
  /// Else a model the runtime derives from that IR, with IR files of its own named
  /// by this variant (cache_file_names.h). A change to what `derive` makes must come
  /// with a new variant: a cache hit never runs it.
  std::string variant;
  /// The model to compile, made from the verified IR; required with a variant.
  /// Empty for the blob's IR as it is, which OpenVINO then compiles from its text
  /// and weights (keying a program without a digest in its own cache). Without a
  /// variant, it may only add what the IR lacks (weights in the program's named
  /// data), for a blob that does not go through the cache.
  DeriveModel derive;
  /// False for a form whose IR files OpenVINO cannot compile again: it is compiled
  /// from memory at every load, without cache_dir.
  bool cacheable = true;
};

/// What a load through the model cache came to.
struct CacheLoad {
  enum class Outcome {
    kCompiled,     // `compiled` holds the model: a cache hit, or compiled from files that hold the verified IR
    kNotCompiled,  // OpenVINO cannot compile the files: compile the verified IR from memory, which reports its problems
    kCacheUnusable,  // the folder or the files cannot be created or written: load without the cache
  };
  Outcome outcome = Outcome::kNotCompiled;
  ov::CompiledModel compiled;  // kCompiled only
};

/// The model cache's one entry point: compiles `form` of the blob's IR through its
/// IR files in options.cache_dir (set, and ir.blob().has_ir_digest()). A load that OpenVINO
/// serves from its cache reads no IR. Otherwise the IR is verified and the files
/// must hold it (or what form.derive makes of it): missing or different files are
/// written again from it, through temporary files, so damaged files never become
/// a model. Logs what went wrong before any outcome but kCompiled. InvalidArgument
/// when the IR had to be read and its checksum does not match; the Error of
/// form.derive; throws what form.derive throws.
executorch::runtime::Result<CacheLoad> load_through_model_cache(ov::Core& core, BlobIr& ir,
                                                                const CompileSettings& options, const IrForm& form);

}  // namespace executorch_openvino
