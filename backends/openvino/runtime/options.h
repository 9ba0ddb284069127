#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include <executorch/runtime/backend/interface.h>
#include <openvino/core/any.hpp>

#include <executorch_openvino/backend.h>

namespace executorch_openvino {

/// How a delegate is compiled when the runtime loads it. Filled from the compile
/// specs stored in the program, then from the load options, which win.
struct CompileSettings {
  std::string device = "CPU";
  // Empty: f32 on a CPU, also when AUTO, MULTI or HETERO picks it (OpenVINO itself
  // would pick bf16 where the CPU has bf16 units), the device's own default elsewhere.
  std::string inference_precision;
  std::string performance_hint = "LATENCY";
  std::string cache_dir;           // empty: no model cache
  std::string num_streams;         // empty: what the performance hint picks; else "AUTO" or a count
  int inference_num_threads = -1;  // -1: what the performance hint picks
  // -1: OpenVINO's default (int8 activations for layers with compressed weights on a
  // CPU with VNNI or AMX; layers with float weights are not affected).
  int dynamic_quantization_group_size = -1;
  // Empty: the inference precision (the CPU plugin's own default, u8, moves results from eager).
  std::string kv_cache_precision;
  // A second model for calls of one token (one_token_model.h).
  bool one_token_model = false;
  // The KV cache in OpenVINO's PagedAttention form (paged_attention.h).
  bool paged_attention = false;
  // Set at load, not by a spec: 8-bit layers on float kernels (quantized_layers.h).
  bool float_kernels_for_quantized_layers = false;
  // Set by the load option kGiveBackMemoryKey only (resident_pages.h).
  bool give_back_memory = false;
  // Set at load, not by a spec: OpenVINO's performance counters, on when the method
  // is loaded with an event tracer (layer_events.h).
  bool count_layer_times = false;
};

/// The load options (keys in backend.h): settings that win over what the program
/// says. Set per process with ExecuTorch's set_option (etov_set_load_option from C,
/// executorch_openvino.set_load_options from Python), per load with a
/// LoadBackendOptionsMap. One name in every language: load option.
struct LoadOptions {
  std::string inference_precision;
  std::string cache_dir;
  std::string give_back_memory;  // empty: not set; else "1" or "0"
};

/// The compile-spec keys. inference_precision and cache_dir (kPrecisionKey,
/// kCacheDirKey) are load options too, so they are public, in backend.h.
inline constexpr const char* kDeviceKey = "device";
inline constexpr const char* kPerformanceHintKey = "performance_hint";
inline constexpr const char* kNumStreamsKey = "num_streams";
inline constexpr const char* kInferenceNumThreadsKey = "inference_num_threads";
inline constexpr const char* kDynamicQuantizationGroupSizeKey = "dynamic_quantization_group_size";
inline constexpr const char* kOneTokenModelKey = "one_token_model";        // "1" or "0"
inline constexpr const char* kKvCachePrecisionKey = "kv_cache_precision";  // f32, f16, bf16, u8
inline constexpr const char* kPagedAttentionKey = "paged_attention";       // "1" or "0"
/// Names of inputs whose values lowering computes once per sequence
/// (conversion/rewrites/per_sequence_values.py): read at lowering only, checked here.
inline constexpr const char* kPerSequenceInputsKey = "per_sequence_inputs";
/// Digests of the weights the blob's IR reads from the program's named data
/// (serialization/named_weights.py): applied at lowering, checked here.
inline constexpr const char* kSharedWeightsKey = "shared_weights";

/// Reads the compile specs the program was lowered with. Unknown keys and bad
/// values fail with InvalidArgument and a log line naming them.
executorch::runtime::Result<CompileSettings> options_from_compile_specs(
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs);

/// Applies the process-wide load options, then the per-load ones, which win.
executorch::runtime::Error apply_load_options(
    CompileSettings& options, const LoadOptions& process_options,
    executorch::runtime::Span<const executorch::runtime::BackendOption> load_options);

/// Reads a key of ExecuTorch's set_option into `overrides`.
executorch::runtime::Error set_load_option(LoadOptions& overrides, const executorch::runtime::BackendOption& option);

/// Where the CPU plugin's settings (compile_config) go for a device: at the top
/// of the configuration for the CPU itself and for BATCH:CPU, which passes them on;
/// under DEVICE_PROPERTIES for AUTO, MULTI and HETERO when they may pick the CPU
/// (no device list, or one naming CPU); nowhere for devices that never run on it.
enum class CpuSettingsPlace { kNone, kTopLevel, kDeviceProperties };
CpuSettingsPlace cpu_settings_place(std::string_view device);

/// The configuration passed to ov::Core::compile_model.
ov::AnyMap compile_config(const CompileSettings& options);

/// The folder OpenVINO's model cache (CACHE_DIR) writes compiled models into: a
/// folder in cache_dir for each compile configuration; empty without cache_dir.
std::string openvino_cache_dir(const CompileSettings& options);

}  // namespace executorch_openvino
