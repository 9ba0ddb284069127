/*
 * NumPy .npy files (format versions 1-3, C order, little-endian) for
 * executorch-openvino-run: its --input files and --save-outputs files.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/exec_aten.h>

namespace executorch_openvino::runner {

/// An array read from, or to be written to, a .npy file.
struct NpyArray {
  executorch::aten::ScalarType dtype = executorch::aten::ScalarType::Float;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // numel * element size, C order
};

/// Reads `path`. On failure returns false and says why in `error`, naming the
/// file and what is accepted.
bool read_npy(const std::string& path, NpyArray& array, std::string& error);

/// Writes `array` to `path`; false with the reason in `error` on failure.
bool write_npy(const std::string& path, const NpyArray& array, std::string& error);

/// The NumPy dtype string of `dtype` ("<f4", "|b1", ...), or nullptr when .npy
/// files of this runner do not carry it.
const char* npy_descr(executorch::aten::ScalarType dtype);

}  // namespace executorch_openvino::runner
