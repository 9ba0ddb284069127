#include "quantized_layers.h"

#include "options.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace executorch_openvino {

bool cpu_sums_8bit_products_exactly() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  const bool avx512_vnni = (ecx & (1u << 11)) != 0;
  const bool amx_int8 = (edx & (1u << 25)) != 0;
  bool avx_vnni = false;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    avx_vnni = (eax & (1u << 4)) != 0;
  }
  return avx512_vnni || amx_int8 || avx_vnni;
#else
  return true;
#endif
}

bool float_kernels_for_quantized_layers(std::string_view device, bool has_fake_quantize, bool cpu_sums_exactly) {
  return has_fake_quantize && !cpu_sums_exactly && cpu_settings_place(device) != CpuSettingsPlace::kNone;
}

}  // namespace executorch_openvino
