/*
 * Weights a blob's IR reads from the program's named data (serialization/named_weights.py):
 * weights that several methods read, which the program stores once. The IR has a
 * Parameter named kNamedWeightName + key + ".crc=" + CRC-32 in their place; init fetches
 * each key's bytes from the named data map ExecuTorch gives it, checks their size and
 * CRC-32, and puts a Constant over those bytes where the Parameter was, before compiling.
 */
#pragma once

#include <memory>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>
#include <openvino/core/model.hpp>

namespace executorch_openvino {

/// The named data a compiled model reads, kept for as long as the delegate lives
/// (the CPU plugin may read a constant, such as an embedding table, where it lies).
using NamedWeightBuffers = std::vector<std::shared_ptr<executorch::runtime::FreeableBuffer>>;

/// Replaces each Parameter of `model` named kNamedWeightName... by a Constant over its
/// bytes in `named_data`, adding the buffers to `buffers`. InvalidArgument, after a log
/// line, when there is no named data, a key is missing, or its bytes do not have the
/// size or CRC-32 the name gives: the program is damaged or was loaded without its data.
executorch::runtime::Error put_named_weights(ov::Model& model, const executorch::runtime::NamedDataMap* named_data,
                                             NamedWeightBuffers& buffers);

}  // namespace executorch_openvino
