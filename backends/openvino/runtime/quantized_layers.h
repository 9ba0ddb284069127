/*
 * Layers quantized to 8 bits on CPUs whose 8-bit kernels saturate.
 *
 * OpenVINO's CPU plugin turns an activation's FakeQuantize and the 8-bit weights
 * after it into one 8-bit layer (its low-precision transformations). Without VNNI
 * or AMX, x86 kernels add pairs of u8 x i8 products in 16 bits, which saturate once
 * weights pass +-63: results then move by several percent from the quantized
 * model's (NNCF's overflow_fix=ENABLE keeps weights in 7 bits for such CPUs). On
 * those CPUs the delegate compiles quantized layers with float kernels instead,
 * which compute what the quantized model computes.
 */
#pragma once

#include <string_view>

namespace executorch_openvino {

/// True when this CPU's 8-bit dot products do not saturate (VNNI or AMX; not x86).
bool cpu_sums_8bit_products_exactly();

/// Whether a model compiled for `device` runs its quantized layers on float kernels
/// (LP_TRANSFORMS_MODE off, options.cpp): when the IR has FakeQuantize operations
/// (kBlobFactFakeQuantize in the blob's header, which the exporter writes), the CPU
/// plugin may run it, and the CPU's 8-bit dot products saturate. Lowering's checking
/// compile asks the same (etov_compile_config).
bool float_kernels_for_quantized_layers(std::string_view device, bool has_fake_quantize,
                                        bool cpu_sums_exactly = cpu_sums_8bit_products_exactly());

}  // namespace executorch_openvino
