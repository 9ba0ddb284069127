#include "tensor_binding.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/log.h>

#include <executorch_openvino/backend.h>

namespace executorch_openvino {

using executorch::aten::ArrayRef;
using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::EValue;

namespace {

// The OpenVINO element type that holds an ExecuTorch dtype bit for bit, or
// ov::element::dynamic when the runtime does not bind that dtype.
ov::element::Type to_ov_type(ScalarType type) {
  switch (type) {
    case ScalarType::Float:
      return ov::element::f32;
    case ScalarType::Half:
      return ov::element::f16;
    case ScalarType::BFloat16:
      return ov::element::bf16;
    case ScalarType::Double:
      return ov::element::f64;
    case ScalarType::Byte:
      return ov::element::u8;
    case ScalarType::Char:
      return ov::element::i8;
    case ScalarType::Short:
      return ov::element::i16;
    case ScalarType::Int:
      return ov::element::i32;
    case ScalarType::Long:
      return ov::element::i64;
    case ScalarType::Bool:
      return ov::element::boolean;
    case ScalarType::UInt16:
      return ov::element::u16;
    case ScalarType::UInt32:
      return ov::element::u32;
    case ScalarType::UInt64:
      return ov::element::u64;
    default:
      return ov::element::dynamic;
  }
}

// "[2, 3]" for logs.
std::string shape_text(ArrayRef<SizesType> sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  }
  return text + "]";
}

}  // namespace

PortSpec::PortSpec(const ov::Output<const ov::Node>& port, std::string name)
    : name_(std::move(name)), type_(port.get_element_type()) {
  const ov::PartialShape& shape = port.get_partial_shape();
  is_static_ = shape.is_static();
  rank_is_dynamic_ = shape.rank().is_dynamic();
  if (rank_is_dynamic_) {
    return;
  }
  for (const ov::Dimension& dim : shape) {
    min_dims_.push_back(dim.get_min_length());
    max_dims_.push_back(dim.get_max_length());
  }
}

