#include "kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <executorch/runtime/platform/log.h>

#include <executorch_openvino/backend.h>

#include "openvino_error.h"
#include "tensor_binding.h"

namespace executorch_openvino {

using executorch::aten::ScalarType;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Result;

namespace {

struct Marker {
  int64_t capacity = -1;
  int64_t count_input = -1;  // -1: the positions input holds every position
  int64_t count_dim = -1;
};

// "executorch_openvino.cache_positions.max=256" -> capacity 256;
// "...max=256.count=1:1" -> also: count from input 1's dimension 1. Capacity -1
// when the name is not ours or does not parse.
Marker marker_in(const std::string& name) {
  Marker marker;
  const std::string prefix = std::string(kCachePositionsName) + ".max=";
  if (name.compare(0, prefix.size(), prefix) != 0) {
    return marker;
  }
  char* end = nullptr;
  marker.capacity = std::strtoll(name.c_str() + prefix.size(), &end, 10);
  const std::string count = ".count=";
  if (*end == '\0') {
    return marker;
  }
  if (name.compare(end - name.c_str(), count.size(), count) != 0) {
    return Marker{};
  }
  marker.count_input = std::strtoll(end + count.size(), &end, 10);
  if (*end != ':') {
    return Marker{};
  }
  marker.count_dim = std::strtoll(end + 1, &end, 10);
  if (*end != '\0' || marker.count_input < 0 || marker.count_dim < 0) {
    return Marker{};
  }
  return marker;
}

int64_t position_at(const executorch::aten::Tensor& tensor, size_t index) {
  return tensor.scalar_type() == ScalarType::Long ? tensor.const_data_ptr<int64_t>()[index]
                                                  : tensor.const_data_ptr<int32_t>()[index];
}

}  // namespace

namespace {

// A grown cache starts empty along its position axis, and along no other: the
// axis is the one dimension of size 0 in its initial value; -1 when that is not so.
int64_t position_axis(ov::VariableState& state) {
  const ov::Shape shape = state.get_state().get_shape();
  int64_t axis = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 0) continue;
    if (axis >= 0) return -1;
    axis = static_cast<int64_t>(d);
  }
  return axis;
}

bool ends_with(const std::string& text, const char* suffix) {
  const size_t length = std::strlen(suffix);
  return text.size() > length && text.compare(text.size() - length, length, suffix) == 0;
}

}  // namespace

bool is_grown_cache_id(const std::string& variable_id) {
  return ends_with(variable_id, kGrownCacheSuffix);
}

bool is_per_sequence_id(const std::string& variable_id) {
  return ends_with(variable_id, kPerSequenceSuffix);
}

namespace {

std::vector<CacheSequence::PerSequenceInput> per_sequence_inputs_of(const ov::CompiledModel& compiled) {
  std::vector<CacheSequence::PerSequenceInput> found;
  const auto& inputs = compiled.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].get_names().count(kPerSequenceInputName) != 0) {
      found.push_back({i, input_label(inputs[i], i), {}});
    }
  }
  return found;
}

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(sizes[d]);
  }
  return text + "]";
}

}  // namespace

bool is_grown_cache(const ov::VariableState& state) {
  return is_grown_cache_id(state.get_name());
}

