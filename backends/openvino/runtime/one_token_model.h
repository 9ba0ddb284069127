/*
 * A second compiled model for calls of one token, for a delegate whose KV cache
 * grows by a varying number of positions a call (a dynamic-length LLM export),
 * when the compile spec one_token_model asks for it.
 *
 * OpenVINO runs a graph with a dynamic dimension slower than the same graph with
 * that dimension fixed: it infers shapes and prepares kernels at every call, and
 * fuses less. Decode brings one token a call, so the delegate also compiles its IR
 * with the tokens' length fixed at 1 and runs those calls there; calls of several
 * tokens (a prompt) run on the dynamic model. Each model's request keeps its own
 * states (the KV cache and other buffers), so when a call goes to the other model
 * than the call before, the states are copied over first: once a prompt, the size
 * of the filled cache. The cost is memory: the CPU plugin keeps its own copy of
 * the weights it repacks for each compiled model.
 */
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <openvino/core/model.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/variable_state.hpp>

#include "kv_cache.h"
#include "model_run.h"
#include "options.h"

namespace executorch_openvino {

class OneTokenModel {
 public:
  /// Compiles `model`, the IR `general` was compiled from, with the tokens' length
  /// fixed at 1. nullopt, after a Debug line, when `general` has no KV cache that
  /// grows by the tokens' length: its calls have one shape already, or none we
  /// know. InvalidArgument, after a log line, when OpenVINO cannot fix it at 1.
  static executorch::runtime::Result<std::optional<OneTokenModel>> compile(ov::Core& core,
                                                                           const std::shared_ptr<ov::Model>& model,
                                                                           ModelRun& general,
                                                                           const CompileSettings& settings);

  /// The model that runs a call with these inputs: this one when it brings one
  /// token. Copies the states over when the call goes to the other model than
  /// the call before. Throws what OpenVINO throws.
  ModelRun& pick(ModelRun& general, executorch::runtime::Span<executorch::runtime::EValue*> inputs);

 private:
  OneTokenModel(ModelRun run, CacheSequence::CountSource tokens) : run_(std::move(run)), tokens_(tokens) {}
  bool brings_one_token(executorch::runtime::Span<executorch::runtime::EValue*> inputs) const;
  // Gives `to` the states of `from`: what the sequence holds moves with the calls.
  void move_states(ModelRun& from, ModelRun& to, bool to_this_model);

  ModelRun run_;
  CacheSequence::CountSource tokens_;
  // Each state of the general model's request, with the one of this model's request
  // that has its name.
  std::vector<std::pair<ov::VariableState, ov::VariableState>> states_;
  bool holds_states_ = false;  // whether the last call ran here
};

}  // namespace executorch_openvino
