#include "paged_attention.h"

#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

#include <executorch/runtime/platform/log.h>
#include <openvino/op/constant.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/reshape.hpp>
#include <openvino/op/unsqueeze.hpp>
#include <openvino/op/util/read_value_base.hpp>
#include <openvino/pass/manager.hpp>
#include <openvino/pass/sdpa_to_paged_attention.hpp>

#include <executorch_openvino/backend.h>

#include "kv_cache.h"

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::Result;

namespace {

// The names SDPAToPagedAttention finds the model's input by: token ids, or their
// embeddings (a vision-language model's text decoder), which it makes [tokens, hidden].
constexpr const char kTokensName[] = "input_ids";
constexpr const char kEmbeddingsName[] = "inputs_embeds";
constexpr const char kKeyCachePrefix[] = "key_cache.";
constexpr const char kValueCachePrefix[] = "value_cache.";

bool starts_with(const std::string& text, const char* prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

bool has_name_starting(const ov::Output<ov::Node>& output, const char* prefix) {
  for (const auto& name : output.get_names()) {
    if (starts_with(name, prefix)) return true;
  }
  return false;
}

// The grown caches `model` reads (SDPAToPagedAttention keeps the variables it no longer reads).
size_t grown_caches_in(const ov::Model& model) {
  size_t count = 0;
  for (const auto& op : model.get_ops()) {
    const auto read = std::dynamic_pointer_cast<ov::op::util::ReadValueBase>(op);
    count += read && is_grown_cache_id(read->get_variable_id());
  }
  return count;
}

// The tokens (ids, or embeddings): the one input that is not the KV cache's positions.
std::shared_ptr<ov::op::v0::Parameter> tokens_input_of(const ov::Model& model) {
  std::shared_ptr<ov::op::v0::Parameter> tokens;
  for (const auto& parameter : model.get_parameters()) {
    if (has_name_starting(parameter->output(0), kCachePositionsName)) continue;
    if (tokens) {
      throw std::invalid_argument("the model has inputs besides the tokens and the KV cache's positions");
    }
    tokens = parameter;
  }
  if (!tokens) {
    throw std::invalid_argument("the model has no tokens input");
  }
  return tokens;
}

std::shared_ptr<ov::op::v0::Parameter> parameter_named(const ov::Model& model, const std::string& name) {
  for (const auto& parameter : model.get_parameters()) {
    if (parameter->get_friendly_name() == name) return parameter;
  }
  throw std::invalid_argument("SDPAToPagedAttention left no input named " + name);
}

// Gives `output`'s consumers `shape` again, through a Reshape, where the rewrite changed it.
void keep_shape(const ov::Output<ov::Node>& output, const ov::PartialShape& shape) {
  if (output.get_partial_shape() == shape || !shape.is_static()) return;
  const ov::Shape sizes = shape.to_shape();
  const auto target =
      ov::op::v0::Constant::create(ov::element::i64, {sizes.size()}, std::vector<int64_t>(sizes.begin(), sizes.end()));
  const auto reshaped = std::make_shared<ov::op::v1::Reshape>(output, target, false);
  for (auto& consumer : output.get_target_inputs()) {
    if (consumer.get_node() != reshaped.get()) consumer.replace_source_output(reshaped);
  }
}

// The variable of the grown cache that an attention input reads: through the ops
// that repeat or convert the cache, to the Concat that grows it, whose first input
// is the cache read from its variable. Empty when the input is not in that form.
std::string cache_variable_of(ov::Output<ov::Node> value) {
  static const std::set<std::string> repeats = {"Reshape", "Broadcast", "Unsqueeze", "Convert", "Tile"};
  static const std::set<std::string> reads = {"Convert", "Gather"};
  std::shared_ptr<ov::Node> node = value.get_node_shared_ptr();
  while (repeats.count(node->get_type_name()) != 0) {
    node = node->input_value(0).get_node_shared_ptr();
  }
  if (std::string(node->get_type_name()) != "Concat") return {};
  node = node->input_value(0).get_node_shared_ptr();
  while (reads.count(node->get_type_name()) != 0) {
    node = node->input_value(0).get_node_shared_ptr();
  }
  const auto read = std::dynamic_pointer_cast<ov::op::util::ReadValueBase>(node);
  return read ? read->get_variable_id() : std::string();
}

// PagedAttentionExtension's inputs (OpenVINO 2026.4.1): query, key, value, key cache,
// value cache, then the sequence's bookkeeping.
constexpr size_t kQueryInput = 0;
constexpr size_t kValueInput = 2;
constexpr size_t kKeyCacheInput = 3;
constexpr size_t kValueCacheInput = 4;

// What an attention reads: the node of its queries, and the variables of its keys and values.
struct AttentionReads {
  std::shared_ptr<ov::Node> query;
  std::string keys;
  std::string values;
};

// What each attention reads, in the model's order.
std::vector<AttentionReads> caches_read_by_attention(const ov::Model& model) {
  std::vector<AttentionReads> reads;
  for (const auto& op : model.get_ordered_ops()) {
    if (std::string(op->get_type_name()) == "ScaledDotProductAttention") {
      reads.push_back(AttentionReads{op->input_value(0).get_node_shared_ptr(), cache_variable_of(op->input_value(1)),
                                     cache_variable_of(op->input_value(2))});
    }
  }
  return reads;
}

// Whether `node` is `ancestor` or computed from it within a few ops (the reshapes the
// rewrite puts before PagedAttention's query input).
bool reads_from(const std::shared_ptr<ov::Node>& node, const std::shared_ptr<ov::Node>& ancestor, int depth = 4) {
  if (node == ancestor) return true;
  if (depth == 0) return false;
  for (const auto& input : node->input_values()) {
    if (reads_from(input.get_node_shared_ptr(), ancestor, depth - 1)) return true;
  }
  return false;
}

// Names each cache input after the variable it takes the place of (kPagedCacheName),
// when every attention read a grown cache and each PagedAttention reads the queries of
// the attention at its place in the order: the model of one token moves a sequence
// between those variables and the blocks (one_token_model.h).
void name_caches_after_variables(ov::Model& model, const std::vector<AttentionReads>& reads) {
  std::vector<std::shared_ptr<ov::Node>> paged;
  for (const auto& op : model.get_ordered_ops()) {
    if (std::string(op->get_type_name()) == "PagedAttentionExtension") paged.push_back(op);
  }
  if (paged.size() != reads.size()) return;
  for (size_t i = 0; i < paged.size(); ++i) {
    if (reads[i].keys.empty() || reads[i].values.empty() ||
        !reads_from(paged[i]->input_value(kQueryInput).get_node_shared_ptr(), reads[i].query)) {
      return;
    }
  }
  for (size_t i = 0; i < paged.size(); ++i) {
    for (const auto& [input, variable] :
         {std::make_pair(kKeyCacheInput, reads[i].keys), std::make_pair(kValueCacheInput, reads[i].values)}) {
      ov::Output<ov::Node> cache = paged[i]->input_value(input);
      std::unordered_set<std::string> names = cache.get_names();
      names.insert(kPagedCacheName + variable);
      cache.set_names(names);
    }
  }
}

// Workaround, OpenVINO 2026.4.1: SDPAToPagedAttention lays the tokens of a call out as
// batch rows, one token each: it makes input_ids [tokens] (inputs_embeds [tokens,
// hidden]) and unsqueezes it at axis 1 for the model, flattens each attention's queries, keys and values [batch, 1,
// heads, size] with Reshape(x, {0, -1}), and shapes PagedAttention's output [tokens, heads * size] back with
// Reshape(out, {0, 1, -1, size}). An exported model fixes its batch at 1 and reshapes along the sequence, so a call of
// several tokens fails in that layout. These put the tokens back as one sequence of the batch of 1 the export has: the
// tokens [1, tokens] (embeddings [1, tokens, hidden]) into the model, [1, tokens, heads, size] -> [tokens, heads *
// size] into PagedAttention, and its output to [1, tokens, heads, size]. For one token the two layouts are the same.
void lay_out_as_one_sequence(ov::Model& model) {
  for (const auto& op : model.get_ordered_ops()) {
    if (std::string(op->get_type_name()) != "PagedAttentionExtension") continue;
    int64_t heads = 0, value_size = 0;  // the output's: the queries' heads, the values' size
    for (size_t input = kQueryInput; input <= kValueInput; ++input) {
      const auto flatten = std::dynamic_pointer_cast<ov::op::v1::Reshape>(op->input_value(input).get_node_shared_ptr());
      const ov::PartialShape shape = flatten ? flatten->get_input_partial_shape(0) : ov::PartialShape::dynamic();
      if (shape.rank().is_dynamic() || shape.size() != 4 || shape[2].is_dynamic() || shape[3].is_dynamic()) {
        throw std::invalid_argument("SDPAToPagedAttention fed PagedAttention input " + std::to_string(input) +
                                    " in a layout this runtime does not know (" + shape.to_string() + ")");
      }
      if (input == kQueryInput) heads = shape[2].get_length();
      if (input == kValueInput) value_size = shape[3].get_length();
      const int64_t width = shape[2].get_length() * shape[3].get_length();
      const auto flat = std::make_shared<ov::op::v1::Reshape>(
          flatten->input_value(0), ov::op::v0::Constant::create(ov::element::i64, {2}, std::vector<int64_t>{-1, width}),
          false);
      op->input(input).replace_source_output(flat);
    }
    const auto back =
        ov::op::v0::Constant::create(ov::element::i64, {4}, std::vector<int64_t>{1, -1, heads, value_size});
    for (auto& consumer : op->output(0).get_target_inputs()) {
      auto* reshape = dynamic_cast<ov::op::v1::Reshape*>(consumer.get_node());
      if (reshape == nullptr) {
        throw std::invalid_argument(std::string("SDPAToPagedAttention fed PagedAttention's output to a ") +
                                    consumer.get_node()->get_type_name() + ", not the Reshape this runtime knows");
      }
      reshape->input(1).replace_source_output(back);
      reshape->set_special_zero(false);
    }
  }
}

}  // namespace

void to_paged_attention(const std::shared_ptr<ov::Model>& model, const std::string& inference_precision) {
  if (grown_caches_in(*model) == 0) {
    throw std::invalid_argument("the model has no KV cache that grows by concatenation");
  }
  const auto tokens = tokens_input_of(*model);
  const auto tokens_names = tokens->output(0).get_names();
  const std::string tokens_friendly_name = tokens->get_friendly_name();
  const ov::PartialShape tokens_shape = tokens->get_partial_shape();
  // Token ids, or the embeddings of a vision-language model's text decoder, [1, tokens, hidden].
  const bool embeddings = tokens->get_element_type().is_real();
  // One token a call, or the tokens of one sequence: [1, tokens] (lay_out_as_one_sequence).
  const bool one_token = !embeddings && tokens_shape.is_static() && ov::shape_size(tokens_shape.to_shape()) == 1;
  const bool sequence = tokens_shape.rank().is_static() && tokens_shape.size() == (embeddings ? 3 : 2) &&
                        tokens_shape[0] == 1 && (!embeddings || tokens_shape[2].is_static());
  if (!one_token && !sequence) {
    throw std::invalid_argument("the tokens input is " + tokens_shape.to_string() +
                                (embeddings ? "; embeddings [1, tokens, hidden] are supported"
                                            : "; one token a call or [1, tokens] is supported"));
  }
  // Workaround, OpenVINO 2026.4.1 (workarounds.py: paged_attention_f16_several_tokens; no
  // upstream report found): at f16 the CPU plugin's PagedAttention gives NaN for a call of
  // two or more tokens and takes no f32 cache. Lowering refuses such programs; this is
  // for the load option.
  if (!one_token && inference_precision == "f16") {
    throw std::invalid_argument(
        "at inference_precision f16 OpenVINO 2026.4.1's CPU plugin computes calls of several tokens wrong (NaN) "
        "in this form");
  }
  const char* const input_name = embeddings ? kEmbeddingsName : kTokensName;
  std::vector<ov::PartialShape> result_shapes;
  for (const auto& result : model->get_results()) {
    result_shapes.push_back(result->get_input_partial_shape(0));
  }
  tokens->output(0).set_names({input_name});
  tokens->set_friendly_name(input_name);

  const std::vector<AttentionReads> reads = caches_read_by_attention(*model);
  ov::pass::Manager manager;
  manager.register_pass<ov::pass::SDPAToPagedAttention>();
  manager.run_passes(model);
  if (grown_caches_in(*model) != 0) {
    throw std::invalid_argument("SDPAToPagedAttention left a grown KV cache as a state");
  }
  name_caches_after_variables(*model, reads);

  lay_out_as_one_sequence(*model);

  // The transformation flattens the tokens to one dimension (embeddings to [tokens,
  // hidden]) and unsqueezes them into batch rows for the model; the delegate's input
  // keeps its shape, at the same index, and the model reads it as the one sequence it
  // is ([1, tokens], [1, tokens, hidden]). Tokens of another rank (one token) are
  // flattened inside the model.
  const auto flattened = parameter_named(*model, input_name);
  const auto kept = std::make_shared<ov::op::v0::Parameter>(flattened->get_element_type(), tokens_shape);
  kept->set_friendly_name(tokens_friendly_name);
  kept->output(0).set_names(tokens_names);
  for (auto& consumer : flattened->output(0).get_target_inputs()) {
    const bool unsqueeze = dynamic_cast<ov::op::v0::Unsqueeze*>(consumer.get_node()) != nullptr;
    if (sequence && unsqueeze) {
      consumer.get_node()->output(0).replace(kept->output(0));
    } else if (!one_token) {
      throw std::invalid_argument(std::string("SDPAToPagedAttention fed the tokens to a ") +
                                  consumer.get_node()->get_type_name() + ", not the Unsqueeze this runtime knows");
    }
  }
  const std::vector<int64_t> flat_shape =
      embeddings ? std::vector<int64_t>{-1, tokens_shape[2].get_length()} : std::vector<int64_t>{-1};
  const auto flat = std::make_shared<ov::op::v1::Reshape>(
      kept, ov::op::v0::Constant::create(ov::element::i64, {flat_shape.size()}, flat_shape), false);
  flattened->output(0).replace(flat->output(0));
  model->replace_parameter(static_cast<size_t>(model->get_parameter_index(flattened)), kept);
  model->validate_nodes_and_infer_types();
  const auto& results = model->get_results();
  for (size_t i = 0; i < results.size(); ++i) {
    keep_shape(results[i]->input_value(0), result_shapes[i]);
  }
  model->validate_nodes_and_infer_types();
}

namespace {

// What to_paged_attention adds, by input name; the caches are named by prefix.
enum class PagedInput {
  kPastLens,
  kSubsequenceBegins,
  kBlockIndices,
  kBlockIndicesBegins,
  kMaxContextLen,
  kPositionIds
};

const std::map<std::string, PagedInput>& paged_inputs_by_name() {
  static const std::map<std::string, PagedInput> names = {
      {"past_lens", PagedInput::kPastLens},
      {"subsequence_begins", PagedInput::kSubsequenceBegins},
      {"block_indices", PagedInput::kBlockIndices},
      {"block_indices_begins", PagedInput::kBlockIndicesBegins},
      {"max_context_len", PagedInput::kMaxContextLen},
      {"position_ids", PagedInput::kPositionIds},
  };
  return names;
}

bool is_cache_input(const std::string& name) {
  return starts_with(name, kKeyCachePrefix) || starts_with(name, kValueCachePrefix);
}

// The name SDPAToPagedAttention gave an input (a cache also carries kPagedCacheName);
// empty for the delegate's own inputs.
std::string paged_name_of(const ov::Output<const ov::Node>& port) {
  for (const auto& name : port.get_names()) {
    if (paged_inputs_by_name().count(name) != 0 || is_cache_input(name)) return name;
  }
  return {};
}

bool is_paged_input(const ov::Output<const ov::Node>& port) {
  return !paged_name_of(port).empty();
}

// The sizes of a cache block, [heads, rows, size], when the device fixed them.
std::optional<ov::Shape> block_shape_of(const ov::Output<const ov::Node>& port) {
  const ov::PartialShape& shape = port.get_partial_shape();
  if (shape.rank().is_dynamic() || shape.size() != 4) return std::nullopt;
  ov::Shape block;
  for (size_t d = 1; d < 4; ++d) {
    if (shape[d].is_dynamic()) return std::nullopt;
    block.push_back(static_cast<size_t>(shape[d].get_length()));
  }
  return block;
}

// The rows a u8 key block adds to its positions (OpenVINO 2026.4.1's CPU plugin): it
// quantizes keys by channel over each block, and keeps the channels' scales and zero
// points, f32, in rows of bytes before the positions (ConvertPagedAttnInputs' shape
// function in its transformation pipeline). Its values are quantized by token: each
// row starts with its own scale and zero point, so their blocks keep one row a position.
constexpr size_t kKeyRowsForScales = 2 * sizeof(float);

bool is_key_cache(const ov::Output<const ov::Node>& port) {
  return starts_with(paged_name_of(port), kKeyCachePrefix);
}

// The positions a block holds: the rows of each value block, which every key block
// has too, besides the rows of a u8 key block's scales. nullopt, after a log line,
// for another layout (the GPU's keys, transposed) or no cache at all.
std::optional<size_t> positions_per_block(const std::vector<ov::Output<const ov::Node>>& inputs,
                                          const std::vector<std::pair<size_t, ov::Shape>>& caches) {
  std::optional<size_t> positions;
  for (const auto& [index, block] : caches) {
    if (is_key_cache(inputs[index])) continue;
    if (positions && *positions != block[1]) {
      ET_LOG(Error, "OpenVINO delegate: paged_attention: value caches in blocks of %zu and %zu rows", *positions,
             block[1]);
      return std::nullopt;
    }
    positions = block[1];
  }
  if (!positions) {
    ET_LOG(Error, "OpenVINO delegate: paged_attention: the model has PagedAttention inputs but no value cache");
    return std::nullopt;
  }
  for (const auto& [index, block] : caches) {
    const ov::Output<const ov::Node>& port = inputs[index];
    if (!is_key_cache(port)) continue;
    const bool scales_as_rows =
        port.get_element_type() == ov::element::u8 && block[1] == *positions + kKeyRowsForScales;
    if (block[1] != *positions && !scales_as_rows) {
      ET_LOG(Error,
             "OpenVINO delegate: paged_attention: key cache '%s' (%s %s) is not laid out in blocks of %zu positions "
             "[heads, positions, size] (u8: with %zu rows of scales); the device is not supported",
             port.get_any_name().c_str(), port.get_element_type().to_string().c_str(),
             port.get_partial_shape().to_string().c_str(), *positions, kKeyRowsForScales);
      return std::nullopt;
    }
  }
  return positions;
}

// Whether every block holds a grown cache's rows as they are, [heads, positions, size]
// of one float type: then a sequence moves between a state and blocks by copying rows.
// A u8 cache's blocks also carry scales the CPU plugin computes over each block.
bool laid_out_like_state(const std::vector<ov::Output<const ov::Node>>& inputs,
                         const std::vector<std::pair<size_t, ov::Shape>>& caches) {
  for (const auto& [index, block] : caches) {
    if (!inputs[index].get_element_type().is_real() || block != caches.front().second) return false;
  }
  return true;
}

ov::Tensor zeroed(const ov::element::Type& type, const ov::Shape& shape) {
  ov::Tensor tensor(type, shape);
  std::memset(tensor.data(), 0, tensor.get_byte_size());
  return tensor;
}

}  // namespace

Result<std::optional<PagedCache>> PagedCache::find(const ov::CompiledModel& compiled, ov::InferRequest& request,
                                                   int64_t capacity) {
  const auto& inputs = compiled.inputs();
  size_t first = inputs.size();
  for (size_t i = 0; i < inputs.size() && first == inputs.size(); ++i) {
    if (is_paged_input(inputs[i])) first = i;
  }
  if (first == inputs.size()) {
    return std::optional<PagedCache>();
  }
  PagedCache cache;
  cache.first_input_ = first;
  std::vector<std::pair<size_t, ov::Shape>> caches;  // input index, block shape
  for (size_t i = first; i < inputs.size(); ++i) {
    const ov::Output<const ov::Node>& port = inputs[i];
    const std::string name = paged_name_of(port);
    if (is_cache_input(name)) {
      const std::optional<ov::Shape> shape = block_shape_of(port);
      if (!shape || shape->at(1) == 0) {
        ET_LOG(Error, "OpenVINO delegate: paged_attention: cache input '%s' (%s) has no static block shape",
               name.c_str(), port.get_partial_shape().to_string().c_str());
        return Error::InvalidArgument;
      }
      caches.emplace_back(i, *shape);
      continue;
    }
    const auto found = paged_inputs_by_name().find(name);
    const bool int64_positions = found != paged_inputs_by_name().end() && found->second == PagedInput::kPositionIds;
    const ov::element::Type expected = int64_positions ? ov::element::i64 : ov::element::i32;
    if (found == paged_inputs_by_name().end() || port.get_element_type() != expected) {
      ET_LOG(Error, "OpenVINO delegate: paged_attention: input %zu ('%s', %s) is not one this runtime fills", i,
             port.get_any_name().c_str(), port.get_element_type().to_string().c_str());
      return Error::InvalidArgument;
    }
  }
  const std::optional<size_t> block_size = positions_per_block(inputs, caches);
  if (!block_size) {
    return Error::InvalidArgument;
  }
  cache.block_size_ = static_cast<int64_t>(*block_size);
  cache.rows_like_state_ = laid_out_like_state(inputs, caches);
  const size_t blocks = static_cast<size_t>((capacity + cache.block_size_ - 1) / cache.block_size_);
  cache.past_lens_ = zeroed(ov::element::i32, {1});
  cache.subsequence_begins_ = zeroed(ov::element::i32, {2});
  cache.block_indices_begins_ = zeroed(ov::element::i32, {2});
  cache.max_context_len_ = zeroed(ov::element::i32, {});
  ov::Tensor block_indices(ov::element::i32, {blocks});
  for (size_t b = 0; b < blocks; ++b) {
    block_indices.data<int32_t>()[b] = static_cast<int32_t>(b);
  }
  for (size_t k = 1; k <= blocks; ++k) {
    cache.first_blocks_.emplace_back(block_indices, ov::Coordinate{0}, ov::Coordinate{k});
  }
  // The positions of a call, as many as it brings: views of one tensor of `capacity`.
  ov::Tensor position_ids(ov::element::i64, {static_cast<size_t>(capacity)});
  for (size_t k = 1; k <= static_cast<size_t>(capacity); ++k) {
    cache.first_positions_.emplace_back(position_ids, ov::Coordinate{0}, ov::Coordinate{k});
  }
  // Each cache in blocks of its own shape: a u8 cache's keys and values differ.
  for (const auto& [index, block] : caches) {
    const ov::Output<const ov::Node>& port = inputs[index];
    ov::Shape shape{blocks};
    shape.insert(shape.end(), block.begin(), block.end());
    cache.blocks_.push_back(zeroed(port.get_element_type(), shape));
    request.set_tensor(port, cache.blocks_.back());
    for (const auto& other : port.get_names()) {
      if (starts_with(other, kPagedCacheName)) {
        cache.blocks_of_variable_.emplace(other.substr(std::strlen(kPagedCacheName)), cache.blocks_.size() - 1);
      }
    }
  }
  for (size_t i = first; i < inputs.size(); ++i) {
    const ov::Output<const ov::Node>& port = inputs[i];
    const std::string name = paged_name_of(port);
    if (is_cache_input(name)) {
      continue;
    }
    switch (paged_inputs_by_name().at(name)) {
      case PagedInput::kPastLens:
        request.set_tensor(port, cache.past_lens_);
        break;
      case PagedInput::kSubsequenceBegins:
        request.set_tensor(port, cache.subsequence_begins_);
        break;
      case PagedInput::kBlockIndices:
        cache.block_indices_port_ = port;
        break;
      case PagedInput::kBlockIndicesBegins:
        request.set_tensor(port, cache.block_indices_begins_);
        break;
      case PagedInput::kMaxContextLen:
        request.set_tensor(port, cache.max_context_len_);
        break;
      case PagedInput::kPositionIds:
        cache.position_ids_port_ = port;
        break;
    }
  }
  if (!cache.block_indices_port_.get_node() || !cache.position_ids_port_.get_node()) {
    ET_LOG(Error, "OpenVINO delegate: paged_attention: the model lacks block_indices or position_ids");
    return Error::InvalidArgument;
  }
  return std::optional<PagedCache>(std::move(cache));
}

ov::Tensor PagedCache::blocks_of(const std::string& variable) const {
  const auto found = blocks_of_variable_.find(variable);
  return found == blocks_of_variable_.end() ? ov::Tensor() : blocks_[found->second];
}

namespace {

// Copies each head's rows of `positions` positions between a grown cache's value,
// [1, heads, positions, size], and blocks [blocks, heads, block size, size], one way or
// the other.
void copy_rows(const ov::Tensor& from, ov::Tensor& to, const ov::Shape& blocks_shape, size_t positions,
               bool into_blocks) {
  const size_t heads = blocks_shape[1], block_size = blocks_shape[2];
  const size_t row_bytes = blocks_shape[3] * from.get_element_type().size();
  const auto* source = static_cast<const uint8_t*>(from.data());
  auto* target = static_cast<uint8_t*>(to.data());
  for (size_t h = 0; h < heads; ++h) {
    for (size_t p = 0; p < positions; ++p) {
      const size_t in_blocks = (((p / block_size) * heads + h) * block_size + p % block_size) * row_bytes;
      const size_t in_sequence = (h * positions + p) * row_bytes;
      std::memcpy(target + (into_blocks ? in_blocks : in_sequence), source + (into_blocks ? in_sequence : in_blocks),
                  row_bytes);
    }
  }
}

}  // namespace

void PagedCache::write_sequence(const ov::Tensor& sequence, ov::Tensor& blocks) {
  copy_rows(sequence, blocks, blocks.get_shape(), sequence.get_shape().at(2), true);
}

ov::Tensor PagedCache::read_sequence(const ov::Tensor& blocks, size_t positions) {
  const ov::Shape shape = blocks.get_shape();
  ov::Tensor sequence(blocks.get_element_type(), {1, shape[1], positions, shape[3]});
  copy_rows(blocks, sequence, shape, positions, false);
  return sequence;
}

void PagedCache::before_call(ov::InferRequest& request, int64_t start, int64_t end) {
  const int64_t count = end - start;
  const size_t blocks = static_cast<size_t>((end + block_size_ - 1) / block_size_);
  past_lens_.data<int32_t>()[0] = static_cast<int32_t>(start);
  subsequence_begins_.data<int32_t>()[1] = static_cast<int32_t>(count);
  block_indices_begins_.data<int32_t>()[1] = static_cast<int32_t>(blocks);
  max_context_len_.data<int32_t>()[0] = static_cast<int32_t>(end);
  if (blocks != bound_blocks_) {  // the view of that many block indices, bound only when it changes
    request.set_tensor(block_indices_port_, first_blocks_.at(blocks - 1));
    bound_blocks_ = blocks;
  }
  auto* positions = first_positions_.front().data<int64_t>();  // the start of every view
  for (int64_t i = 0; i < count; ++i) {
    positions[i] = start + i;
  }
  if (static_cast<size_t>(count) != bound_positions_) {  // bound only when the count changes
    request.set_tensor(position_ids_port_, first_positions_.at(static_cast<size_t>(count) - 1));
    bound_positions_ = static_cast<size_t>(count);
  }
}

}  // namespace executorch_openvino
