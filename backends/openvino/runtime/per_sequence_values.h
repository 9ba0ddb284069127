/*
 * Values a model keeps per sequence (conversion/rewrites/per_sequence_values.py: an
 * encoder-decoder's cross-attention keys and values, in variables whose initial value
 * the CPU plugin computes when they start empty), computed at every call instead where
 * OpenVINO computes them wrong.
 *
 * OpenVINO 2026.4.1's CPU plugin, at a bf16 or f16 inference precision, computes such an
 * initial value from memory an earlier call's input left when that input has a dynamic
 * shape: a T5 decoder at bf16 read the encoder output of an earlier sequence, or memory
 * never written, and generated other tokens than transformers from its second sequence
 * on (f32, and Whisper's static encoder output at bf16, compute it right; no upstream
 * issue found). The runtime takes the variables out of such a model before compiling
 * it: the values are then computed from the call's own input, as the exported graph
 * computes them.
 */
#pragma once

#include <openvino/core/model.hpp>

#include "options.h"

namespace executorch_openvino {

/// Whether a model compiled with `settings` from an IR whose XML text is `ir_xml` may
/// keep per-sequence values the CPU plugin computes wrong: a 16-bit inference precision
/// on a device that may run on the CPU plugin, and per-sequence variables in the IR.
bool may_compute_per_sequence_values_wrong(std::string_view ir_xml, const CompileSettings& settings);

/// Takes out of `model` each per-sequence variable whose initial value reads an input of
/// dynamic shape: its readers read that value, computed at every call. Returns how many.
size_t compute_per_sequence_values_at_each_call(ov::Model& model);

}  // namespace executorch_openvino
