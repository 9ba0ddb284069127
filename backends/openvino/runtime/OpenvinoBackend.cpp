/*
 * The ExecuTorch BackendInterface of executorch_openvino: init compiles the IR
 * carried in the blob, execute binds tensors and runs inference, destroy frees.
 * It registers itself under kBackendId when the library is loaded.
 */
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/platform/log.h>
#include <openvino/core/version.hpp>
#include <openvino/runtime/core.hpp>

#include <executorch_openvino/backend.h>

#include "blob_reader.h"
#include "cache_file_names.h"
#include "compile_through_cache.h"
#include "ir_cache.h"
#include "layer_events.h"
#include "model_run.h"
#include "named_weights.h"
#include "one_token_model.h"
#include "openvino_error.h"
#include "options.h"
#include "paged_attention.h"
#include "per_sequence_values.h"
#include "resident_pages.h"

namespace executorch_openvino {
namespace {

using executorch::runtime::ArrayRef;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendOption;
using executorch::runtime::BackendOptionContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::NamedDataMap;
using executorch::runtime::Result;
using executorch::runtime::Span;

// One Core per process: it loads the device plugins once and is thread-safe.
ov::Core& shared_core() {
  static ov::Core core;
  return core;
}

/// What one loaded delegate owns; the DelegateHandle points at it.
struct Delegate {
  // A model compiled from memory keeps pointing into the IR weights for as long
  // as it lives, so the blob stays alive with it. Declared first, so that it is
  // freed last.
  std::optional<FreeableBuffer> blob;
  NamedWeightBuffers named_weights;     // weights the model reads from the program's named data
  WeightsGivenBack weights_given_back;  // set when the weights' pages went back to a file
  ModelRun general;                     // runs every call but those one_token runs
  std::optional<OneTokenModel> one_token;
};

// FNV-1a over the sizes of the tensor inputs: which sizes a call had.
uint64_t sizes_hash(Span<EValue*> inputs) {
  uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (const EValue* input : inputs) {
    if (input->isTensor()) {
      const auto sizes = input->toTensor().sizes();
      mix(sizes.size());
      for (const auto size : sizes) {
        mix(static_cast<uint64_t>(size));
      }
    }
  }
  return hash;
}

/// A model made at load, and whether it may point into the blob (CompiledForm).
template <typename Model>
struct Loaded {
  Model model;
  bool borrows_blob;
};

// The verified IR, with the weights a blob keeps in the program's named data
// (named_weights.h) taken from `named_data` and kept in `buffers`.
Result<std::shared_ptr<ov::Model>> read_with_named_weights(ov::Core& core, const VerifiedIr& verified,
                                                           const NamedDataMap* named_data,
                                                           NamedWeightBuffers& buffers) {
  std::shared_ptr<ov::Model> model = read_verified_ir(core, verified);
  if (verified.blob().has_named_weights()) {
    ET_CHECK_OK_OR_RETURN_ERROR(put_named_weights(*model, named_data, buffers));
  }
  return model;
}

// The blob's IR itself, compiled (compile_through_cache.h); without the per-sequence
// values OpenVINO computes wrong at this precision (per_sequence_values.h), a model
// that does not go through the model cache then.
Result<CompiledForm> compile_blob(BlobIr& ir, const CompileSettings& options, const NamedDataMap* named_data,
                                  NamedWeightBuffers& buffers) {
  ov::Core& core = shared_core();
  IrForm form;
  const bool per_sequence_at_each_call = may_compute_per_sequence_values_wrong(ir.blob().ir_xml, options);
  if (ir.blob().has_named_weights() || per_sequence_at_each_call) {
    form.derive = [&core, named_data, &buffers,
                   per_sequence_at_each_call](const VerifiedIr& verified) -> Result<std::shared_ptr<ov::Model>> {
      Result<std::shared_ptr<ov::Model>> model = read_with_named_weights(core, verified, named_data, buffers);
      if (model.ok() && per_sequence_at_each_call) {
        compute_per_sequence_values_at_each_call(**model);
      }
      return model;
    };
    form.cacheable = !per_sequence_at_each_call;
  }
  return compile_through_cache(core, ir, options, form);
}

// Keeps the blob for a model that points into it and frees it otherwise. With the
// load option give_back_memory, also lets go of pages the runtime did not allocate
// and the model does not read again (resident_pages.h): those of the mapped cache
// files when the model came from the cache folder, or those a mapped program file
// can give back, and the heap's free pages. Off by default: they are the host's.
void keep_what_the_model_reads(Delegate& delegate, FreeableBuffer& processed, const BlobView& blob, bool borrows_blob,
                               const CompileSettings& settings) {
  if (!settings.give_back_memory) {
    if (borrows_blob) {
      delegate.blob.emplace(std::move(processed));
    } else {
      processed.Free();
    }
    return;
  }
  if (!borrows_blob) {
    processed.Free();
    // Once, at load: the calls do not drop them again, since finding OpenVINO's
    // mappings means reading /proc/self/maps.
    const size_t released = release_pages_of_cache_files_in(settings.cache_dir) +
                            release_pages_of_cache_files_in(openvino_cache_dir(settings));
    ET_LOG(Debug, "OpenVINO delegate: freed the blob; dropped the pages of %zu mappings of cache files", released);
  } else {
    const PageRelease released = release_file_backed_pages(blob.ir_weights, blob.ir_weights_size);
    ET_LOG(Debug, "OpenVINO delegate: the IR weights' pages %s",
           released == PageRelease::kReleased        ? "were given back to the mapped program file"
           : released == PageRelease::kNotFileBacked ? "stay resident (not a read-only view of a file)"
                                                     : "stay resident (the system refused to drop them)");
    if (released == PageRelease::kReleased) {
      delegate.weights_given_back = WeightsGivenBack::in_program(blob.ir_weights, blob.ir_weights_size);
    }
    delegate.blob.emplace(std::move(processed));
  }
  // What compiling built and freed would otherwise stay resident for allocations
  // that a loaded model rarely makes.
  const bool trimmed = release_free_heap_pages();
  ET_LOG(Debug, "OpenVINO delegate: %s", trimmed ? "gave back free heap pages" : "no free heap pages to give back");
}

// The blob's IR with the tokens' length fixed at 1 (and with paged_attention in
// PagedAttention form, paged_attention.h), compiled (compile_through_cache.h).
Result<CompiledForm> compile_one_token(BlobIr& ir, const CompileSettings& settings, CacheSequence::CountSource tokens) {
  ov::Core& core = shared_core();
  const bool paged = settings.paged_attention;
  IrForm form{one_token_variant(tokens.input, tokens.dim, paged),
              [&core, tokens, paged, &settings](const VerifiedIr& verified) -> Result<std::shared_ptr<ov::Model>> {
                std::shared_ptr<ov::Model> model = read_verified_ir(core, verified);
                OneTokenModel::fix_tokens_at_one(*model, tokens);
                if (paged) {
                  to_paged_attention(model, settings.inference_precision);
                }
                return model;
              }};
  return compile_through_cache(core, ir, settings, form);
}

// The model of one token (one_token_model.h), when the program asks for it and it
// can be made. It only makes decode faster, so a load goes on without it, after a
// log line, when it cannot be made.
std::optional<Loaded<OneTokenModel>> one_token_model_for(ModelRun& general, BlobIr& ir,
                                                         const CompileSettings& settings) {
  const std::optional<CacheSequence::CountSource> tokens = OneTokenModel::tokens_of(general);
  if (!tokens) {
    return std::nullopt;
  }
  try {
    Result<CompiledForm> compiled = compile_one_token(ir, settings, *tokens);
    if (compiled.ok()) {
      Result<OneTokenModel> one_token = OneTokenModel::create(std::move(compiled->model), general, *tokens);
      if (one_token.ok()) {
        return Loaded<OneTokenModel>{std::move(*one_token), compiled->borrows_blob};
      }
    }
  } catch (const std::exception& e) {
    log_openvino_error("OpenVINO delegate: one_token_model: compiling the model of one token failed", e);
  }
  ET_LOG(Error, "OpenVINO delegate: one_token_model: loaded without the model of one token; decode runs as exported");
  return std::nullopt;
}

// The blob's IR in PagedAttention form (paged_attention.h), its named weights
// taken as compile_blob takes them, compiled (compile_through_cache.h).
Result<CompiledForm> compile_paged(BlobIr& ir, const CompileSettings& options, const NamedDataMap* named_data,
                                   NamedWeightBuffers& buffers) {
  ov::Core& core = shared_core();
  IrForm form{
      paged_attention_variant(),
      [&core, named_data, &buffers, &options](const VerifiedIr& verified) -> Result<std::shared_ptr<ov::Model>> {
        Result<std::shared_ptr<ov::Model>> model = read_with_named_weights(core, verified, named_data, buffers);
        if (model.ok()) {
          to_paged_attention(*model, options.inference_precision);
        }
        return model;
      }};
  // Workaround, OpenVINO 2026.4.1: the IR files of this form cannot be compiled again.
  // The CPU plugin needs each PagedAttention node's k_head_size and num_k_heads, which
  // SDPAToPagedAttention sets as runtime info (required since openvinotoolkit/openvino#36363),
  // and serializing the model drops them, so every load through the cache logged an error
  // and compiled from memory anyway.
  form.cacheable = false;
  return compile_through_cache(core, ir, options, form);
}

// The model with its KV cache in PagedAttention form, when it can be made. The
// stateful form computes the same values, so a load goes on with it, after a log
// line, when the paged one cannot be made.
std::optional<Loaded<ModelRun>> paged_model_for(BlobIr& ir, const CompileSettings& options,
                                                const NamedDataMap* named_data, NamedWeightBuffers& buffers) {
  try {
    Result<CompiledForm> compiled = compile_paged(ir, options, named_data, buffers);
    if (compiled.ok()) {
      Result<ModelRun> run = ModelRun::create(std::move(compiled->model));
      if (run.ok() && run->paged) {
        return Loaded<ModelRun>{std::move(*run), compiled->borrows_blob};
      }
    }
  } catch (const std::exception& e) {
    log_openvino_error("OpenVINO delegate: paged_attention: making the PagedAttention form failed", e);
  }
  buffers.clear();  // the stateful form's compile fetches its own
  ET_LOG(Error, "OpenVINO delegate: paged_attention: loaded with the KV cache as state; going back copies it");
  return std::nullopt;
}

Result<std::unique_ptr<Delegate>> compile_delegate(FreeableBuffer& processed, CompileSettings options,
                                                   const NamedDataMap* named_data) {
  // The checksum is checked where the IR is read: a model cache hit reads none of it.
  Result<BlobView> blob = parse_blob_header(processed.data(), processed.size());
  if (!blob.ok()) {
    return blob.error();
  }
  if (blob->has_named_weights() && options.one_token_model) {
    // It compiles the IR a second time, which would fetch the named weights again.
    ET_LOG(Error,
           "OpenVINO delegate: one_token_model does not apply to an IR with weights in the program's named data; "
           "loading without it");
    options.one_token_model = false;
  }
  auto delegate = std::make_unique<Delegate>();
  BlobIr ir(*blob);  // verified once, whichever of the models below reads it
  bool borrows_blob = true;
  try {
    std::optional<Loaded<ModelRun>> paged;
    // With one_token_model, the model of one token takes the form; prompts keep the state.
    if (options.paged_attention && !options.one_token_model) {
      paged = paged_model_for(ir, options, named_data, delegate->named_weights);
    }
    if (paged) {
      delegate->general = std::move(paged->model);
      borrows_blob = paged->borrows_blob;
    } else {
      Result<CompiledForm> compiled = compile_blob(ir, options, named_data, delegate->named_weights);
      if (!compiled.ok()) {
        return compiled.error();
      }
      borrows_blob = compiled->borrows_blob;
      Result<ModelRun> general = ModelRun::create(std::move(compiled->model));
      if (!general.ok()) {
        return general.error();
      }
      delegate->general = std::move(*general);
      if (compiled->settings.one_token_model) {
        std::optional<Loaded<OneTokenModel>> one_token = one_token_model_for(delegate->general, ir, compiled->settings);
        if (one_token) {
          delegate->one_token = std::move(one_token->model);
          // The blob stays while either model may point into it.
          borrows_blob = borrows_blob || one_token->borrows_blob;
        }
      }
    }
  } catch (const std::exception& e) {
    log_openvino_error("OpenVINO delegate: compiling for device " + options.device + " failed", e);
    return Error::DelegateInvalidCompatibility;
  }
  keep_what_the_model_reads(*delegate, processed, *blob, borrows_blob, options);
  return delegate;
}

std::string precision_of(const ov::CompiledModel& compiled) {
  try {
    return compiled.get_property(ov::hint::inference_precision).to_string();
  } catch (const std::exception&) {
    return "device default";
  }
}

class OpenvinoBackend final : public executorch::runtime::BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> compile_specs) const override {
    Result<CompileSettings> options = options_from_compile_specs(compile_specs);
    if (!options.ok()) {
      return options.error();
    }
    LoadOptions process_options;
    {
      std::lock_guard<std::mutex> lock(load_options_mutex_);
      process_options = load_options_;
    }
    ET_CHECK_OK_OR_RETURN_ERROR(apply_load_options(*options, process_options, context.runtime_specs()));
    // OpenVINO's counters time every layer of every call: on only for a method that can log them.
    options->count_layer_times = context.event_tracer() != nullptr;

