/*
 * One profiling event per OpenVINO layer per call, for ExecuTorch's event tracer
 * (ETDump, read by executorch.devtools.Inspector).
 *
 * OpenVINO times each layer only in a model compiled with its performance counters
 * (ov::enable_profiling, PERF_COUNT), and reading them allocates. So the delegate
 * compiles with the counters only when the method is loaded with an event tracer
 * (the init context has one), and reads them only in a call that has a tracer: a
 * method loaded without one compiles and runs as it would without this file.
 *
 * What OpenVINO gives is a duration per layer, not when it started. The CPU plugin
 * (2026.4.1) keeps each layer's mean time per call over every call of the compiled
 * model, in whole microseconds, and no time of a single call; a layer whose mean is
 * below 1 us it reports as not run. So an event carries the layer's mean over the
 * calls so far, and a layer reported as not run gets none. The events of a call are
 * laid end to end from the start of its inference, in the order OpenVINO lists the
 * layers (the order it runs them in). docs/profiling.md says how to read them.
 *
 * An event is named by the layer's name in OpenVINO's compiled model; the debug
 * handle map that lowering stores (profiling.py) relates these names to the edge
 * operators each layer computes. Its metadata is JSON naming what ran:
 * {"node_type": ..., "exec_type": ..., "runtime_precision": ...}.
 */
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <executorch/runtime/core/event_tracer.h>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>

namespace executorch_openvino {

/// Whether `compiled` counts its layers' times (was compiled with
/// ov::enable_profiling); false when the device cannot tell.
bool counts_layer_times(const ov::CompiledModel& compiled) noexcept;

/// counts_layer_times of each model compiled for a delegate that our init returned
/// as `handle`: the general model, then the model of one token when there is one.
/// For tests (tests/cpp/layer_counters_test.cpp): defined in OpenvinoBackend.cpp.
std::vector<bool> layer_counters_of(const void* handle);

class LayerEvents {
 public:
  /// What the layers of `compiled`, which counts its layers' times, run at: read
  /// once, from OpenVINO's runtime model (nothing, after a log line, when OpenVINO
  /// cannot give it).
  explicit LayerEvents(const ov::CompiledModel& compiled);

  /// Logs one event to `tracer` for each layer the last inference of `request`
  /// executed, laid end to end from `inference_start` (ExecuTorch's ticks). When
  /// OpenVINO cannot give the layers' times, logs none (and says so once).
  void log(executorch::runtime::EventTracer* tracer, const ov::InferRequest& request, et_timestamp_t inference_start);

 private:
  std::unordered_map<std::string, std::string> precision_by_layer_;
  std::string metadata_;  // the text of one event's metadata, reused
  bool told_unreadable_ = false;
};

}  // namespace executorch_openvino
