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

/// True when the IR quantizes values with FakeQuantize, which OpenVINO's CPU
/// plugin runs on its 8-bit kernels.
bool ir_quantizes_values(std::string_view ir_xml);

}  // namespace executorch_openvino