    Result<std::unique_ptr<Delegate>> delegate = compile_delegate(*processed, *options, context.get_named_data_map());
    if (!delegate.ok()) {
      return delegate.error();
    }
    // Debug, not Info: a load that succeeds logs nothing. ExecuTorch's Python runtime
    // sends std::cerr to Python for the length of each call; writing a line there
    // lets another thread start its own load_method, and the two calls then put
    // std::cerr back in the wrong order, leaving it on a freed buffer that crashed
    // the process when it exited (ExecuTorch 1.5.1).
    ET_LOG(Debug, "OpenVINO delegate loaded on %s at inference precision %s (%zu inputs, %zu outputs), %s",
           options->device.c_str(), precision_of((*delegate)->general.compiled).c_str(),
           (*delegate)->general.inputs.size(), (*delegate)->general.outputs.size(),
           imported_from_cache((*delegate)->general.compiled) ? "imported from the model cache" : "compiled");
    return delegate->release();
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    auto* delegate = static_cast<Delegate*>(handle);
    if (delegate == nullptr) {
      return Error::InvalidState;
    }
    const size_t num_inputs = delegate->general.inputs.size();
    const size_t num_outputs = delegate->general.outputs.size();
    if (args.size() != num_inputs + num_outputs) {
      ET_LOG(Error, "OpenVINO delegate: called with %zu values, expected %zu inputs and %zu outputs", args.size(),
             num_inputs, num_outputs);
      return Error::InvalidArgument;
    }
    const Span<EValue*> inputs(args.data(), num_inputs);
    try {
      ModelRun& run = delegate->one_token ? delegate->one_token->pick(delegate->general, inputs) : delegate->general;
      bool new_sizes = false;
      ET_CHECK_OK_OR_RETURN_ERROR(run.run(args, new_sizes, context.event_tracer()));
      if (new_sizes && !delegate->weights_given_back.empty()) {
        delegate->weights_given_back.after_call_of_new_sizes(sizes_hash(inputs));
      }
      return Error::Ok;
    } catch (const std::exception& e) {
      log_openvino_error("OpenVINO delegate: inference failed", e);
      return Error::Internal;
    }
  }

