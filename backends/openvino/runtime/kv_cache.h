/*
 * The sequence a growing KV cache holds (conversion/rewrites/kv_cache_growth.py).
 *
 * A delegate whose cache grows by concatenation appends each call's positions to
 * what the cache holds, so a call must continue the sequence where the last one
 * ended, go back to an earlier position (the cache is cut there first), or start
 * again at position 0, which empties it. Skipping positions would attend over the
 * wrong positions without an error, so it is refused.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>
#include <openvino/runtime/variable_state.hpp>

namespace executorch_openvino {

/// Whether `state` is a KV cache that grows by concatenation (its id ends with
/// kGrownCacheSuffix): a restart at position 0 empties it.
bool is_grown_cache(const ov::VariableState& state);
/// Whether a variable id names a KV cache that grows by concatenation.
bool is_grown_cache_id(const std::string& variable_id);
/// Whether a variable id names values computed once per sequence (kPerSequenceSuffix).
bool is_per_sequence_id(const std::string& variable_id);

class CacheSequence {
 public:
  /// The positions input of `compiled`, found by kCachePositionsName; nullopt when
  /// the model has no growing cache. `request` is the one the delegate runs.
  /// InvalidArgument, after a log line, when the marker does not parse or a grown
  /// cache has no marker: the cache would run without its checks.
  static executorch::runtime::Result<std::optional<CacheSequence>> find(const ov::CompiledModel& compiled,
                                                                        ov::InferRequest& request);

  /// Before a call: checks the call's positions (`inputs` are the delegate's inputs)
  /// and empties the cache and the per-sequence values when they start at 0, or cuts
  /// the cache when they go back (the per-sequence values stay: the same sequence).
  executorch::runtime::Error before_call(executorch::runtime::Span<executorch::runtime::EValue*> inputs);
  /// After a call that ran: the cache now holds the call's positions too.
  void after_call() { filled_ = pending_end_; }
  /// After a call that failed: what the cache holds is unknown until a restart at 0.
  void after_failure() { filled_ = kUnknown; }
  /// Whether a call with these inputs starts the sequence again at position 0 (the
  /// checks are before_call's: false for inputs it would refuse).
  bool starts_again(executorch::runtime::Span<executorch::runtime::EValue*> inputs) const;
  /// When another request's states were copied into this one's: it holds what `other` held.
  void continue_from(const CacheSequence& other) {
    filled_ = other.filled_;
    for (size_t i = 0; i < per_sequence_inputs_.size() && i < other.per_sequence_inputs_.size(); ++i) {
      per_sequence_inputs_[i].sizes = other.per_sequence_inputs_[i].sizes;
    }
  }

  /// Where a call's count of positions is read when the positions input holds only
  /// the first one (a dynamic-length export): the size of dimension `dim` of input
  /// `input` (the tokens).
  struct CountSource {
    size_t input;
    size_t dim;
  };
  /// Set for a dynamic-length export; else a call writes as many positions as it lists.
  const std::optional<CountSource>& count_source() const { return count_source_; }

  /// An input marked kPerSequenceInputName: the values kept per sequence are computed
  /// from it, and other ops read its shape, so a call at a later position with other
  /// sizes would fail inside OpenVINO (and leave OpenVINO 2026.4.1's CPU plugin failing
  /// the restarts that follow, with the first sizes too). Such a call is refused.
  struct PerSequenceInput {
    size_t input;
    std::string label;           // input_label's
    std::vector<int64_t> sizes;  // at the sequence's position 0
  };

  /// The positions the cache holds at most.
  int64_t capacity() const { return capacity_; }
  /// The positions the cache holds now; -1 after a failed call, until a restart at 0.
  int64_t filled() const { return filled_; }
  /// The positions of the call before_call last accepted: call_start()..call_end() - 1.
  int64_t call_start() const { return pending_start_; }
  int64_t call_end() const { return pending_end_; }

 private:
  static constexpr int64_t kUnknown = -1;

  // Keeps positions 0..positions-1 of every grown cache: a call went back.
  executorch::runtime::Error trim_to(int64_t positions);
  // Records the sizes of the per-sequence inputs at position 0, or checks a later call's.
  executorch::runtime::Error keep_per_sequence_sizes(executorch::runtime::Span<executorch::runtime::EValue*> inputs,
                                                     int64_t start);

  struct GrownCache {
    ov::VariableState state;
    int64_t axis;  // the position axis; -1: unknown, so going back is refused
  };

  size_t positions_input_ = 0;
  std::optional<CountSource> count_source_;
  int64_t capacity_ = 0;
  int64_t filled_ = 0;
  int64_t pending_start_ = 0;
  int64_t pending_end_ = 0;
  std::vector<GrownCache> grown_caches_;
  std::vector<ov::VariableState> per_sequence_;  // emptied with the caches at position 0
  std::vector<PerSequenceInput> per_sequence_inputs_;
};

}  // namespace executorch_openvino
