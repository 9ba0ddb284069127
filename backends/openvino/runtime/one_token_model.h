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
 * than the one that holds the sequence, the states are copied over first: after a
 * prompt, the filled cache; before a prompt that continues the sequence, the same;
 * before a prompt that starts again at position 0, only the states other than the
 * grown caches, which that call empties anyway.
 *
 * With the compile spec paged_attention, the model of one token keeps its KV cache
 * in OpenVINO's PagedAttention form (paged_attention.h): the grown caches are then
 * copied into and out of its blocks instead, and decode steps go back without a copy.
 *
 * The cost is memory: the CPU plugin keeps its own copy of the weights it repacks
 * for each compiled model, and its fused KV cache states keep the tensor they were
 * last set from (a copy of the cache the switch moved) until they are set again.
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
  /// The input and dimension of `general` that carry the tokens' length, when a
  /// model of one token has something to gain. nullopt, after a Debug line, when
  /// `general` has no KV cache that grows by the tokens' length or its calls bring
  /// at least two tokens.
  static std::optional<CacheSequence::CountSource> tokens_of(const ModelRun& general);

  /// Fixes the tokens' length at 1 in `model`, the IR `general` was compiled from.
  /// Throws what OpenVINO throws, and std::invalid_argument when the input has no
  /// such dimension.
  static void fix_tokens_at_one(ov::Model& model, CacheSequence::CountSource tokens);

  /// The model of one token from `compiled`, the IR of `general` with the tokens'
  /// length fixed at 1. InvalidArgument, after a log line, when the two models'
  /// states differ. Throws what OpenVINO throws.
  static executorch::runtime::Result<OneTokenModel> create(ov::CompiledModel compiled, ModelRun& general,
                                                           CacheSequence::CountSource tokens);

  /// The model that runs a call with these inputs: this one when it brings one
  /// token. Copies the states over when the other model holds the sequence.
  /// Throws what OpenVINO throws; the sequence then stays where it was.
  ModelRun& pick(ModelRun& general, executorch::runtime::Span<executorch::runtime::EValue*> inputs);

  /// The model of one token itself.
  const ModelRun& model() const { return run_; }

 private:
  OneTokenModel(ModelRun run, CacheSequence::CountSource tokens) : run_(std::move(run)), tokens_(tokens) {}
  bool brings_one_token(executorch::runtime::Span<executorch::runtime::EValue*> inputs) const;
  // Gives the request of `to` the sequence that `from` holds.
  void move_sequence(ModelRun& from, ModelRun& to, executorch::runtime::Span<executorch::runtime::EValue*> inputs);

  ModelRun run_;
  CacheSequence::CountSource tokens_;
  // The states of both requests, paired by name.
  struct StatePair {
    ov::VariableState general;
    ov::VariableState one_token;
    bool grown_cache;  // emptied by a call that starts again at position 0
  };
  std::vector<StatePair> states_;
  // With a model of one token in PagedAttention form: the general model's grown
  // caches and the blocks of the model of one token that replace them.
  struct CacheBlocks {
    ov::VariableState general;
    ov::Tensor blocks;
  };
  std::vector<CacheBlocks> blocks_;
  bool holds_sequence_ = false;  // whether this model's request holds the states of the sequence
};

}  // namespace executorch_openvino
