/*
 * Zero-copy unit test of tensor_binding: a static input and output are
 * bound to the ExecuTorch tensors' own memory, so OpenVINO reads and writes the
 * caller's buffers; binding the same tensors again rebinds nothing; binding other
 * memory does rebind. A dynamic output is left to OpenVINO and copied back. An Int
 * (a symbolic size made outside the delegate) goes into a 0-d int64 input. A
 * tensor without memory is refused, unless it holds no bytes.
 *
 * Builds a tiny ov::Model in code (Parameter -> Relu -> Result), compiles it on
 * CPU, and drives InputBinding / OutputBinding as OpenvinoBackend::execute does
 * (outputs bound first, then inputs, infer, collect).
 *
 * Exits 0 when every check passes; otherwise prints each failed check and exits 1.
 */
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/runtime.h>
#include <openvino/core/model.hpp>
#include <openvino/op/constant.hpp>
#include <openvino/op/multiply.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/relu.hpp>
#include <openvino/op/result.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/properties.hpp>

#include "tensor_binding.h"

namespace {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::TensorShapeDynamism;
using executorch::runtime::etensor::TensorImpl;
using executorch_openvino::InputBinding;
using executorch_openvino::OutputBinding;

int failures = 0;

#define EXPECT(cond, ...)                                                    \
  do {                                                                       \
    if (!(cond)) {                                                           \
      ++failures;                                                            \
      std::fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                     \
      std::fprintf(stderr, "\n");                                            \
    }                                                                        \
  } while (0)

/// A float ExecuTorch tensor over memory the test owns (contiguous, default dim order).
struct OwnedTensor {
  std::vector<float> data;
  std::vector<TensorImpl::SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<TensorImpl::StridesType> strides;
  std::unique_ptr<TensorImpl> impl;

  OwnedTensor(std::vector<TensorImpl::SizesType> shape, size_t capacity,
              TensorShapeDynamism dynamism = TensorShapeDynamism::STATIC)
      : data(capacity, -100.0f), sizes(std::move(shape)) {
    strides.resize(sizes.size());
    TensorImpl::StridesType stride = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= sizes[i];
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      dim_order.push_back(static_cast<TensorImpl::DimOrderType>(i));
    }
    impl = std::make_unique<TensorImpl>(ScalarType::Float, static_cast<ssize_t>(sizes.size()), sizes.data(),
                                        data.data(), dim_order.data(), strides.data(), dynamism);
  }
  Tensor tensor() { return Tensor(impl.get()); }
  // What ExecuTorch hands over for a zero-byte tensor, or for an output a program
  // left unplanned when the application set no memory for it.
  void drop_memory() { impl->set_data(nullptr); }
  // Writes values into the same memory (never reallocates it).
  void set(std::initializer_list<float> values) { std::copy(values.begin(), values.end(), data.begin()); }
};

std::shared_ptr<ov::Model> relu_model(const ov::PartialShape& shape) {
  auto parameter = std::make_shared<ov::op::v0::Parameter>(ov::element::f32, shape);
  auto relu = std::make_shared<ov::op::v0::Relu>(parameter);
  auto result = std::make_shared<ov::op::v0::Result>(relu);
  return std::make_shared<ov::Model>(ov::ResultVector{result}, ov::ParameterVector{parameter}, "relu");
}

ov::CompiledModel compile(ov::Core& core, const std::shared_ptr<ov::Model>& model) {
  return core.compile_model(model, "CPU", ov::hint::inference_precision(ov::element::f32));
}

// The identity of the ov::Tensor the request holds: the address of its shape,
// which lives in the tensor's implementation object. Two ov::Tensor handles on
// the same implementation give the same address.
const void* identity(const ov::Tensor& tensor) {
  return &tensor.get_shape();
}

void expect_relu(const std::vector<float>& input, const std::vector<float>& output, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    const float want = input[i] > 0.0f ? input[i] : 0.0f;
    EXPECT(output[i] == want, "%s: output[%zu] = %g, expected relu(%g) = %g", what, i, output[i], input[i], want);
  }
}

Error bind_and_infer(ov::InferRequest& request, InputBinding& input, OutputBinding& output, EValue& in_value,
                     EValue& out_value) {
  // The order OpenvinoBackend::execute uses: outputs, then inputs.
  Error error = output.bind(request, out_value);
  if (error != Error::Ok) return error;
  error = input.bind(request, in_value);
  if (error != Error::Ok) return error;
  request.infer();
  return output.collect(request, out_value);
}

