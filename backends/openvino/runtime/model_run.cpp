#include "model_run.h"

#include <executorch/runtime/platform/log.h>
#include <executorch/runtime/platform/platform.h>

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::EventTracer;
using executorch::runtime::Result;
using executorch::runtime::Span;

namespace {

// Creating a request for a port without an element type leaks inside the CPU
// plugin, and such a port can never be bound.
template <typename Ports>
bool all_typed(const Ports& ports, const char* kind) {
  for (const auto& port : ports) {
    if (port.get_element_type().is_dynamic()) {
      ET_LOG(Error, "OpenVINO blob: an %s has no element type; the blob is damaged", kind);
      return false;
    }
  }
  return true;
}

// Whether a call with `tracer` logs its layers' events: when the model counts
// their times. A method loaded without a tracer was compiled without the counters
// (as is one on a device that does not say whether it counts); a call that has a
// tracer all the same (a runtime of its own can do that) says so once, at Debug
// level: the counters are not turned on after the load.
bool logs_layer_events(ModelRun& run, EventTracer* tracer) {
  if (tracer == nullptr) {
    return false;
  }
  if (!run.layer_events && !run.told_no_layer_events) {
    ET_LOG(Debug,
           "OpenVINO delegate: this model was compiled without OpenVINO's performance counters (loaded "
           "without an event tracer); its calls log no per-layer events");
    run.told_no_layer_events = true;
  }
  return run.layer_events.has_value();
}

}  // namespace

Result<ModelRun> ModelRun::create(ov::CompiledModel compiled) {
  if (!all_typed(compiled.inputs(), "input") || !all_typed(compiled.outputs(), "output")) {
    return Error::InvalidArgument;
  }
  ModelRun run;
  run.compiled = std::move(compiled);
  run.request = run.compiled.create_infer_request();
  Result<std::optional<CacheSequence>> cache = CacheSequence::find(run.compiled, run.request);
  if (!cache.ok()) {
    return cache.error();
  }
  run.cache = std::move(*cache);
  Result<std::optional<PagedCache>> paged =
      PagedCache::find(run.compiled, run.request, run.cache ? run.cache->capacity() : 0);
  if (!paged.ok()) {
    return paged.error();
  }
  if (*paged && !run.cache) {
    ET_LOG(Error, "OpenVINO delegate: paged_attention: the model has PagedAttention inputs but no positions input");
    return Error::InvalidArgument;
  }
  run.paged = std::move(*paged);
  if (counts_layer_times(run.compiled)) {
    run.layer_events.emplace(run.compiled);
  }
  const auto& inputs = run.compiled.inputs();
  // The PagedAttention inputs come last, and the run fills them itself.
  const size_t delegate_inputs = run.paged ? run.paged->first_input() : inputs.size();
  run.inputs.reserve(delegate_inputs);
  for (size_t i = 0; i < delegate_inputs; ++i) {
    run.inputs.emplace_back(inputs[i], i);
  }
  const auto& outputs = run.compiled.outputs();
  run.outputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    run.outputs.emplace_back(outputs[i], i);
  }
  return run;
}

Error ModelRun::run(Span<EValue*> args, bool& new_sizes, EventTracer* tracer) {
  const size_t num_inputs = inputs.size();
  // Outputs are bound before inputs: with a Parameter that feeds a Result
  // directly, binding the output last made OpenVINO read the output buffer as
  // the input (seen on 2025.4.1 and 2026.4.1).
  for (size_t i = 0; i < outputs.size(); ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(outputs[i].bind(request, *args[num_inputs + i]));
  }
  new_sizes = false;
  for (size_t i = 0; i < num_inputs; ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(inputs[i].bind(request, *args[i]));
    new_sizes = new_sizes || inputs[i].shape_changed();
  }
  if (cache) {
    ET_CHECK_OK_OR_RETURN_ERROR(cache->before_call(Span<EValue*>(args.data(), num_inputs)));
    if (paged) {
      paged->before_call(request, cache->call_start(), cache->call_end());
    }
  }
  const bool log_layers = logs_layer_events(*this, tracer);
  const et_timestamp_t inference_start = log_layers ? executorch::runtime::pal_current_ticks() : 0;
  try {
    request.infer();
  } catch (...) {
    if (cache) {
      cache->after_failure();
    }
    throw;
  }
  if (cache) {
    cache->after_call();
  }
  if (log_layers) {
    layer_events->log(tracer, request, inference_start);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(outputs[i].collect(request, *args[num_inputs + i]));
  }
  return Error::Ok;
}

}  // namespace executorch_openvino
