#include "one_token_model.h"

#include <map>
#include <stdexcept>
#include <string>

#include <executorch/runtime/platform/log.h>

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Result;
using executorch::runtime::Span;

std::optional<CacheSequence::CountSource> OneTokenModel::tokens_of(const ModelRun& general) {
  if (!general.cache || !general.cache->count_source()) {
    ET_LOG(Debug, "OpenVINO delegate: one_token_model: no KV cache grows by the tokens' length here; not used");
    return std::nullopt;
  }
  const CacheSequence::CountSource tokens = *general.cache->count_source();
  const ov::PartialShape shape = general.compiled.inputs().at(tokens.input).get_partial_shape();
  if (shape.rank().is_static() && tokens.dim < shape.size() && shape[tokens.dim].get_min_length() > 1) {
    ET_LOG(Debug, "OpenVINO delegate: one_token_model: calls bring at least %lld tokens here; not used",
           static_cast<long long>(shape[tokens.dim].get_min_length()));
    return std::nullopt;
  }
  return tokens;
}

void OneTokenModel::fix_tokens_at_one(ov::Model& model, CacheSequence::CountSource tokens) {
  ov::PartialShape shape = model.input(tokens.input).get_partial_shape();
  if (shape.rank().is_dynamic() || tokens.dim >= shape.size()) {
    throw std::invalid_argument("input " + std::to_string(tokens.input) + " has no dimension " +
                                std::to_string(tokens.dim) + " to fix at 1");
  }
  shape[tokens.dim] = 1;
  // Set on the parameter, not through ov::Model::reshape: that also runs SmartReshape,
  // whose MatMul rewrites leave OpenVINO 2026.4.1's CPU plugin holding the 4-bit weights
  // of some matrix products (attention output, down projection) as f32 constants.
  model.get_parameters().at(tokens.input)->set_partial_shape(shape);
  model.validate_nodes_and_infer_types();
}

namespace {

// Whether a grown cache's values can move to and from `blocks`: the same element
// type, heads and size, one sequence. Logs why not.
bool fits_in_blocks(ov::VariableState& state, const ov::Tensor& blocks) {
  if (!blocks) {
    ET_LOG(Error, "OpenVINO delegate: one_token_model: no PagedAttention cache takes the place of '%s'",
           state.get_name().c_str());
    return false;
  }
  const ov::Tensor value = state.get_state();
  const ov::Shape shape = value.get_shape();
  const ov::Shape block = blocks.get_shape();
  if (value.get_element_type() != blocks.get_element_type() || shape.size() != 4 || shape[0] != 1 ||
      shape[1] != block[1] || shape[3] != block[3]) {
    ET_LOG(Error, "OpenVINO delegate: one_token_model: cache '%s' (%s %s) does not fit blocks %s %s",
           state.get_name().c_str(), value.get_element_type().to_string().c_str(), shape.to_string().c_str(),
           blocks.get_element_type().to_string().c_str(), block.to_string().c_str());
    return false;
  }
  return true;
}

}  // namespace

Result<OneTokenModel> OneTokenModel::create(ov::CompiledModel compiled, ModelRun& general,
                                            CacheSequence::CountSource tokens) {
  Result<ModelRun> run = ModelRun::create(std::move(compiled));
  if (!run.ok()) {
    return run.error();
  }
  if (!run->cache) {
    ET_LOG(Error, "OpenVINO delegate: one_token_model: the model of one token lost the KV cache's positions input");
    return Error::InvalidArgument;
  }
  if (run->paged && !run->paged->rows_like_state()) {
    // Lowering refuses this (preprocessing/paged_attention.py); a program from elsewhere gets here.
    ET_LOG(Error,
           "OpenVINO delegate: one_token_model: the PagedAttention blocks of the model of one token do not hold "
           "the stateful cache's rows as they are (a u8 cache keeps scales in them): prompts' cache cannot move "
           "into them");
    return Error::InvalidArgument;
  }
  OneTokenModel one_token(std::move(*run), tokens);
  std::map<std::string, ov::VariableState> by_name;
  for (auto& state : one_token.run_.request.query_state()) {
    by_name.emplace(state.get_name(), state);
  }
  for (auto& state : general.request.query_state()) {
    const auto found = by_name.find(state.get_name());
    if (found == by_name.end() && is_grown_cache(state) && one_token.run_.paged) {
      ov::Tensor blocks = one_token.run_.paged->blocks_of(state.get_name());
      if (!fits_in_blocks(state, blocks)) {
        return Error::InvalidArgument;
      }
      one_token.blocks_.push_back(CacheBlocks{state, blocks});
      continue;
    }
    if (found == by_name.end()) {
      ET_LOG(Error, "OpenVINO delegate: one_token_model: state '%s' is missing from the model of one token",
             state.get_name().c_str());
      return Error::InvalidArgument;
    }
    one_token.states_.push_back(StatePair{state, found->second, is_grown_cache(state)});
  }
  if (one_token.states_.size() != by_name.size()) {
    ET_LOG(Error, "OpenVINO delegate: one_token_model: the model of one token has %zu states, the other %zu",
           by_name.size(), one_token.states_.size());
    return Error::InvalidArgument;
  }
  return one_token;
}

bool OneTokenModel::brings_one_token(Span<EValue*> inputs) const {
  // Anything else goes to the general model, whose checks name what is wrong.
  if (tokens_.input >= inputs.size() || !inputs[tokens_.input]->isTensor()) {
    return false;
  }
  const auto& tensor = inputs[tokens_.input]->toTensor();
  return tokens_.dim < static_cast<size_t>(tensor.dim()) && tensor.size(tokens_.dim) == 1;
}

ModelRun& OneTokenModel::pick(ModelRun& general, Span<EValue*> inputs) {
  const bool one_token = brings_one_token(inputs);
  if (one_token != holds_sequence_) {
    if (one_token) {
      move_sequence(general, run_, inputs);
    } else {
      move_sequence(run_, general, inputs);
    }
    holds_sequence_ = one_token;  // only once every state moved: else `from` still holds it
  }
  return one_token ? run_ : general;
}

void OneTokenModel::move_sequence(ModelRun& from, ModelRun& to, Span<EValue*> inputs) {
  const bool to_one_token = &to == &run_;
  // A call at position 0 empties the grown caches: moving them would be wasted.
  const bool starts_again = to.cache->starts_again(inputs);
  for (StatePair& pair : states_) {
    ov::VariableState& source = to_one_token ? pair.general : pair.one_token;
    ov::VariableState& target = to_one_token ? pair.one_token : pair.general;
    if (pair.grown_cache && starts_again) {
      target.reset();
    } else {
      target.set_state(source.get_state());
    }
  }
  // A sequence in blocks: its positions are the ones the cache of `from` holds.
  const int64_t filled = from.cache->filled();
  for (CacheBlocks& pair : blocks_) {
    if (to_one_token) {
      if (!starts_again && filled > 0) {
        PagedCache::write_sequence(pair.general.get_state(), pair.blocks);
      }
    } else if (starts_again || filled <= 0) {
      pair.general.reset();
    } else {
      pair.general.set_state(PagedCache::read_sequence(pair.blocks, static_cast<size_t>(filled)));
    }
  }
  to.cache->continue_from(*from.cache);
}

}  // namespace executorch_openvino