Result<std::optional<CacheSequence>> CacheSequence::find(const ov::CompiledModel& compiled, ov::InferRequest& request) {
  std::vector<ov::VariableState> grown_states;
  std::vector<ov::VariableState> per_sequence;
  // Only the grown caches and the per-sequence values empty at a restart: other
  // buffers kept as state keep their values, as they would in eager PyTorch.
  for (auto& state : request.query_state()) {
    if (is_grown_cache(state)) grown_states.push_back(state);
    if (is_per_sequence_id(state.get_name())) per_sequence.push_back(state);
  }
  const auto& inputs = compiled.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const auto& name : inputs[i].get_names()) {
      if (name.compare(0, std::strlen(kCachePositionsName), kCachePositionsName) != 0) continue;
      const Marker marker = marker_in(name);
      // Without its checks a grown cache computes wrong values when a call skips
      // positions, so a marker that does not parse fails the load.
      if (marker.capacity <= 0 || marker.count_input >= static_cast<int64_t>(inputs.size())) {
        ET_LOG(Error, "OpenVINO blob: the KV cache marker '%s' does not parse; the program is damaged", name.c_str());
        return Error::InvalidArgument;
      }
      CacheSequence sequence;
      sequence.positions_input_ = i;
      sequence.capacity_ = marker.capacity;
      if (marker.count_input >= 0) {
        sequence.count_source_ =
            CountSource{static_cast<size_t>(marker.count_input), static_cast<size_t>(marker.count_dim)};
      }
      for (auto& state : grown_states) {
        sequence.grown_caches_.push_back(GrownCache{state, position_axis(state)});
      }
      sequence.per_sequence_ = std::move(per_sequence);
      sequence.per_sequence_inputs_ = per_sequence_inputs_of(compiled);
      return std::optional<CacheSequence>(std::move(sequence));
    }
  }
  if (!grown_states.empty() || !per_sequence.empty()) {
    ET_LOG(Error,
           "OpenVINO blob: state '%s' needs a positions input named %s, which is missing; the program is damaged",
           (grown_states.empty() ? per_sequence : grown_states).front().get_name().c_str(), kCachePositionsName);
    return Error::InvalidArgument;
  }
  return std::optional<CacheSequence>();
}

bool CacheSequence::starts_again(executorch::runtime::Span<EValue*> inputs) const {
  if (positions_input_ >= inputs.size() || !inputs[positions_input_]->isTensor()) {
    return false;
  }
  const auto& tensor = inputs[positions_input_]->toTensor();
  const bool integer = tensor.scalar_type() == ScalarType::Long || tensor.scalar_type() == ScalarType::Int;
  // Read before the input bindings check the call: an input without memory is theirs to refuse.
  return integer && tensor.numel() > 0 && tensor.const_data_ptr() != nullptr && position_at(tensor, 0) == 0;
}

Error CacheSequence::before_call(executorch::runtime::Span<EValue*> inputs) {
  const EValue& positions = *inputs[positions_input_];
  if (!positions.isTensor()) {
    return Error::InvalidArgument;
  }
  const auto& tensor = positions.toTensor();
  if (tensor.scalar_type() != ScalarType::Long && tensor.scalar_type() != ScalarType::Int) {
    return Error::InvalidArgument;  // the input binding names the dtype it expects
  }
  const size_t listed = static_cast<size_t>(tensor.numel());
  size_t count = listed;
  if (count_source_) {
    const EValue& counted = *inputs[count_source_->input];
    if (!counted.isTensor() || count_source_->dim >= static_cast<size_t>(counted.toTensor().dim())) {
      return Error::InvalidArgument;
    }
    count = static_cast<size_t>(counted.toTensor().size(count_source_->dim));
  }
  if (count == 0 || listed == 0 || tensor.const_data_ptr() == nullptr) {
    return Error::InvalidArgument;
  }
  // Bounds before consecutiveness: within them, start + count cannot overflow.
  const int64_t start = position_at(tensor, 0);
  if (start < 0 || count > static_cast<size_t>(capacity_) || start > capacity_ - static_cast<int64_t>(count)) {
    ET_LOG(Error, "OpenVINO delegate: %zu positions from %lld do not fit in the KV cache's %lld positions", count,
           static_cast<long long>(start), static_cast<long long>(capacity_));
    return Error::InvalidArgument;
  }
  for (size_t i = 1; i < listed; ++i) {
    if (position_at(tensor, i) != start + static_cast<int64_t>(i)) {
      ET_LOG(Error, "OpenVINO delegate: the KV cache takes consecutive positions; got %lld after %lld",
             static_cast<long long>(position_at(tensor, i)), static_cast<long long>(position_at(tensor, i - 1)));
      return Error::InvalidArgument;
    }
  }
  ET_CHECK_OK_OR_RETURN_ERROR(keep_per_sequence_sizes(inputs, start));
  if (start == 0) {
    if (filled_ != 0) {
      for (auto& cache : grown_caches_) {
        cache.state.reset();
      }
      for (auto& state : per_sequence_) {
        state.reset();
      }
    }
  } else if (filled_ == kUnknown) {
    ET_LOG(Error, "OpenVINO delegate: a call failed, so the KV cache must start again at position 0; got %lld",
           static_cast<long long>(start));
    return Error::InvalidArgument;
  } else if (start < filled_) {
    ET_CHECK_OK_OR_RETURN_ERROR(trim_to(start));
  } else if (start != filled_) {
    ET_LOG(Error,
           "OpenVINO delegate: the KV cache holds positions 0-%lld; a call must continue at position "
           "%lld, go back to an earlier one, or start again at 0, got %lld",
           static_cast<long long>(filled_ - 1), static_cast<long long>(filled_), static_cast<long long>(start));
    return Error::InvalidArgument;
  }
  pending_start_ = start;
  pending_end_ = start + static_cast<int64_t>(count);
  return Error::Ok;
}

