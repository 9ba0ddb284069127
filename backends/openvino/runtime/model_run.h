/*
 * A compiled model with what runs one call of it: its infer request, the
 * bindings of its inputs and outputs, and the sequence its KV cache holds.
 */
#pragma once

#include <optional>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>

#include "kv_cache.h"
#include "tensor_binding.h"

namespace executorch_openvino {

struct ModelRun {
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::vector<InputBinding> inputs;
  std::vector<OutputBinding> outputs;
  std::optional<CacheSequence> cache;  // set when the model's KV cache grows

  /// Creates the request and bindings of `compiled`. InvalidArgument, after a log
  /// line, for a port without an element type (only a damaged blob has one) or a
  /// KV cache marker that does not parse. Throws what OpenVINO throws.
  static executorch::runtime::Result<ModelRun> create(ov::CompiledModel compiled);

  /// Runs one call: `args` are the delegate's inputs, then its outputs, as many as
  /// the model has (checked by the caller). `new_sizes` tells whether an input
  /// came with other sizes than in the call before on this model. Throws what
  /// OpenVINO throws.
  executorch::runtime::Error run(executorch::runtime::Span<executorch::runtime::EValue*> args, bool& new_sizes);
};

}  // namespace executorch_openvino
