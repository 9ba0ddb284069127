/*
 * A compiled model with what runs one call of it: its infer request, the
 * bindings of its inputs and outputs, and the sequence its KV cache holds.
 */
#pragma once

#include <optional>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>

#include "kv_cache.h"
#include "layer_events.h"
#include "paged_attention.h"
#include "tensor_binding.h"

namespace executorch_openvino {

struct ModelRun {
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::vector<InputBinding> inputs;
  std::vector<OutputBinding> outputs;
  std::optional<CacheSequence> cache;       // set when the model's KV cache grows
  std::optional<PagedCache> paged;          // set when the cache is in PagedAttention form (paged_attention.h)
  std::optional<LayerEvents> layer_events;  // set when `compiled` counts its layers' times (layer_events.h)
  bool told_no_layer_events = false;        // whether a traced call logged that there are none

  /// Creates the request and bindings of `compiled`: of the delegate's inputs, and
  /// of the blocks of a cache in PagedAttention form. InvalidArgument, after a log
  /// line, for a port without an element type (only a damaged blob has one), a KV
  /// cache marker that does not parse, or PagedAttention inputs this runtime does
  /// not fill. Throws what OpenVINO throws.
  static executorch::runtime::Result<ModelRun> create(ov::CompiledModel compiled);

  /// Runs one call: `args` are the delegate's inputs, then its outputs, as many as
  /// the model has (checked by the caller). `new_sizes` tells whether an input
  /// came with other sizes than in the call before on this model. With a `tracer`,
  /// logs one event per layer OpenVINO ran (layer_events.h) when the model counts
  /// its layers' times. Throws what OpenVINO throws.
  executorch::runtime::Error run(executorch::runtime::Span<executorch::runtime::EValue*> args, bool& new_sizes,
                                 executorch::runtime::EventTracer* tracer);
};

}  // namespace executorch_openvino
