/*
 * Binding ExecuTorch tensors to an OpenVINO infer request.
 *
 * Inputs and static outputs are bound to the ExecuTorch tensors' own memory:
 * OpenVINO reads and writes it directly, with no copy. A slot remembers what it
 * bound and rebinds only when the memory or the shape changes, so a steady
 * stream of calls allocates nothing.
 *
 * An output whose shape can change is left to OpenVINO, which owns and grows one
 * buffer per output; after inference its data is copied into the ExecuTorch
 * output, which is resized to the shape OpenVINO produced.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <openvino/runtime/infer_request.hpp>
#include <openvino/runtime/tensor.hpp>

namespace executorch_openvino {

/// "input 2 (decoder_input_ids)": how logs name input `index` of the compiled model. The
/// delegate numbers its inputs in its own order, which can differ from the method's, so
/// the label adds the name the exported graph gives the input.
std::string input_label(const ov::Output<const ov::Node>& port, size_t index);

/// What a port of the compiled model accepts, read once at load.
class PortSpec {
 public:
  PortSpec(const ov::Output<const ov::Node>& port, std::string name);

  const std::string& name() const { return name_; }
  const ov::element::Type& type() const { return type_; }
  bool is_static() const { return is_static_; }
  /// The port's sizes, when it is static.
  const std::vector<int64_t>& static_sizes() const { return min_dims_; }
  /// True for a 0-d int64 port: a symbolic size the program computes outside the delegate.
  bool is_int64_scalar() const;
  /// Checks an ExecuTorch tensor's dtype and shape against the port; logs why not.
  executorch::runtime::Error check(const executorch::aten::Tensor& tensor) const;

 private:
  std::string name_;
  ov::element::Type type_;
  bool rank_is_dynamic_ = false;
  bool is_static_ = false;
  std::vector<int64_t> min_dims_;
  std::vector<int64_t> max_dims_;  // -1: unbounded
};

/// Binds one ExecuTorch tensor to an input or output of the infer request,
/// remembering what is bound so that a repeated call rebinds nothing.
class BoundTensor {
 public:
  /// True when `tensor` (memory and shape) is what was bound last.
  bool matches(const executorch::aten::Tensor& tensor) const;
  /// True when `tensor` has the sizes bound last.
  bool has_sizes_of(const executorch::aten::Tensor& tensor) const;
  /// Wraps `tensor`'s memory in an ov::Tensor; no data is copied.
  const ov::Tensor& wrap(const executorch::aten::Tensor& tensor, const ov::element::Type& type);

 private:
  void* data_ = nullptr;
  executorch::aten::ScalarType dtype_ = executorch::aten::ScalarType::Undefined;
  std::vector<executorch::aten::SizesType> sizes_;
  ov::Tensor tensor_;
};

/// One input of the compiled model, bound to the ExecuTorch tensor's memory.
/// An Int (a symbolic size made outside the delegate) is written into a 0-d
/// int64 tensor that stays bound. An input named as an indexing op's indices
/// (kIndexRowsName, kSignedIndexRowsName) has its values checked on every call.
class InputBinding {
 public:
  InputBinding(const ov::Output<const ov::Node>& port, size_t index);
  executorch::runtime::Error bind(ov::InferRequest& request, const executorch::runtime::EValue& value);
  /// Whether the last bind gave this input a tensor of other sizes than the one before.
  bool shape_changed() const { return shape_changed_; }

 private:
  executorch::runtime::Error bind_int(ov::InferRequest& request, int64_t value);
  executorch::runtime::Error check_index_range(const executorch::aten::Tensor& tensor) const;

  PortSpec spec_;
  size_t index_;
  BoundTensor bound_;
  bool shape_changed_ = false;
  // When an indexing op reads this input: the accepted indices, lowest_index_ .. index_rows_ - 1.
  int64_t index_rows_ = -1;
  int64_t lowest_index_ = 0;
  ov::Tensor int_value_;  // allocated and bound at the first Int
};

/// One output of the compiled model. A static output is bound to the ExecuTorch
/// output's memory before inference. An output whose shape can change is left to
/// OpenVINO, which owns and grows one buffer for it; after inference its data is
/// copied into the ExecuTorch output, resized to the shape OpenVINO produced.
class OutputBinding {
 public:
  OutputBinding(const ov::Output<const ov::Node>& port, size_t index);
  executorch::runtime::Error bind(ov::InferRequest& request, executorch::runtime::EValue& value);
  executorch::runtime::Error collect(ov::InferRequest& request, executorch::runtime::EValue& value);

 private:
  // Gives a tensor bound to a static port the port's sizes, where ExecuTorch allows it.
  void resize_to_port(executorch::aten::Tensor& tensor) const;

  PortSpec spec_;
  size_t index_;
  BoundTensor bound_;
};

}  // namespace executorch_openvino
