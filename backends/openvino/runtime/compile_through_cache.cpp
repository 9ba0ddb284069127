#include "compile_through_cache.h"

#include <string>
#include <utility>

#include <executorch/runtime/platform/log.h>
#include <openvino/runtime/tensor.hpp>

#include "quantized_layers.h"

namespace executorch_openvino {

using executorch::runtime::Result;

namespace {

// The IR weights as a tensor that borrows the blob's memory.
ov::Tensor weights_in(const BlobView& blob) {
  return ov::Tensor(ov::element::u8, ov::Shape{blob.ir_weights_size}, const_cast<uint8_t*>(blob.ir_weights));
}

// The settings `options` come to for `blob` on this machine and for the cache.
CompileSettings settings_for(const BlobView& blob, const CompileSettings& options) {
  CompileSettings settings = options;
  if (float_kernels_for_quantized_layers(settings.device, blob.has_fake_quantize())) {
    settings.float_kernels_for_quantized_layers = true;
    ET_LOG(Debug,  // a load that succeeds logs nothing: see the comment in init (OpenvinoBackend.cpp)
           "OpenVINO delegate: this CPU has no VNNI or AMX, on which OpenVINO's 8-bit kernels saturate; the "
           "quantized layers run on float kernels, computing the quantized model's values");
  }
  if (blob.has_named_weights() && !settings.cache_dir.empty()) {
    // The model cache keeps an IR's files, and part of this IR's weights are elsewhere.
    ET_LOG(Debug, "OpenVINO delegate: the model cache is not used for an IR with weights in named data");
    settings.cache_dir.clear();
  }
  return settings;
}

// Compiles `form` of the verified IR from memory.
Result<ov::CompiledModel> compile_from_memory(ov::Core& core, const VerifiedIr& ir, const IrForm& form,
                                              const CompileSettings& settings) {
  if (!form.derive) {
    const BlobView& blob = ir.blob();
    return core.compile_model(std::string(blob.ir_xml), weights_in(blob), settings.device, compile_config(settings));
  }
  Result<std::shared_ptr<ov::Model>> model = form.derive(ir);
  if (!model.ok()) {
    return model.error();
  }
  return core.compile_model(*model, settings.device, compile_config(settings));
}

}  // namespace

std::shared_ptr<ov::Model> read_verified_ir(ov::Core& core, const VerifiedIr& ir) {
  return core.read_model(std::string(ir.blob().ir_xml), weights_in(ir.blob()));
}

Result<CompiledForm> compile_through_cache(ov::Core& core, BlobIr& ir, const CompileSettings& options,
                                           const IrForm& form) {
  const BlobView& blob = ir.blob();
  CompileSettings settings = settings_for(blob, options);
  if (!form.cacheable) {
    settings.cache_dir.clear();
  }
  // A program without a digest keeps cache_dir: OpenVINO's own cache of in-memory models.
  if (!settings.cache_dir.empty() && blob.has_ir_digest()) {
    Result<CacheLoad> load = load_through_model_cache(core, ir, settings, form);
    if (!load.ok()) {
      return load.error();
    }
    switch (load->outcome) {
      case CacheLoad::Outcome::kCompiled:
        // From OpenVINO's cache or the IR files, which OpenVINO maps itself.
        return CompiledForm{std::move(load->compiled), false, settings};
      case CacheLoad::Outcome::kNotCompiled:
        break;
      case CacheLoad::Outcome::kCacheUnusable:
        // A cache is there to make loads faster: a folder it cannot use does not
        // stop the program from loading (OpenVINO on its own throws, or not, by release).
        ET_LOG(Error, "OpenVINO model cache: cache_dir %s cannot be used; loading without the cache",
               settings.cache_dir.c_str());
        settings.cache_dir.clear();
        break;
    }
  }
  Result<VerifiedIr> verified = ir.verified();
  if (!verified.ok()) {
    return verified.error();
  }
  Result<ov::CompiledModel> compiled = compile_from_memory(core, *verified, form, settings);
  if (!compiled.ok()) {
    return compiled.error();
  }
  return CompiledForm{std::move(*compiled), true, settings};
}

}  // namespace executorch_openvino