Error CacheSequence::keep_per_sequence_sizes(executorch::runtime::Span<EValue*> inputs, int64_t start) {
  // A call that does not continue the sequence is refused below, for that reason.
  const bool continues = start > 0 && filled_ != kUnknown && start <= filled_;
  for (auto& kept : per_sequence_inputs_) {
    if (kept.input >= inputs.size() || !inputs[kept.input]->isTensor()) {
      return Error::InvalidArgument;  // the input bindings have checked it
    }
    const auto sizes = inputs[kept.input]->toTensor().sizes();
    if (start == 0) {
      kept.sizes.assign(sizes.begin(), sizes.end());
      continue;
    }
    if (!continues || std::equal(sizes.begin(), sizes.end(), kept.sizes.begin(), kept.sizes.end())) {
      continue;
    }
    const std::vector<int64_t> given(sizes.begin(), sizes.end());
    ET_LOG(Error,
           "OpenVINO delegate: %s has sizes %s at position %lld, but its sequence started at position 0 with %s: "
           "the values computed from it are kept for the whole sequence; start again at position 0 to change it",
           kept.label.c_str(), sizes_text(given).c_str(), static_cast<long long>(start),
           sizes_text(kept.sizes).c_str());
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Error CacheSequence::trim_to(int64_t positions) {
  // A chat application going back in its history: the caches keep positions
  // 0..positions-1, as eager PyTorch attends only up to the position it writes.
  for (auto& cache : grown_caches_) {
    if (cache.axis < 0) {
      ET_LOG(Error, "OpenVINO delegate: KV cache '%s' has no single position axis; start again at position 0",
             cache.state.get_name().c_str());
      return Error::InvalidArgument;
    }
  }
  try {
    for (auto& cache : grown_caches_) {
      const ov::Tensor held = cache.state.get_state();
      ov::Coordinate begin(held.get_shape().size(), 0);
      ov::Coordinate end(held.get_shape());
      end[static_cast<size_t>(cache.axis)] = static_cast<size_t>(positions);
      // Copy the kept part into a dense tensor first: get_state can be a view of the
      // state's own memory (the CPU plugin's plain states, OpenVINO 2026.4.1), which
      // set_state would then overwrite while reading it. Only the KV-cache states the
      // CPU plugin fuses into its attention hand out a copy, and the API cannot tell
      // which kind a state is. The copy is a small part of a cut (about 1 ms of a call
      // going back at dim 1024, benchmarks/investigations/llm_going_back.py, 2026-12-05).
      ov::Shape kept_shape = held.get_shape();
      kept_shape[static_cast<size_t>(cache.axis)] = static_cast<size_t>(positions);
      ov::Tensor kept(held.get_element_type(), kept_shape);
      ov::Tensor(held, begin, end).copy_to(kept);
      cache.state.set_state(kept);
    }
  } catch (const std::exception& e) {
    filled_ = kUnknown;
    ET_LOG(Error, "OpenVINO delegate: going back to position %lld failed: %s; start again at position 0",
           static_cast<long long>(positions), openvino_reason(e).c_str());
    return Error::InvalidArgument;
  }
  filled_ = positions;
  return Error::Ok;
}

}  // namespace executorch_openvino