  void destroy(DelegateHandle* handle) const override {
    // Takes back the ownership that init released into the handle.
    std::unique_ptr<Delegate> delegate(static_cast<Delegate*>(handle));
  }

  Error set_option(BackendOptionContext& context, const Span<BackendOption>& backend_options) override {
    std::lock_guard<std::mutex> lock(load_options_mutex_);
    LoadOptions updated = load_options_;
    for (const BackendOption& option : backend_options) {
      ET_CHECK_OK_OR_RETURN_ERROR(set_load_option(updated, option));
    }
    load_options_ = updated;
    return Error::Ok;
  }

 private:
  mutable std::mutex load_options_mutex_;
  LoadOptions load_options_;
};

OpenvinoBackend backend_instance;
const Error registered = executorch::runtime::register_backend({kBackendId, &backend_instance});

}  // namespace

std::vector<bool> layer_counters_of(const void* handle) {
  const auto* delegate = static_cast<const Delegate*>(handle);
  std::vector<bool> counted{counts_layer_times(delegate->general.compiled)};
  if (delegate->one_token) {
    counted.push_back(counts_layer_times(delegate->one_token->model().compiled));
  }
  return counted;
}
}  // namespace executorch_openvino

// The C API declared in backend.h: C++ applications call etov_registration_status;
// the Python package (ctypes) has no other way to reach ExecuTorch's set_option
// from a program loaded with executorch.runtime.
extern "C" {

const char* etov_backend_id() {
  return executorch_openvino::kBackendId;
}

int etov_registration_status() {
  return static_cast<int>(executorch_openvino::registered);
}

const char* etov_openvino_version() {
  return ov::get_openvino_version().buildNumber;
}

int etov_set_load_option(const char* key, const char* value) {
  using executorch::runtime::BackendOption;
  if (key == nullptr || value == nullptr) {
    return static_cast<int>(executorch::runtime::Error::InvalidArgument);
  }
  using executorch::runtime::kMaxOptionKeyLength;
  using executorch::runtime::kMaxOptionValueLength;
  if (std::strlen(key) >= kMaxOptionKeyLength) {
    ET_LOG(Error, "OpenVINO delegate: load option '%.64s...' is not one: ExecuTorch's option keys hold %zu bytes", key,
           kMaxOptionKeyLength - 1);
    return static_cast<int>(executorch::runtime::Error::InvalidArgument);
  }
  if (std::strlen(value) >= kMaxOptionValueLength) {
    ET_LOG(Error, "OpenVINO delegate: load option %s's value is %zu bytes long; ExecuTorch's option values hold %zu",
           key, std::strlen(value), kMaxOptionValueLength - 1);
    return static_cast<int>(executorch::runtime::Error::InvalidArgument);
  }
  BackendOption option{};
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  std::array<char, executorch::runtime::kMaxOptionValueLength> text{};
  std::strncpy(text.data(), value, text.size() - 1);
  option.value = text;
  return static_cast<int>(executorch::runtime::set_option(executorch_openvino::kBackendId,
                                                          executorch::runtime::Span<BackendOption>(&option, 1)));
}

}  // extern "C"
