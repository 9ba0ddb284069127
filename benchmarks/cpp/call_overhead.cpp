/*
 * What one call through ExecuTorch and our delegate costs over OpenVINO alone,
 * measured in C++ so that no Python layer is counted on either side.
 *
 *   etov_call_overhead program.pte [--precision f32|bf16|f16] [--rounds N] [--round-ms MS]
 *
 * In one process it loads the program as a C++ application would (FileDataLoader,
 * Program::load, load_method with planned memory, the precision as a per-load
 * option) and, from the same file, compiles the delegate's IR with OpenVINO alone:
 * the blob is found by its magic (the program must hold exactly one of our
 * delegates, and nothing else that needs a kernel), parsed by the runtime's own
 * parse_blob, and compiled with the runtime's own compile_config. Both get the
 * same input values once (set_input; set_input_tensor on preallocated tensors, and
 * preallocated outputs bound with set_output_tensor); a timed call is then
 * Method::execute() against InferRequest::infer().
 *
 * Rounds alternate which engine goes first; in each, an engine makes a few
 * untimed calls, then calls for --round-ms milliseconds, each timed with
 * steady_clock. Prints one JSON object: per engine the median and the median of
 * each round, in microseconds, and the largest difference between the two
 * engines' first outputs relative to the largest OpenVINO value.
 * Exit status: 0 success, 1 usage or I/O, 2 a load or a call failed.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/backend/backend_options_map.h>
#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#include <openvino/runtime/core.hpp>

#include "blob_format.h"
#include "blob_reader.h"
#include "method_memory.h"
#include "options.h"

namespace {

using executorch::aten::ScalarType;
using executorch::extension::FileDataLoader;
using executorch::runtime::BackendOptions;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::LoadBackendOptionsMap;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::TensorInfo;
using executorch::runtime::etensor::TensorImpl;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string program;
  std::string precision = "f32";
  int rounds = 10;
  double round_ms = 300;
};

/// The value of element k of input j; both engines get the same.
float input_value(size_t j, size_t k) {
  return static_cast<float>(static_cast<int>((7 * k + 5 * j) % 17) - 8) / 8.0f;
}

/// An ExecuTorch float tensor with its own memory, contiguous.
struct HostTensor {
  std::vector<float> data;
  std::vector<TensorImpl::SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<TensorImpl::StridesType> strides;
  std::unique_ptr<TensorImpl> impl;

  HostTensor(const TensorInfo& info, size_t j)
      : sizes(info.sizes().begin(), info.sizes().end()), dim_order(info.dim_order().begin(), info.dim_order().end()) {
    strides.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    size_t numel = 1;
    for (auto size : sizes) numel *= static_cast<size_t>(size);
    data.resize(numel);
    for (size_t k = 0; k < numel; ++k) data[k] = input_value(j, k);
    impl = std::make_unique<TensorImpl>(ScalarType::Float, static_cast<ssize_t>(sizes.size()), sizes.data(),
                                        data.data(), dim_order.data(), strides.data());
  }
};

/// The program loaded as a C++ application loads it, inputs set once.
struct ExecutorchSide {
  std::unique_ptr<FileDataLoader> loader;
  std::unique_ptr<Program> program;
  std::unique_ptr<executorch_openvino::MethodMemory> memory;
  std::vector<std::unique_ptr<HostTensor>> inputs;
  std::unique_ptr<Method> method;
};

bool load_executorch(const Args& args, ExecutorchSide& side) {
  Result<FileDataLoader> loader = FileDataLoader::from(args.program.c_str());
  if (!loader.ok()) return false;
  side.loader = std::make_unique<FileDataLoader>(std::move(*loader));
  Result<Program> program = Program::load(side.loader.get());
  if (!program.ok()) return false;
  side.program = std::make_unique<Program>(std::move(*program));
  Result<MethodMeta> meta = side.program->method_meta("forward");
  if (!meta.ok()) return false;
  side.memory = std::make_unique<executorch_openvino::MethodMemory>(*meta);

  BackendOptions<1> precision;
  if (precision.set_option("inference_precision", args.precision.c_str()) != Error::Ok) return false;
  LoadBackendOptionsMap backend_options;
  if (backend_options.set_options("ExecutorchOpenvinoBackend", precision.view()) != Error::Ok) return false;
  Result<Method> method =
      side.program->load_method("forward", side.memory->manager(), nullptr, nullptr, &backend_options);
  if (!method.ok()) return false;
  side.method = std::make_unique<Method>(std::move(*method));
  for (size_t j = 0; j < meta->num_inputs(); ++j) {
    Result<TensorInfo> info = meta->input_tensor_meta(j);
    if (!info.ok() || info->scalar_type() != ScalarType::Float) {
      std::fprintf(stderr, "input %zu: this benchmark feeds float tensors only\n", j);
      return false;
    }
    side.inputs.push_back(std::make_unique<HostTensor>(*info, j));
    if (side.method->set_input(EValue(executorch::aten::Tensor(side.inputs.back()->impl.get())), j) != Error::Ok) {
      return false;
    }
  }
  return true;
}

/// The delegate's IR compiled by OpenVINO alone, inputs and outputs bound once.
struct OpenvinoSide {
  std::vector<uint8_t> weights;  // OpenVINO's constants may point into it
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::vector<ov::Tensor> inputs;
  std::vector<ov::Tensor> outputs;
};

bool load_openvino(const Args& args, const std::vector<uint8_t>& file, OpenvinoSide& side) {
  const std::string magic(executorch_openvino::kBlobMagic, sizeof(executorch_openvino::kBlobMagic));
  const std::string_view bytes(reinterpret_cast<const char*>(file.data()), file.size());
  const size_t at = bytes.find(magic);
  if (at == std::string_view::npos || bytes.find(magic, at + 1) != std::string_view::npos) {
    std::fprintf(stderr, "%s must hold exactly one executorch_openvino delegate\n", args.program.c_str());
    return false;
  }
  Result<executorch_openvino::BlobView> blob = executorch_openvino::parse_blob(file.data() + at, file.size() - at);
  if (!blob.ok()) return false;
  side.weights.assign(blob->ir_weights, blob->ir_weights + blob->ir_weights_size);
  executorch_openvino::CompileSettings options;
  options.inference_precision = args.precision;
  ov::Core core;
  side.compiled = core.compile_model(std::string(blob->ir_xml),
                                     ov::Tensor(ov::element::u8, ov::Shape{side.weights.size()}, side.weights.data()),
                                     options.device, executorch_openvino::compile_config(options));
  side.request = side.compiled.create_infer_request();
  for (size_t j = 0; j < side.compiled.inputs().size(); ++j) {
    const auto& port = side.compiled.input(j);
    side.inputs.emplace_back(port.get_element_type(), port.get_shape());
    float* data = side.inputs.back().data<float>();
    for (size_t k = 0; k < side.inputs.back().get_size(); ++k) data[k] = input_value(j, k);
    side.request.set_input_tensor(j, side.inputs.back());
  }
  for (size_t i = 0; i < side.compiled.outputs().size(); ++i) {
    const auto& port = side.compiled.output(i);
    side.outputs.emplace_back(port.get_element_type(), port.get_shape());
    side.request.set_output_tensor(i, side.outputs.back());
  }
  return true;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

struct Series {
  std::vector<double> all_us;
  std::vector<double> round_medians_us;
};

/// Untimed calls, then calls for `budget_ms`, each timed; false when a call fails.
bool run_round(const std::function<bool()>& call, double budget_ms, Series& series) {
  for (int i = 0; i < 5; ++i) {
    if (!call()) return false;
  }
  std::vector<double> round;
  const auto end = Clock::now() + std::chrono::duration<double, std::milli>(budget_ms);
  while (Clock::now() < end || round.size() < 10) {
    const auto start = Clock::now();
    if (!call()) return false;
    round.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  series.round_medians_us.push_back(median(round));
  series.all_us.insert(series.all_us.end(), round.begin(), round.end());
  return true;
}

std::string json_list(const std::vector<double>& values) {
  std::string text = "[";
  char number[32];
  for (size_t i = 0; i < values.size(); ++i) {
    std::snprintf(number, sizeof(number), "%s%.3f", i ? ", " : "", values[i]);
    text += number;
  }
  return text + "]";
}

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--precision" && has_value) {
      args.precision = argv[++i];
    } else if (arg == "--rounds" && has_value) {
      args.rounds = std::atoi(argv[++i]);
    } else if (arg == "--round-ms" && has_value) {
      args.round_ms = std::atof(argv[++i]);
    } else if (!arg.empty() && arg[0] != '-' && args.program.empty()) {
      args.program = arg;
    } else {
      return false;
    }
  }
  return !args.program.empty() && args.rounds > 0 && args.round_ms > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::fprintf(stderr, "usage: %s program.pte [--precision f32|bf16|f16] [--rounds N] [--round-ms MS]\n", argv[0]);
    return 1;
  }
  executorch::runtime::runtime_init();
  std::ifstream stream(args.program, std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  if (file.empty()) {
    std::fprintf(stderr, "cannot read %s\n", args.program.c_str());
    return 1;
  }
  ExecutorchSide ours;
  OpenvinoSide alone;
  try {
    if (!load_openvino(args, file, alone) || !load_executorch(args, ours)) {
      std::fprintf(stderr, "loading %s failed (ExecuTorch's log above says why)\n", args.program.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "OpenVINO failed: %s\n", e.what());
    return 2;
  }
  const std::function<bool()> call_ours = [&] { return ours.method->execute() == Error::Ok; };
  const std::function<bool()> call_alone = [&] {
    alone.request.infer();
    return true;
  };

  Series ours_series, alone_series;
  for (int round = 0; round < args.rounds; ++round) {
    const bool ours_first = round % 2 == 0;
    const bool ok =
        ours_first
            ? run_round(call_ours, args.round_ms, ours_series) && run_round(call_alone, args.round_ms, alone_series)
            : run_round(call_alone, args.round_ms, alone_series) && run_round(call_ours, args.round_ms, ours_series);
    if (!ok) {
      std::fprintf(stderr, "a call failed in round %d\n", round);
      return 2;
    }
  }

  // Both engines computed from the same inputs: their first outputs must agree.
  const EValue& first_output = ours.method->get_output(0);
  if (!first_output.isTensor() || first_output.toTensor().scalar_type() != ScalarType::Float ||
      alone.outputs[0].get_element_type() != ov::element::f32) {
    std::fprintf(stderr, "the first output is not a float tensor; this benchmark compares float outputs\n");
    return 2;
  }
  const auto& ours_output = first_output.toTensor();
  const float* expected = alone.outputs[0].data<float>();
  const size_t numel = std::min(static_cast<size_t>(ours_output.numel()), alone.outputs[0].get_size());
  double largest = 0, difference = 0;
  for (size_t k = 0; k < numel; ++k) {
    largest = std::max(largest, std::fabs(static_cast<double>(expected[k])));
    difference =
        std::max(difference, std::fabs(static_cast<double>(ours_output.const_data_ptr<float>()[k]) - expected[k]));
  }
  std::printf(
      "{\"program\": \"%s\", \"precision\": \"%s\", \"rounds\": %d, \"round_ms\": %.0f,\n"
      " \"ours\": {\"median_us\": %.3f, \"calls\": %zu, \"round_medians_us\": %s},\n"
      " \"openvino\": {\"median_us\": %.3f, \"calls\": %zu, \"round_medians_us\": %s},\n"
      " \"outputs_compared\": %zu, \"max_rel_diff\": %.3g}\n",
      args.program.c_str(), args.precision.c_str(), args.rounds, args.round_ms, median(ours_series.all_us),
      ours_series.all_us.size(), json_list(ours_series.round_medians_us).c_str(), median(alone_series.all_us),
      alone_series.all_us.size(), json_list(alone_series.round_medians_us).c_str(), numel,
      largest > 0 ? difference / largest : difference);
  return 0;
}
