/*
 * The one way the runtime compiles a form of a blob's IR (the IR itself, the model
 * of one token, the PagedAttention form): through the model cache (ir_cache.h) when
 * there is one, else from memory.
 *
 * A model cache only makes loads faster, so nothing about it fails a load, whatever
 * the form: a folder that cannot be created or written is logged and the form
 * compiled without the cache; files OpenVINO cannot compile are logged and the form
 * compiled from memory; files that do not hold the verified IR are written again
 * (ir_cache.h) before they become a model. What does fail is the program itself:
 * an IR that had to be read and does not match its checksum.
 */
#pragma once

#include <memory>

#include <executorch/runtime/core/result.h>
#include <openvino/core/model.hpp>
#include <openvino/runtime/core.hpp>

#include "blob_reader.h"
#include "ir_cache.h"
#include "options.h"

namespace executorch_openvino {

/// A compiled form of a blob's IR and how it was compiled.
struct CompiledForm {
  ov::CompiledModel model;
  /// Compiled from memory: its constants may point into the blob, which must then
  /// live as long as it. False when OpenVINO read the model from the cache's files.
  bool borrows_blob = true;
  /// The settings it was compiled with: cache_dir cleared when the cache could not
  /// be used, float kernels for quantized layers where this CPU needs them.
  CompileSettings settings;
};

/// The verified IR as a model, its weights pointing into the blob.
std::shared_ptr<ov::Model> read_verified_ir(ov::Core& core, const VerifiedIr& ir);

/// Compiles `form` of the blob's IR for settings.device: through the model cache
/// when settings.cache_dir is set, the blob names its IR by a digest and keeps all
/// its weights (none in the program's named data); else, or when the cache gave no
/// model, from the verified IR in memory (form.derive made from it, when set).
/// `ir` is verified only when the IR is read, once for all the forms of a load.
/// Any problem with the cache is logged, at Error, and the form compiled from
/// memory; without the cache when the folder cannot be used. InvalidArgument, after
/// a log line, when the IR had to be read and does not match its checksum; the
/// Error of form.derive; throws what OpenVINO or form.derive throws.
executorch::runtime::Result<CompiledForm> compile_through_cache(ov::Core& core, BlobIr& ir,
                                                                const CompileSettings& settings, const IrForm& form);

}  // namespace executorch_openvino