void static_shapes(ov::Core& core) {
  ov::CompiledModel compiled = compile(core, relu_model(ov::PartialShape{2, 3}));
  ov::InferRequest request = compiled.create_infer_request();
  InputBinding input(compiled.inputs()[0], 0);
  OutputBinding output(compiled.outputs()[0], 0);

  OwnedTensor in({2, 3}, 6);
  OwnedTensor out({2, 3}, 6);
  in.set({-1.5f, 0.0f, 2.25f, -0.0f, 7.0f, -3.0f});
  const std::vector<float> input_before = in.data;
  EValue in_value(in.tensor());
  EValue out_value(out.tensor());

  // First call: binds both tensors.
  EXPECT(bind_and_infer(request, input, output, in_value, out_value) == Error::Ok, "first call failed");
  const ov::Tensor in_bound = request.get_input_tensor(0);
  const ov::Tensor out_bound = request.get_output_tensor(0);
  EXPECT(in_bound.data() == in.data.data(), "OpenVINO reads input at %p, the test's buffer is %p", in_bound.data(),
         static_cast<void*>(in.data.data()));
  EXPECT(out_bound.data() == out.data.data(), "OpenVINO writes output at %p, the test's buffer is %p", out_bound.data(),
         static_cast<void*>(out.data.data()));
  expect_relu(in.data, out.data, 6, "first call");
  EXPECT(in.data == input_before, "the input buffer was written to");

  // Second call, same tensors, new values in the same memory: nothing is rebound
  // (the request still holds the very ov::Tensor objects of the first call), and
  // the new result lands in the same output buffer.
  in.set({4.0f, -4.0f, 0.5f, -0.5f, 1e-30f, -1e30f});
  EValue in_again(in.tensor());
  EValue out_again(out.tensor());
  EXPECT(bind_and_infer(request, input, output, in_again, out_again) == Error::Ok, "second call failed");
  EXPECT(identity(request.get_input_tensor(0)) == identity(in_bound),
         "the input was rebound on the second call with the same tensor");
  EXPECT(identity(request.get_output_tensor(0)) == identity(out_bound),
         "the output was rebound on the second call with the same tensor");
  EXPECT(request.get_input_tensor(0).data() == in.data.data(), "input moved on the second call");
  EXPECT(request.get_output_tensor(0).data() == out.data.data(), "output moved on the second call");
  expect_relu(in.data, out.data, 6, "second call");

  // Control: other memory is rebound (so the identity check above can fail).
  OwnedTensor in2({2, 3}, 6);
  OwnedTensor out2({2, 3}, 6);
  in2.set({1.0f, -2.0f, 3.0f, -4.0f, 5.0f, -6.0f});
  EValue in2_value(in2.tensor());
  EValue out2_value(out2.tensor());
  EXPECT(bind_and_infer(request, input, output, in2_value, out2_value) == Error::Ok, "third call failed");
  EXPECT(identity(request.get_input_tensor(0)) != identity(in_bound), "a different input buffer was not rebound");
  EXPECT(identity(request.get_output_tensor(0)) != identity(out_bound), "a different output buffer was not rebound");
  EXPECT(request.get_input_tensor(0).data() == in2.data.data(), "third call: input not the new buffer");
  EXPECT(request.get_output_tensor(0).data() == out2.data.data(), "third call: output not the new buffer");
  expect_relu(in2.data, out2.data, 6, "third call");

  // A tensor of the wrong shape is refused, not bound.
  OwnedTensor wrong({3, 2}, 6);
  EValue wrong_value(wrong.tensor());
  EXPECT(input.bind(request, wrong_value) == Error::InvalidArgument, "a [3, 2] input was accepted");
  EXPECT(request.get_input_tensor(0).data() == in2.data.data(), "a refused input changed the binding");
}

void dynamic_output(ov::Core& core) {
  ov::CompiledModel compiled = compile(core, relu_model(ov::PartialShape{ov::Dimension(1, 4), 3}));
  ov::InferRequest request = compiled.create_infer_request();
  InputBinding input(compiled.inputs()[0], 0);
  OutputBinding output(compiled.outputs()[0], 0);

  // ExecuTorch plans a dynamic-bound output at its upper bound and resizes it.
  OwnedTensor out({4, 3}, 12, TensorShapeDynamism::DYNAMIC_BOUND);
  EValue out_value(out.tensor());
  for (int rows : {2, 4, 1}) {
    OwnedTensor in({rows, 3}, rows * 3);
    for (int i = 0; i < rows * 3; ++i) in.data[i] = static_cast<float>(i % 5) - 2.0f;
    EValue in_value(in.tensor());
    EXPECT(bind_and_infer(request, input, output, in_value, out_value) == Error::Ok, "dynamic call with %d rows failed",
           rows);
    EXPECT(request.get_input_tensor(0).data() == in.data.data(),
           "dynamic input (%d rows) is not read from the test's buffer", rows);
    EXPECT(out.impl->size(0) == rows && out.impl->size(1) == 3, "dynamic output resized to [%d, %d], expected [%d, 3]",
           static_cast<int>(out.impl->size(0)), static_cast<int>(out.impl->size(1)), rows);
    expect_relu(in.data, out.data, rows * 3, "dynamic output");
  }
}

