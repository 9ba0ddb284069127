#include "options.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <variant>

#include <executorch/runtime/platform/log.h>
#include <openvino/runtime/properties.hpp>

#include "crc32.h"

namespace executorch_openvino {

using executorch::runtime::ArrayRef;
using executorch::runtime::BackendOption;
using executorch::runtime::CompileSpec;
using executorch::runtime::Error;
using executorch::runtime::kMaxOptionValueLength;
using executorch::runtime::Result;
using executorch::runtime::Span;

namespace {

bool is_valid_precision(std::string_view value) {
  return value == "f32" || value == "f16" || value == "bf16";
}

bool is_valid_performance_hint(std::string_view value) {
  return value == "LATENCY" || value == "THROUGHPUT" || value == "CUMULATIVE_THROUGHPUT";
}

// A decimal integer within [minimum, INT32_MAX]; -1 otherwise.
int parse_count(const std::string& text, int minimum) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  const int value = std::stoi(text);
  return value >= minimum ? value : -1;
}

// Compile-spec values are UTF-8 text written by compile_specs.py.
Result<std::string> spec_text(const CompileSpec& spec) {
  const auto* data = static_cast<const char*>(spec.value.buffer);
  if (spec.value.nbytes > 0 && data == nullptr) {
    ET_LOG(Error, "OpenVINO compile spec '%s' has no value", spec.key);
    return Error::InvalidArgument;
  }
  std::string text(data == nullptr ? "" : data, spec.value.nbytes);
  if (text.find('\0') != std::string::npos) {
    ET_LOG(Error, "OpenVINO compile spec '%s' holds a NUL byte", spec.key);
    return Error::InvalidArgument;
  }
  return text;
}

Error check_precision(const std::string& value, const char* where) {
  if (!is_valid_precision(value)) {
    ET_LOG(Error, "OpenVINO %s: inference_precision '%s' is not one of f32, f16, bf16", where, value.c_str());
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Result<std::string> option_text(const BackendOption& option) {
  const auto* text = std::get_if<std::array<char, kMaxOptionValueLength>>(&option.value);
  if (text == nullptr) {
    ET_LOG(Error, "OpenVINO load option '%s' must be a string", option.key);
    return Error::InvalidArgument;
  }
  return std::string(text->data(), strnlen(text->data(), text->size()));
}

// The keys options_from_compile_specs reads, for its error message.
const std::string& known_compile_spec_keys() {
  static const std::string keys = [] {
    std::string joined;
    for (const char* key : {kDeviceKey, kPrecisionKey, kPerformanceHintKey, kCacheDirKey, kNumStreamsKey,
                            kInferenceNumThreadsKey, kDynamicQuantizationGroupSizeKey, kOneTokenModelKey,
                            kKvCachePrecisionKey, kPagedAttentionKey, kPerSequenceInputsKey}) {
      joined += joined.empty() ? key : std::string(", ") + key;
    }
    return joined;
  }();
  return keys;
}

}  // namespace

Result<CompileSettings> options_from_compile_specs(ArrayRef<CompileSpec> specs) {
  CompileSettings options;
  for (size_t i = 0; i < specs.size(); ++i) {
    const CompileSpec& spec = specs[i];
    Result<std::string> value = spec_text(spec);
    if (!value.ok()) {
      return value.error();
    }
    const std::string_view key(spec.key == nullptr ? "" : spec.key);
    // Lowering refuses a repeated key too (compile_specs.py): which one would win is not obvious.
    for (size_t earlier = 0; earlier < i; ++earlier) {
      if (specs[earlier].key != nullptr && key == specs[earlier].key) {
        ET_LOG(Error, "OpenVINO program: compile spec %s is given twice", spec.key);
        return Error::InvalidArgument;
      }
    }
    if (key == kDeviceKey) {
      options.device = *value;
    } else if (key == kPrecisionKey) {
      ET_CHECK_OK_OR_RETURN_ERROR(check_precision(*value, "program"));
      options.inference_precision = *value;
    } else if (key == kPerformanceHintKey) {
      if (!is_valid_performance_hint(*value)) {
        ET_LOG(Error,
               "OpenVINO program: performance_hint '%s' is not one of LATENCY, THROUGHPUT, "
               "CUMULATIVE_THROUGHPUT",
               value->c_str());
        return Error::InvalidArgument;
      }
      options.performance_hint = *value;
    } else if (key == kCacheDirKey) {
      options.cache_dir = *value;
    } else if (key == kNumStreamsKey) {
      if (*value != "AUTO" && parse_count(*value, 1) < 0) {
        ET_LOG(Error, "OpenVINO program: num_streams '%s' is not a positive integer or AUTO", value->c_str());
        return Error::InvalidArgument;
      }
      options.num_streams = *value;
    } else if (key == kInferenceNumThreadsKey) {
      options.inference_num_threads = parse_count(*value, 0);
      if (options.inference_num_threads < 0) {
        ET_LOG(Error, "OpenVINO program: inference_num_threads '%s' is not an integer >= 0", value->c_str());
        return Error::InvalidArgument;
      }
    } else if (key == kDynamicQuantizationGroupSizeKey) {
      options.dynamic_quantization_group_size = parse_count(*value, 0);
      if (options.dynamic_quantization_group_size < 0) {
        ET_LOG(Error, "OpenVINO program: dynamic_quantization_group_size '%s' is not an integer >= 0", value->c_str());
        return Error::InvalidArgument;
      }
    } else if (key == kKvCachePrecisionKey) {
      if (!is_valid_precision(*value) && *value != "u8") {
        ET_LOG(Error, "OpenVINO program: kv_cache_precision '%s' is not one of f32, f16, bf16, u8", value->c_str());
        return Error::InvalidArgument;
      }
      options.kv_cache_precision = *value;
    } else if (key == kOneTokenModelKey) {
      if (*value != "0" && *value != "1") {
        ET_LOG(Error, "OpenVINO program: one_token_model '%s' is not 0 or 1", value->c_str());
        return Error::InvalidArgument;
      }
      options.one_token_model = *value == "1";
    } else if (key == kPagedAttentionKey) {
      if (*value != "0" && *value != "1") {
        ET_LOG(Error, "OpenVINO program: paged_attention '%s' is not 0 or 1", value->c_str());
        return Error::InvalidArgument;
      }
      options.paged_attention = *value == "1";
    } else if (key == kPerSequenceInputsKey) {
      // Lowering has applied it to the IR; the state it made is reset with the KV cache (kv_cache.h).
      if (value->empty()) {
        ET_LOG(Error, "OpenVINO program: per_sequence_inputs is empty");
        return Error::InvalidArgument;
      }
    } else if (key == kSharedWeightsKey) {
      // Lowering has named them in the IR, which init reads them by (named_weights.h).
      if (value->empty()) {
        ET_LOG(Error, "OpenVINO program: shared_weights is empty");
        return Error::InvalidArgument;
      }
    } else {
      ET_LOG(Error, "OpenVINO program: unknown compile spec '%.*s'; this runtime knows %s",
             static_cast<int>(key.size()), key.data(), known_compile_spec_keys().c_str());
      return Error::InvalidArgument;
    }
  }
  if (options.device.empty()) {
    ET_LOG(Error, "OpenVINO program: the device compile spec is empty");
    return Error::InvalidArgument;
  }
  return options;
}

Error set_load_option(LoadOptions& overrides, const BackendOption& option) {
  Result<std::string> value = option_text(option);
  if (!value.ok()) {
    return value.error();
  }
  if (std::strcmp(option.key, kPrecisionKey) == 0) {
    // An empty value clears the override.
    if (!value->empty()) {
      ET_CHECK_OK_OR_RETURN_ERROR(check_precision(*value, "load option"));
    }
    overrides.inference_precision = *value;
  } else if (std::strcmp(option.key, kCacheDirKey) == 0) {
    overrides.cache_dir = *value;
  } else if (std::strcmp(option.key, kGiveBackMemoryKey) == 0) {
    if (!value->empty() && *value != "0" && *value != "1") {
      ET_LOG(Error, "OpenVINO load option %s='%s' is not accepted; accepted: 1 or 0", kGiveBackMemoryKey,
             value->c_str());
      return Error::InvalidArgument;
    }
    overrides.give_back_memory = *value;
  } else {
    ET_LOG(Error, "OpenVINO load option '%s' is unknown; accepted: %s, %s, %s", option.key, kPrecisionKey, kCacheDirKey,
           kGiveBackMemoryKey);
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Error apply_load_options(CompileSettings& options, const LoadOptions& process_options,
                         Span<const BackendOption> load_options) {
  LoadOptions merged = process_options;
  for (const BackendOption& option : load_options) {
    ET_CHECK_OK_OR_RETURN_ERROR(set_load_option(merged, option));
  }
  if (!merged.inference_precision.empty()) {
    options.inference_precision = merged.inference_precision;
  }
  if (!merged.cache_dir.empty()) {
    options.cache_dir = merged.cache_dir;
  }
  if (!merged.give_back_memory.empty()) {
    options.give_back_memory = merged.give_back_memory == "1";
  }
  return Error::Ok;
}

CpuSettingsPlace cpu_settings_place(std::string_view device) {
  const size_t colon = device.find(':');
  const std::string_view kind = device.substr(0, std::min(device.find('.'), colon));
  if (kind == "CPU") {
    return CpuSettingsPlace::kTopLevel;
  }
  const std::string_view listed = colon == std::string_view::npos ? "" : device.substr(colon + 1);
  bool lists_cpu = false;
  for (size_t begin = 0; begin <= listed.size() && !listed.empty();) {
    const size_t end = std::min(listed.find(',', begin), listed.size());
    const std::string_view entry = listed.substr(begin, end - begin);
    lists_cpu = lists_cpu || entry.substr(0, entry.find('.')) == "CPU";
    begin = end + 1;
  }
  if (kind == "BATCH") {
    return lists_cpu ? CpuSettingsPlace::kTopLevel : CpuSettingsPlace::kNone;
  }
  const bool picks = kind == "AUTO" || kind == "MULTI" || kind == "HETERO";
  return picks && (listed.empty() || lists_cpu) ? CpuSettingsPlace::kDeviceProperties : CpuSettingsPlace::kNone;
}

namespace {

ov::element::Type element_type_of(const std::string& precision) {
  return precision == "f32"    ? ov::element::f32
         : precision == "f16"  ? ov::element::f16
         : precision == "bf16" ? ov::element::bf16
         : precision == "u8"   ? ov::element::u8
                               : ov::element::dynamic;
}

// What the CPU plugin needs to compute what eager PyTorch computes: f32 unless
// asked otherwise (it would pick bf16 or f16 where the CPU has them); its fused KV
// cache at the inference precision unless kv_cache_precision says otherwise (u8 by
// default, which moves results away from eager, conversion/rewrites/kv_cache_growth.py);
// and float kernels for quantized layers where its 8-bit kernels saturate
// (quantized_layers.h). Layers with compressed weights keep the plugin's dynamic
// quantization of their activations: their user chose approximate numbers.
ov::AnyMap cpu_settings(const CompileSettings& options) {
  const ov::element::Type precision =
      options.inference_precision.empty() ? ov::element::f32 : element_type_of(options.inference_precision);
  ov::AnyMap cpu;
  cpu[ov::hint::inference_precision.name()] = precision;
  cpu[ov::hint::kv_cache_precision.name()] =
      options.kv_cache_precision.empty() ? precision : element_type_of(options.kv_cache_precision);
  if (options.float_kernels_for_quantized_layers) {
    // The CPU plugin's switch for its low-precision transformations: an internal
    // property, not in its public headers (accepted by 2026.4.1).
    cpu["LP_TRANSFORMS_MODE"] = false;
  }
  return cpu;
}

// compile_config without the folders of the model cache and the layer counters.
ov::AnyMap config_without_cache(const CompileSettings& options) {
  ov::AnyMap config;
  if (!options.inference_precision.empty()) {
    config[ov::hint::inference_precision.name()] = element_type_of(options.inference_precision);
  }
  if (options.dynamic_quantization_group_size >= 0) {
    config[ov::hint::dynamic_quantization_group_size.name()] = uint64_t(options.dynamic_quantization_group_size);
  }
  switch (cpu_settings_place(options.device)) {
    case CpuSettingsPlace::kTopLevel:
      for (auto& [key, value] : cpu_settings(options)) {
        config[key] = std::move(value);
      }
      break;
    case CpuSettingsPlace::kDeviceProperties:
      config[ov::device::properties.name()] = ov::AnyMap{{"CPU", cpu_settings(options)}};
      break;
    case CpuSettingsPlace::kNone:
      if (!options.kv_cache_precision.empty()) {
        config[ov::hint::kv_cache_precision.name()] = element_type_of(options.kv_cache_precision);
      }
      break;
  }
  if (options.performance_hint == "THROUGHPUT") {
    config[ov::hint::performance_mode.name()] = ov::hint::PerformanceMode::THROUGHPUT;
  } else if (options.performance_hint == "CUMULATIVE_THROUGHPUT") {
    config[ov::hint::performance_mode.name()] = ov::hint::PerformanceMode::CUMULATIVE_THROUGHPUT;
  } else {
    config[ov::hint::performance_mode.name()] = ov::hint::PerformanceMode::LATENCY;
  }
  if (options.num_streams == "AUTO") {
    config[ov::num_streams.name()] = ov::streams::AUTO;
  } else if (!options.num_streams.empty()) {
    config[ov::num_streams.name()] = ov::streams::Num(parse_count(options.num_streams, 1));
  }
  if (options.inference_num_threads >= 0) {
    config[ov::inference_num_threads.name()] = options.inference_num_threads;
  }
  return config;
}

// Text that tells `config`'s entries apart, nested maps (DEVICE_PROPERTIES) included.
void describe(const ov::AnyMap& config, std::string& text) {
  for (const auto& [key, value] : config) {  // std::map: in key order
    text += key;
    text += '=';
    if (value.is<ov::AnyMap>()) {
      text += '{';
      describe(value.as<ov::AnyMap>(), text);
      text += '}';
    } else {
      text += value.as<std::string>();
    }
    text += ';';
  }
}

}  // namespace

std::string openvino_cache_dir(const CompileSettings& options) {
  if (options.cache_dir.empty()) {
    return {};
  }
  // Workaround, OpenVINO 2026.4.1 (workarounds.py: model_cache_key_leaves_out_settings;
  // no upstream report found): OpenVINO keys a cached compiled model on the model and
  // the CPU's name, not on the compile configuration, and the CPU plugin bakes some of
  // it into what it caches (f16 inference precision, for one): a load at f32 imported
  // what a load at f16 compiled and computed in f16. Each configuration gets a folder.
  std::string text;
  describe(config_without_cache(options), text);
  char name[32];
  std::snprintf(name, sizeof(name), "compiled-%08x", crc32(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  return (std::filesystem::path(options.cache_dir) / name).string();
}

ov::AnyMap compile_config(const CompileSettings& options) {
  ov::AnyMap config = config_without_cache(options);
  if (!options.cache_dir.empty()) {
    config[ov::cache_dir.name()] = openvino_cache_dir(options);
  }
  if (options.count_layer_times) {
    // Not part of OpenVINO's model cache key, and applied to a model imported from
    // the cache (2026.4.1): one cache entry serves loads with and without it.
    config[ov::enable_profiling.name()] = true;
  }
  return config;
}

}  // namespace executorch_openvino
