/*
 * A KV cache in OpenVINO's PagedAttention form, for a delegate's calls of one token
 * and its prompts, when the compile spec paged_attention asks for it.
 *
 * The stateful form keeps each layer's cache as an OpenVINO state that grows by
 * concatenation, so going back to an earlier position (a chat application
 * regenerating an answer) cuts every state: a copy of all it keeps. OpenVINO's
 * SDPAToPagedAttention, the form OpenVINO GenAI runs LLMs in on CPU and GPU, turns
 * each attention into a PagedAttentionExtension that reads and writes caches the
 * caller owns, in blocks of positions, and takes how many positions come before the
 * call (past_lens) as an input. The delegate owns those blocks, lays its one sequence
 * out in blocks 0, 1, ..., and fills the inputs from the call's positions: going back
 * or starting again changes an input and copies nothing. A prompt runs in the form
 * too, and the CPU plugin's PagedAttention kernel fills it faster than the stateful
 * form's attention over a mask (benchmarks/results/llm-prefill-attention-2026-12-06.md).
 *
 * The transformation makes attention causal over the whole cache: a model whose
 * attention masks more (a sliding window) or less (Gemma 3's image tokens, which see
 * each other) computes other values in this form, so the exporters refuse
 * paged_attention for one (llm/decoder_program.py, llm/vision_language.py).
 */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/result.h>
#include <openvino/core/model.hpp>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>
#include <openvino/runtime/tensor.hpp>

namespace executorch_openvino {

/// A cache input's second name, after the variable of the grown cache it takes the
/// place of: kPagedCacheName + variable id.
inline constexpr const char kPagedCacheName[] = "executorch_openvino.paged_cache=";

/// Rewrites `model`, an IR whose KV caches grow by concatenation, with OpenVINO's
/// SDPAToPagedAttention. Its own inputs and outputs keep their indices, names and
/// shapes; the PagedAttention inputs come after them, each cache named after the
/// variable it replaces (kPagedCacheName) where every attention read one. The tokens
/// of a call, one or [1, tokens], or their embeddings [1, tokens, hidden] (a
/// vision-language model's text decoder), run as one sequence. Throws std::invalid_argument
/// when a grown cache is left as a state, the tokens input cannot be told apart or
/// has another shape, the rewrite's layout is not the one this runtime changes, the
/// calls take several tokens at `inference_precision` f16 (which OpenVINO 2026.4.1's
/// CPU plugin computes wrong in this form), and what OpenVINO throws.
void to_paged_attention(const std::shared_ptr<ov::Model>& model, const std::string& inference_precision);

/// The PagedAttention inputs of a compiled model, and the block caches bound to them.
class PagedCache {
 public:
  /// nullopt when `compiled` has no PagedAttention inputs. InvalidArgument, after a
  /// log line, when they are not the ones to_paged_attention makes or their blocks
  /// are not laid out as the CPU plugin lays them out: [blocks, heads, positions,
  /// size], or for a u8 cache (OpenVINO 2026.4.1) keys [blocks, heads, 8 + positions,
  /// size] (the channels' scales and zero points as rows) and values [blocks, heads,
  /// positions, 8 + size] (each row's). `capacity` is the positions the cache holds.
  /// Allocates each cache's blocks in its own shape and binds them to `request`.
  /// Throws what OpenVINO throws.
  static executorch::runtime::Result<std::optional<PagedCache>> find(const ov::CompiledModel& compiled,
                                                                     ov::InferRequest& request, int64_t capacity);

  /// The index of the first PagedAttention input: the delegate's inputs come before it.
  size_t first_input() const { return first_input_; }

  /// Before a call of positions start..end - 1 (checked by CacheSequence): sets the
  /// inputs, so that the call attends over positions 0..end - 1 and writes its own.
  /// Allocates nothing.
  void before_call(ov::InferRequest& request, int64_t start, int64_t end);

  /// Whether every block holds a grown cache's rows as they are (a float cache), so
  /// that write_sequence and read_sequence move a sequence between a state and blocks.
  /// A u8 cache's blocks carry scales the CPU plugin computes over each block.
  bool rows_like_state() const { return rows_like_state_; }

  /// The blocks that replace the grown cache of `variable`; an empty tensor when no
  /// cache input is named after it.
  ov::Tensor blocks_of(const std::string& variable) const;

  /// Writes `sequence`, a grown cache's value [1, heads, positions, size], into
  /// `blocks` [blocks, heads, block size, size] of the same element type: position p
  /// at block p / block size, row p % block size. Only where rows_like_state().
  static void write_sequence(const ov::Tensor& sequence, ov::Tensor& blocks);
  /// The first `positions` positions of `blocks` as a grown cache's value
  /// [1, heads, positions, size].
  static ov::Tensor read_sequence(const ov::Tensor& blocks, size_t positions);

 private:
  PagedCache() = default;

  size_t first_input_ = 0;
  int64_t block_size_ = 0;
  bool rows_like_state_ = false;
  ov::Output<const ov::Node> position_ids_port_;
  ov::Output<const ov::Node> block_indices_port_;
  ov::Tensor past_lens_;                              // [1]: positions before the call
  ov::Tensor subsequence_begins_;                     // [2]: 0, positions of the call
  ov::Tensor block_indices_begins_;                   // [2]: 0, blocks the sequence uses
  ov::Tensor max_context_len_;                        // []: positions attended
  std::vector<ov::Tensor> first_positions_;           // [k]: the call's positions, a view of one tensor for each k
  size_t bound_positions_ = 0;                        // the k of the view bound to position_ids
  std::vector<ov::Tensor> first_blocks_;              // [k]: 0..k-1, a view of one tensor for each k
  size_t bound_blocks_ = 0;                           // the k of the view bound to block_indices
  std::vector<ov::Tensor> blocks_;                    // the key and value caches, bound once
  std::map<std::string, size_t> blocks_of_variable_;  // index in blocks_ by variable id
};

}  // namespace executorch_openvino
