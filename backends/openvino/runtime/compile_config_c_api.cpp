// etov_compile_config (backend.h): the OpenVINO configuration this runtime builds
// from compile specs, for lowering's checking compile (preprocess.py), so that the
// meaning of each spec is defined here once and the check compiles what a load
// compiles (LP_TRANSFORMS_MODE included). Chosen over a table both languages read:
// the settings depend on the device's placement and on the CPU, which are code, not
// data. Python keeps a copy (OpenvinoOptions.compile_config) because lowering must
// work where this library is missing or built for another OpenVINO release;
// tests/contracts/test_compile_config_agreement.py checks the two field by field.

#include <cstring>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "options.h"
#include "quantized_layers.h"

namespace executorch_openvino {
namespace {

// One "KEY=VALUE" line per entry, in the map's (sorted) order; a nested map's
// entries as "KEY.NESTED_KEY=VALUE" (DEVICE_PROPERTIES.CPU.INFERENCE_PRECISION_HINT).
void write_entries(const ov::AnyMap& config, const std::string& prefix, std::string& text) {
  for (const auto& [key, value] : config) {
    if (value.is<ov::AnyMap>()) {
      write_entries(value.as<ov::AnyMap>(), prefix + key + ".", text);
    } else {
      text += prefix + key + "=" + value.as<std::string>() + "\n";
    }
  }
}

}  // namespace
}  // namespace executorch_openvino

extern "C" int etov_compile_config(const char* const* keys, const char* const* values, size_t count,
                                   int has_fake_quantize, int cpu_sums_exactly, char* out, size_t out_size) {
  using executorch::runtime::CompileSpec;
  using executorch::runtime::Error;
  using namespace executorch_openvino;
  if ((count > 0 && (keys == nullptr || values == nullptr)) || out == nullptr || out_size == 0) {
    return static_cast<int>(Error::InvalidArgument);
  }
  try {
    std::vector<CompileSpec> specs(count);
    for (size_t i = 0; i < count; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) {
        return static_cast<int>(Error::InvalidArgument);
      }
      specs[i].key = keys[i];
      specs[i].value.buffer = const_cast<char*>(values[i]);
      specs[i].value.nbytes = std::strlen(values[i]);
    }
    auto settings = options_from_compile_specs({specs.data(), specs.size()});
    if (!settings.ok()) {
      return static_cast<int>(settings.error());
    }
    // As compile_blob decides at load; cpu_sums_exactly < 0 asks this CPU.
    const bool exact = cpu_sums_exactly < 0 ? cpu_sums_8bit_products_exactly() : cpu_sums_exactly != 0;
    settings->float_kernels_for_quantized_layers =
        float_kernels_for_quantized_layers(settings->device, has_fake_quantize != 0, exact);
    std::string text;
    write_entries(compile_config(*settings), "", text);
    if (text.size() >= out_size) {
      return static_cast<int>(Error::InvalidArgument);
    }
    std::memcpy(out, text.c_str(), text.size() + 1);
    return static_cast<int>(Error::Ok);
  } catch (const std::exception&) {
    return static_cast<int>(Error::Internal);
  }
}
