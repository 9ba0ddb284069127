#include "layer_events.h"

#include <cstdio>
#include <vector>

#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/platform/platform.h>
#include <openvino/runtime/profiling_info.hpp>
#include <openvino/runtime/properties.hpp>

#include "openvino_error.h"

namespace executorch_openvino {

namespace {

using executorch::runtime::DebugHandle;
using executorch::runtime::EventTracer;

// Where OpenVINO's runtime model keeps the precision a layer runs at (its rt_info).
constexpr const char* kRuntimePrecision = "runtimePrecision";

// ExecuTorch's ticks in `microseconds`: a tick is numerator / denominator ns.
et_timestamp_t ticks_in(long long microseconds) {
  const et_tick_ratio_t ratio = executorch::runtime::pal_ticks_to_ns_multiplier();
  return static_cast<et_timestamp_t>(microseconds) * 1000 * ratio.denominator / ratio.numerator;
}

// Appends `text` as a JSON string. OpenVINO's names are identifiers, but a
// quote or a control character must still not break the metadata.
void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

bool counts_layer_times(const ov::CompiledModel& compiled) noexcept {
  try {
    return compiled.get_property(ov::enable_profiling);
  } catch (const std::exception&) {
    return false;
  }
}

LayerEvents::LayerEvents(const ov::CompiledModel& compiled) {
  try {
    for (const auto& layer : compiled.get_runtime_model()->get_ordered_ops()) {
      const auto& info = layer->get_rt_info();
      const auto precision = info.find(kRuntimePrecision);
      if (precision != info.end()) {
        precision_by_layer_.emplace(layer->get_friendly_name(), precision->second.as<std::string>());
      }
    }
  } catch (const std::exception& e) {
    // Profiling must not stop a load: the events then name no precision.
    precision_by_layer_.clear();
    log_openvino_error("OpenVINO delegate: the layers' precisions cannot be read; the layer events name none", e);
  }
}

void LayerEvents::log(EventTracer* tracer, const ov::InferRequest& request, et_timestamp_t inference_start) {
  std::vector<ov::ProfilingInfo> layers;
  try {
    layers = request.get_profiling_info();
  } catch (const std::exception& e) {
    // Profiling must not fail a call that computed its outputs.
    if (!told_unreadable_) {
      log_openvino_error("OpenVINO delegate: the layers' times cannot be read; no layer events", e);
      told_unreadable_ = true;
    }
    return;
  }
  et_timestamp_t start = inference_start;
  for (const ov::ProfilingInfo& layer : layers) {
    if (layer.status != ov::ProfilingInfo::Status::EXECUTED) {
      continue;  // fused into another layer, or a constant
    }
    const et_timestamp_t end = start + ticks_in(layer.real_time.count());
    const auto precision = precision_by_layer_.find(layer.node_name);
    metadata_ = "{\"node_type\": ";
    append_json_string(metadata_, layer.node_type);
    metadata_ += ", \"exec_type\": ";
    append_json_string(metadata_, layer.exec_type);
    metadata_ += ", \"runtime_precision\": ";
    append_json_string(metadata_, precision == precision_by_layer_.end() ? "" : precision->second);
    metadata_ += '}';
    // Named, not numbered: the debug handle map is keyed by the layers' names.
    executorch::runtime::event_tracer_log_profiling_delegate(
        tracer, layer.node_name.c_str(), static_cast<DebugHandle>(executorch::runtime::kUnsetDelegateDebugIntId), start,
        end, metadata_.data(), metadata_.size());
    start = end;
  }
}

}  // namespace executorch_openvino