Error PortSpec::check(const Tensor& tensor) const {
  const ov::element::Type given = to_ov_type(tensor.scalar_type());
  if (given != type_) {
    ET_LOG(Error, "OpenVINO delegate %s: dtype %s is not the %s the program was exported with", name_.c_str(),
           executorch::runtime::toString(tensor.scalar_type()), type_.get_type_name().c_str());
    return Error::InvalidArgument;
  }
  const auto dim_order = tensor.dim_order();
  for (size_t i = 0; i < dim_order.size(); ++i) {
    if (dim_order[i] != i) {
      ET_LOG(Error,
             "OpenVINO delegate %s: the tensor is not in the default dim order; the "
             "delegate binds contiguous tensors only",
             name_.c_str());
      return Error::InvalidArgument;
    }
  }
  if (tensor.const_data_ptr() == nullptr && tensor.nbytes() > 0) {
    ET_LOG(Error,
           "OpenVINO delegate %s: the tensor has no memory (%zu bytes needed); a program exported "
           "without memory planned for its inputs or outputs needs the application to set them",
           name_.c_str(), tensor.nbytes());
    return Error::InvalidArgument;
  }
  if (rank_is_dynamic_) {
    return Error::Ok;
  }
  bool fits = static_cast<size_t>(tensor.dim()) == min_dims_.size();
  for (size_t i = 0; fits && i < min_dims_.size(); ++i) {
    const int64_t size = tensor.size(i);
    fits = size >= min_dims_[i] && (max_dims_[i] < 0 || size <= max_dims_[i]);
  }
  if (!fits) {
    std::string accepted = "[";
    for (size_t i = 0; i < min_dims_.size(); ++i) {
      accepted += i ? ", " : "";
      if (min_dims_[i] == max_dims_[i]) {
        accepted += std::to_string(min_dims_[i]);
      } else {
        accepted += std::to_string(min_dims_[i]) + ".." +
                    (max_dims_[i] < 0 ? std::string("inf") : std::to_string(max_dims_[i]));
      }
    }
    accepted += "]";
    ET_LOG(Error, "OpenVINO delegate %s: shape %s does not fit the accepted %s", name_.c_str(),
           shape_text(tensor.sizes()).c_str(), accepted.c_str());
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

bool PortSpec::is_int64_scalar() const {
  return type_ == ov::element::i64 && !rank_is_dynamic_ && min_dims_.empty();
}

bool BoundTensor::matches(const Tensor& tensor) const {
  // Nothing bound yet has an Undefined dtype, which no tensor has; a zero-byte
  // tensor has no address, and matches the zero-byte tensor bound before it.
  return dtype_ == tensor.scalar_type() && data_ == tensor.const_data_ptr() && has_sizes_of(tensor);
}

bool BoundTensor::has_sizes_of(const Tensor& tensor) const {
  return sizes_.size() == static_cast<size_t>(tensor.dim()) &&
         std::equal(sizes_.begin(), sizes_.end(), tensor.sizes().begin());
}

namespace {

// OpenVINO refuses a tensor without an address even when it holds no bytes, and
// ExecuTorch gives a zero-byte tensor none: such a tensor is bound to this one.
alignas(64) unsigned char no_bytes[64];

}  // namespace

const ov::Tensor& BoundTensor::wrap(const Tensor& tensor, const ov::element::Type& type) {
  ov::Shape shape(tensor.sizes().begin(), tensor.sizes().end());
  void* memory = tensor.nbytes() == 0 ? static_cast<void*>(no_bytes) : tensor.mutable_data_ptr();
  tensor_ = ov::Tensor(type, shape, memory);
  data_ = tensor.mutable_data_ptr();
  dtype_ = tensor.scalar_type();
  sizes_.assign(tensor.sizes().begin(), tensor.sizes().end());
  return tensor_;
}

namespace {

Error copy_dynamic_output(ov::Tensor& produced, Tensor& output, const std::string& name) {
  const ov::Shape& shape = produced.get_shape();
  // ExecuTorch sizes are 32-bit and a tensor has at most kTensorDimensionLimit dims.
  SizesType sizes[executorch::runtime::kTensorDimensionLimit];
  if (shape.size() > executorch::runtime::kTensorDimensionLimit || shape.size() != static_cast<size_t>(output.dim())) {
    ET_LOG(Error, "OpenVINO delegate %s: OpenVINO produced rank %zu, the program expects rank %lld", name.c_str(),
           shape.size(), static_cast<long long>(output.dim()));
    return Error::InvalidArgument;
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    sizes[i] = static_cast<SizesType>(shape[i]);
  }
  const ArrayRef<SizesType> new_sizes(sizes, shape.size());
  // ExecuTorch refuses a resize beyond the tensor's planned upper bound.
  if (executorch::runtime::resize_tensor(output, new_sizes) != Error::Ok) {
    ET_LOG(Error,
           "OpenVINO delegate %s: OpenVINO produced shape %s, which does not fit the "
           "output's planned shape %s",
           name.c_str(), shape_text(new_sizes).c_str(), shape_text(output.sizes()).c_str());
    return Error::InvalidArgument;
  }
  if (produced.get_byte_size() != output.nbytes()) {
    ET_LOG(Error, "OpenVINO delegate %s: %zu bytes produced for an output of %zu bytes", name.c_str(),
           produced.get_byte_size(), output.nbytes());
    return Error::Internal;
  }
  if (output.nbytes() == 0) {
    return Error::Ok;
  }
  if (output.mutable_data_ptr() == nullptr) {
    ET_LOG(Error,
           "OpenVINO delegate %s: the output has no memory (%zu bytes produced); a program exported "
           "without memory planned for its outputs needs the application to set them",
           name.c_str(), output.nbytes());
    return Error::InvalidArgument;
  }
  std::memcpy(output.mutable_data_ptr(), produced.data(), output.nbytes());
  return Error::Ok;
}

// What follows `prefix` in `name`, or nullptr when `name` does not start with it.
const char* after_prefix(const std::string& name, const char* prefix) {
  const size_t length = std::strlen(prefix);
  return name.compare(0, length, prefix) == 0 ? name.c_str() + length : nullptr;
}

}  // namespace

std::string input_label(const ov::Output<const ov::Node>& port, size_t index) {
  std::string label = "input " + std::to_string(index);
  std::string graph_name;
  for (const std::string& name : port.get_names()) {
    const bool marker = after_prefix(name, "executorch_openvino.") != nullptr;
    const bool number = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    if (!marker && !number && (graph_name.empty() || name.size() < graph_name.size())) {
      graph_name = name;
    }
  }
  return graph_name.empty() ? label : label + " (" + graph_name + ")";
}

InputBinding::InputBinding(const ov::Output<const ov::Node>& port, size_t index)
    : spec_(port, input_label(port, index)), index_(index) {
  for (const std::string& name : port.get_names()) {
    if (const char* rows = after_prefix(name, kIndexRowsName)) {
      index_rows_ = std::strtoll(rows, nullptr, 10);
    } else if (const char* signed_rows = after_prefix(name, kSignedIndexRowsName)) {
      index_rows_ = std::strtoll(signed_rows, nullptr, 10);
      lowest_index_ = -index_rows_;
    }
  }
}

Error InputBinding::bind(ov::InferRequest& request, const EValue& value) {
  shape_changed_ = false;
  if (value.isInt()) {
    return bind_int(request, value.toInt());
  }
  if (!value.isTensor()) {
    ET_LOG(Error, "OpenVINO delegate %s: expected a tensor or an int, got value tag %d", spec_.name().c_str(),
           static_cast<int>(value.tag));
    return Error::InvalidArgument;
  }
  const Tensor& tensor = value.toTensor();
  if (!bound_.matches(tensor)) {
    ET_CHECK_OK_OR_RETURN_ERROR(spec_.check(tensor));
    shape_changed_ = !bound_.has_sizes_of(tensor);
    request.set_input_tensor(index_, bound_.wrap(tensor, spec_.type()));
  }
  return index_rows_ < 0 ? Error::Ok : check_index_range(tensor);
}

namespace {

// The first value of `values` outside lowest .. rows - 1, or n.
template <typename T>
size_t first_outside(const T* values, size_t n, int64_t lowest, int64_t rows) {
  for (size_t i = 0; i < n; ++i) {
    const auto value = static_cast<int64_t>(values[i]);
    if (value < lowest || value >= rows) return i;
  }
  return n;
}

}  // namespace

Error InputBinding::check_index_range(const Tensor& tensor) const {
  const size_t n = static_cast<size_t>(tensor.numel());
  size_t bad = n;
  int64_t value = 0;
  if (tensor.scalar_type() == ScalarType::Long) {
    bad = first_outside(tensor.const_data_ptr<int64_t>(), n, lowest_index_, index_rows_);
    value = bad < n ? tensor.const_data_ptr<int64_t>()[bad] : 0;
  } else if (tensor.scalar_type() == ScalarType::Int) {
    bad = first_outside(tensor.const_data_ptr<int32_t>(), n, lowest_index_, index_rows_);
    value = bad < n ? tensor.const_data_ptr<int32_t>()[bad] : 0;
  }
  if (bad == n) {
    return Error::Ok;
  }
  ET_LOG(Error,
         "OpenVINO delegate %s: index %lld (element %zu) is outside the dimension of size %lld it indexes, "
         "whose indices are %lld..%lld",
         spec_.name().c_str(), static_cast<long long>(value), bad, static_cast<long long>(index_rows_),
         static_cast<long long>(lowest_index_), static_cast<long long>(index_rows_ - 1));
  return Error::InvalidArgument;
}

Error InputBinding::bind_int(ov::InferRequest& request, int64_t value) {
  if (!spec_.is_int64_scalar()) {
    ET_LOG(Error, "OpenVINO delegate %s: got the int %lld, but this input takes a %s tensor", spec_.name().c_str(),
           static_cast<long long>(value), spec_.type().get_type_name().c_str());
    return Error::InvalidArgument;
  }
  if (!int_value_) {
    int_value_ = ov::Tensor(ov::element::i64, ov::Shape{});
    request.set_input_tensor(index_, int_value_);
  }
  *int_value_.data<int64_t>() = value;
  return Error::Ok;
}

OutputBinding::OutputBinding(const ov::Output<const ov::Node>& port, size_t index)
    : spec_(port, "output " + std::to_string(index)), index_(index) {}

Error OutputBinding::bind(ov::InferRequest& request, EValue& value) {
  if (!value.isTensor()) {
    ET_LOG(Error, "OpenVINO delegate %s: expected a tensor, got value tag %d", spec_.name().c_str(),
           static_cast<int>(value.tag));
    return Error::InvalidArgument;
  }
  if (!spec_.is_static()) {
    return Error::Ok;  // OpenVINO owns this output's buffer; see collect().
  }
  Tensor& tensor = value.toTensor();
  if (bound_.matches(tensor)) {
    return Error::Ok;
  }
  resize_to_port(tensor);
  ET_CHECK_OK_OR_RETURN_ERROR(spec_.check(tensor));
  request.set_output_tensor(index_, bound_.wrap(tensor, spec_.type()));
  return Error::Ok;
}

void OutputBinding::resize_to_port(Tensor& tensor) const {
  // A dynamic output of the program can be static in this model (the one-token
  // model, one_token_model.h): the tensor may still have the sizes of a call to
  // the other model. Where ExecuTorch refuses the resize, check() says why.
  const std::vector<int64_t>& port_sizes = spec_.static_sizes();
  if (port_sizes.size() != static_cast<size_t>(tensor.dim()) ||
      port_sizes.size() > executorch::runtime::kTensorDimensionLimit) {
    return;
  }
  SizesType sizes[executorch::runtime::kTensorDimensionLimit];
  bool differ = false;
  for (size_t i = 0; i < port_sizes.size(); ++i) {
    sizes[i] = static_cast<SizesType>(port_sizes[i]);
    differ = differ || sizes[i] != tensor.size(i);
  }
  if (differ) {
    (void)executorch::runtime::resize_tensor(tensor, ArrayRef<SizesType>(sizes, port_sizes.size()));
  }
}

Error OutputBinding::collect(ov::InferRequest& request, EValue& value) {
  if (spec_.is_static()) {
    return Error::Ok;  // OpenVINO wrote into the ExecuTorch tensor itself.
  }
  Tensor& tensor = value.toTensor();
  if (to_ov_type(tensor.scalar_type()) != spec_.type()) {
    return spec_.check(tensor);  // logs the dtype mismatch
  }
  ov::Tensor produced = request.get_output_tensor(index_);
  return copy_dynamic_output(produced, tensor, spec_.name());
}

}  // namespace executorch_openvino