void int_input(ov::Core& core) {
  auto size = std::make_shared<ov::op::v0::Parameter>(ov::element::i64, ov::PartialShape{});
  auto twice = std::make_shared<ov::op::v1::Multiply>(size, ov::op::v0::Constant::create(ov::element::i64, {}, {2}));
  auto model = std::make_shared<ov::Model>(ov::ResultVector{std::make_shared<ov::op::v0::Result>(twice)},
                                           ov::ParameterVector{size}, "twice");
  ov::CompiledModel compiled = compile(core, model);
  ov::InferRequest request = compiled.create_infer_request();
  InputBinding input(compiled.inputs()[0], 0);

  const void* first_bound = nullptr;
  for (int64_t value : {5, 12}) {
    EXPECT(input.bind(request, EValue(value)) == Error::Ok, "the int %lld was refused", static_cast<long long>(value));
    request.infer();
    const int64_t doubled = request.get_output_tensor(0).data<int64_t>()[0];
    EXPECT(doubled == 2 * value, "OpenVINO read %lld, expected %lld", static_cast<long long>(doubled / 2),
           static_cast<long long>(value));
    const void* bound = identity(request.get_input_tensor(0));
    EXPECT(first_bound == nullptr || bound == first_bound, "the int's tensor was rebound on a later call");
    first_bound = bound;
  }

  // An int given to a float tensor input is refused.
  ov::CompiledModel relu = compile(core, relu_model(ov::PartialShape{2, 3}));
  ov::InferRequest relu_request = relu.create_infer_request();
  InputBinding tensor_input(relu.inputs()[0], 0);
  EXPECT(tensor_input.bind(relu_request, EValue(int64_t{3})) == Error::InvalidArgument,
         "an int was accepted by a [2, 3] f32 input");
}

// A tensor of one or more bytes without memory is refused with an error; a
// zero-byte one (which ExecuTorch gives no memory) is bound and computed.
void tensors_without_memory(ov::Core& core) {
  ov::CompiledModel fixed = compile(core, relu_model(ov::PartialShape{2, 3}));
  ov::InferRequest fixed_request = fixed.create_infer_request();
  OutputBinding static_output(fixed.outputs()[0], 0);
  OwnedTensor unplanned({2, 3}, 6);
  unplanned.drop_memory();
  EValue unplanned_value(unplanned.tensor());
  EXPECT(static_output.bind(fixed_request, unplanned_value) == Error::InvalidArgument,
         "a static output without memory was accepted");

  ov::CompiledModel growing = compile(core, relu_model(ov::PartialShape{ov::Dimension(0, 4), 3}));
  ov::InferRequest request = growing.create_infer_request();
  InputBinding input(growing.inputs()[0], 0);
  OutputBinding dynamic_output(growing.outputs()[0], 0);
  OwnedTensor in({2, 3}, 6);
  in.set({1.0f, -2.0f, 3.0f, -4.0f, 5.0f, -6.0f});
  OwnedTensor out({4, 3}, 12, TensorShapeDynamism::DYNAMIC_BOUND);
  out.drop_memory();
  EValue in_value(in.tensor());
  EValue out_value(out.tensor());
  EXPECT(bind_and_infer(request, input, dynamic_output, in_value, out_value) == Error::InvalidArgument,
         "a dynamic output without memory was accepted");

  OwnedTensor empty_in({0, 3}, 0);
  empty_in.drop_memory();
  OwnedTensor empty_out({4, 3}, 12, TensorShapeDynamism::DYNAMIC_BOUND);
  EValue empty_in_value(empty_in.tensor());
  EValue empty_out_value(empty_out.tensor());
  EXPECT(bind_and_infer(request, input, dynamic_output, empty_in_value, empty_out_value) == Error::Ok,
         "a [0, 3] input without memory was refused");
  EXPECT(empty_out.impl->size(0) == 0, "the output of a [0, 3] input has %d rows",
         static_cast<int>(empty_out.impl->size(0)));

  ov::CompiledModel empty = compile(core, relu_model(ov::PartialShape{0, 3}));
  ov::InferRequest empty_request = empty.create_infer_request();
  InputBinding empty_input(empty.inputs()[0], 0);
  OutputBinding empty_output(empty.outputs()[0], 0);
  OwnedTensor static_empty_out({0, 3}, 0);
  static_empty_out.drop_memory();
  EValue static_empty_out_value(static_empty_out.tensor());
  EXPECT(bind_and_infer(empty_request, empty_input, empty_output, empty_in_value, static_empty_out_value) == Error::Ok,
         "a static [0, 3] program refused its zero-byte tensors");
}

}  // namespace

int main() {
  executorch::runtime::runtime_init();
  try {
    ov::Core core;
    static_shapes(core);
    dynamic_output(core);
    int_input(core);
    tensors_without_memory(core);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: exception: %s\n", e.what());
    return 1;
  }
  if (failures != 0) {
    std::fprintf(stderr, "tensor_binding_test: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("tensor_binding_test: all checks passed\n");
  return 0;
}
