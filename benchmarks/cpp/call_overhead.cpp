/*
 * What one call through ExecuTorch and our delegate costs over OpenVINO alone,
 * measured in C++ so that no Python layer is counted on either side.
 *
 *   etov_call_overhead program.pte [--method NAME] [--precision f32|bf16|f16] [--rounds N] [--round-ms MS]
 *   etov_call_overhead program.pte --method NAME --steps N [--start S] [--precision P] [--rounds N]
 *
 * In one process it loads the program as a C++ application would (FileDataLoader,
 * Program::load, load_method with planned memory, the precision as a per-load
 * option) and, from the same file, compiles the method's delegate IR with OpenVINO
 * alone: the blob is found by its magic, parsed by the runtime's own parse_blob, its
 * weights in the program's named data put in by the runtime's put_named_weights, and
 * compiled with the runtime's own compile_config. The method must run whole in one of
 * our delegates, whose inputs are the method's in order; in a program with several
 * delegates (one per method), the method's is the one whose IR takes inputs of the
 * method's dtypes and shapes. Both engines get the same input values (set_input;
 * set_input_tensor on preallocated tensors, and preallocated outputs bound with
 * set_output_tensor); a timed call is then Method::execute() against
 * InferRequest::infer(), as OpenVINO GenAI times its own steps.
 *
 * Calls (no --steps): the inputs are set once and every call repeats them. Float
 * inputs get seeded random values; other dtypes are refused.
 *
 * Decoder steps (--steps N): the method is a decoder step with a KV cache kept as
 * state, such as export_encoder_decoder's text_decoder. Of its int64 inputs, the one
 * of rank 2 ([1, 1]) takes the token id and the one of rank 1 ([1]) the position;
 * every other input is float and gets seeded random values once (the encoder's
 * output, say). A round is one sequence: positions 0..S-1 untimed (position 0
 * starts a fresh sequence: our delegate empties its cache there, and OpenVINO
 * alone gets reset_state() first), then positions S..S+N-1 each timed; the token id
 * changes each step. Before each call, untimed, the token and position are written
 * into the input tensors (and set_input'ed again on ours).
 *
 * Rounds alternate which engine goes first. In call mode an engine makes a few
 * untimed calls in each round, then calls for --round-ms milliseconds, each timed
 * with steady_clock; in step mode each engine first runs one untimed sequence.
 * Prints one JSON object: per engine the median and the median of each round, in
 * microseconds, and the largest difference between the two engines' first outputs
 * (after their last call: the same inputs, and in step mode the same sequence)
 * relative to the largest OpenVINO value.
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
#include <random>
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
#include <executorch_openvino/backend.h>
#include <openvino/op/parameter.hpp>
#include <openvino/runtime/core.hpp>

#include "blob_format.h"
#include "blob_reader.h"
#include "method_memory.h"
#include "named_weights.h"
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
  std::string method = "forward";
  std::string precision = "f32";
  int rounds = 10;
  double round_ms = 300;
  int steps = 0;  // 0: calls with the same inputs; else decoder steps a round
  int start = 4;  // untimed positions before the timed steps
};

/// Seeded random values of float input j; both engines get the same.
void fill_input(float* data, size_t count, size_t j) {
  std::mt19937 generator(static_cast<unsigned>(1000 + j));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t k = 0; k < count; ++k) data[k] = normal(generator);
}

/// The token id fed at `position`: it changes every step, within any vocabulary of 64 or more.
int64_t token_at(int64_t position) {
  return (3 + 7 * position) % 64;
}

/// Which inputs a decoder step writes before each call; npos in call mode.
struct StepInputs {
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t token = npos;
  size_t position = npos;
};

/// The token and position inputs of a decoder step: its int64 inputs of rank 2 and 1.
bool find_step_inputs(const MethodMeta& meta, StepInputs& step) {
  for (size_t j = 0; j < meta.num_inputs(); ++j) {
    Result<TensorInfo> info = meta.input_tensor_meta(j);
    if (!info.ok() || info->scalar_type() != ScalarType::Long) continue;
    const size_t rank = info->sizes().size();
    size_t* slot = rank == 2 ? &step.token : rank == 1 ? &step.position : nullptr;
    if (slot == nullptr || *slot != StepInputs::npos) {
      std::fprintf(stderr, "input %zu: a decoder step has one int64 token input [1, 1] and one position input [1]\n",
                   j);
      return false;
    }
    *slot = j;
  }
  if (step.token == StepInputs::npos || step.position == StepInputs::npos) {
    std::fprintf(stderr, "--steps: the method has no int64 token input [1, 1] and position input [1]\n");
    return false;
  }
  return true;
}

/// An ExecuTorch tensor with its own memory, contiguous: float (random values) or int64 (zeros).
struct HostTensor {
  std::vector<int64_t> storage;  // 8-byte aligned, for either dtype
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
    storage.assign(numel, 0);  // as many int64 as elements: room for floats too
    if (info.scalar_type() == ScalarType::Float) fill_input(reinterpret_cast<float*>(storage.data()), numel, j);
    impl = std::make_unique<TensorImpl>(info.scalar_type(), static_cast<ssize_t>(sizes.size()), sizes.data(),
                                        storage.data(), dim_order.data(), strides.data());
  }
};

/// The program loaded as a C++ application loads it, inputs set.
struct ExecutorchSide {
  std::unique_ptr<FileDataLoader> loader;
  std::unique_ptr<Program> program;
  std::unique_ptr<executorch_openvino::MethodMemory> memory;
  std::vector<std::unique_ptr<HostTensor>> inputs;
  std::unique_ptr<Method> method;

  /// Writes a step's token and position into their inputs, and sets them again
  /// (a program that plans memory for its inputs copies them at set_input).
  bool set_step(const StepInputs& step, int64_t position) {
    inputs[step.token]->storage[0] = token_at(position);
    inputs[step.position]->storage[0] = position;
    return set(step.token) && set(step.position);
  }

  bool set(size_t j) {
    return method->set_input(EValue(executorch::aten::Tensor(inputs[j]->impl.get())), j) == Error::Ok;
  }
};

bool open_program(const Args& args, ExecutorchSide& side) {
  Result<FileDataLoader> loader = FileDataLoader::from(args.program.c_str());
  if (!loader.ok()) return false;
  side.loader = std::make_unique<FileDataLoader>(std::move(*loader));
  Result<Program> program = Program::load(side.loader.get());
  if (!program.ok()) return false;
  side.program = std::make_unique<Program>(std::move(*program));
  if (!side.program->method_meta(args.method.c_str()).ok()) {
    std::fprintf(stderr, "%s has no method '%s'\n", args.program.c_str(), args.method.c_str());
    return false;
  }
  return true;
}

bool load_method(const Args& args, const StepInputs& step, ExecutorchSide& side) {
  Result<MethodMeta> meta = side.program->method_meta(args.method.c_str());
  side.memory = std::make_unique<executorch_openvino::MethodMemory>(*meta);
  BackendOptions<1> precision;
  if (precision.set_option("inference_precision", args.precision.c_str()) != Error::Ok) return false;
  LoadBackendOptionsMap backend_options;
  if (backend_options.set_options("ExecutorchOpenvinoBackend", precision.view()) != Error::Ok) return false;
  Result<Method> method =
      side.program->load_method(args.method.c_str(), side.memory->manager(), nullptr, nullptr, &backend_options);
  if (!method.ok()) return false;
  side.method = std::make_unique<Method>(std::move(*method));
  for (size_t j = 0; j < meta->num_inputs(); ++j) {
    Result<TensorInfo> info = meta->input_tensor_meta(j);
    const bool step_input = j == step.token || j == step.position;
    if (!info.ok() || (info->scalar_type() != ScalarType::Float && !step_input)) {
      std::fprintf(stderr, "input %zu: this benchmark feeds float tensors (and a decoder step's token and position)\n",
                   j);
      return false;
    }
    side.inputs.push_back(std::make_unique<HostTensor>(*info, j));
    if (!side.set(j)) return false;
  }
  return true;
}

/// The delegate's IR compiled by OpenVINO alone, inputs and outputs bound once.
struct OpenvinoSide {
  std::vector<uint8_t> weights;  // OpenVINO's constants may point into it
  executorch_openvino::NamedWeightBuffers named_weights;
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::vector<ov::Tensor> inputs;
  std::vector<ov::Tensor> outputs;
  StepInputs step;  // by the model's input order

  /// As ExecutorchSide::set_step; position 0 starts a fresh sequence, as our delegate does.
  void set_step(int64_t position) {
    if (position == 0) request.reset_state();
    inputs[step.token].data<int64_t>()[0] = token_at(position);
    inputs[step.position].data<int64_t>()[0] = position;
  }
};

/// A blob in the program file: where it starts, and its header.
struct FoundBlob {
  size_t offset;
  executorch_openvino::BlobView header;
};

/// Every executorch_openvino blob in the file whose header parses.
std::vector<FoundBlob> blobs_in(const std::vector<uint8_t>& file) {
  const std::string magic(executorch_openvino::kBlobMagic, sizeof(executorch_openvino::kBlobMagic));
  const std::string_view bytes(reinterpret_cast<const char*>(file.data()), file.size());
  std::vector<FoundBlob> blobs;
  for (size_t at = bytes.find(magic); at != std::string_view::npos; at = bytes.find(magic, at + 1)) {
    Result<executorch_openvino::BlobView> header =
        executorch_openvino::parse_blob_header(file.data() + at, file.size() - at);
    if (header.ok()) blobs.push_back({at, *header});
  }
  return blobs;
}

ov::Tensor weights_of(const executorch_openvino::BlobView& blob) {
  return ov::Tensor(ov::element::u8, ov::Shape{blob.ir_weights_size}, const_cast<uint8_t*>(blob.ir_weights));
}

/// Whether a Parameter stands for a weight in the program's named data (named_weights.h).
bool is_named_weight(const ov::op::v0::Parameter& parameter) {
  const auto& names = parameter.output(0).get_names();
  return std::any_of(names.begin(), names.end(),
                     [](const std::string& name) { return name.rfind(executorch_openvino::kNamedWeightName, 0) == 0; });
}

/// Whether a model input takes tensors of the method input's dtype and shape.
bool has_dtype_and_shape(const ov::op::v0::Parameter& input, const TensorInfo& info) {
  const ov::element::Type type = info.scalar_type() == ScalarType::Long    ? ov::element::i64
                                 : info.scalar_type() == ScalarType::Float ? ov::element::f32
                                                                           : ov::element::dynamic;
  const ov::PartialShape& shape = input.get_partial_shape();
  if (input.get_element_type() != type || shape.rank().is_dynamic() || shape.size() != info.sizes().size()) {
    return false;
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].compatible(info.sizes()[d])) return false;
  }
  return true;
}

/// Which method input each of the model's inputs is (the delegate may order them
/// otherwise): the first one not yet taken of the same dtype and shape. Empty when
/// the model does not take the method's inputs.
std::vector<size_t> method_inputs_of(const ov::Model& model, const MethodMeta& meta) {
  std::vector<std::shared_ptr<ov::op::v0::Parameter>> inputs;
  for (const auto& parameter : model.get_parameters()) {
    if (!is_named_weight(*parameter)) inputs.push_back(parameter);
  }
  if (inputs.size() != meta.num_inputs()) return {};
  std::vector<size_t> method_input;
  std::vector<bool> taken(meta.num_inputs(), false);
  for (const auto& input : inputs) {
    for (size_t j = 0; j < meta.num_inputs() && method_input.size() < inputs.size(); ++j) {
      Result<TensorInfo> info = meta.input_tensor_meta(j);
      if (!taken[j] && info.ok() && has_dtype_and_shape(*input, *info)) {
        taken[j] = true;
        method_input.push_back(j);
        break;
      }
    }
    if (method_input.size() != static_cast<size_t>(&input - inputs.data()) + 1) return {};
  }
  return method_input;
}

/// The IR of the method's delegate, read, with its named weights put in; null after a
/// message when there is not exactly one.
std::shared_ptr<ov::Model> method_ir(const Args& args, const std::vector<uint8_t>& file, const Program& program,
                                     ov::Core& core, OpenvinoSide& side) {
  const std::vector<FoundBlob> blobs = blobs_in(file);
  Result<MethodMeta> meta = program.method_meta(args.method.c_str());
  std::vector<size_t> matching;
  for (size_t b = 0; b < blobs.size(); ++b) {
    const executorch_openvino::BlobView& header = blobs[b].header;
    if (blobs.size() == 1 ||
        !method_inputs_of(*core.read_model(std::string(header.ir_xml), weights_of(header)), *meta).empty()) {
      matching.push_back(b);
    }
  }
  if (matching.size() != 1) {
    std::fprintf(stderr, "%s must hold exactly one executorch_openvino delegate for method '%s' (found %zu of %zu)\n",
                 args.program.c_str(), args.method.c_str(), matching.size(), blobs.size());
    return nullptr;
  }
  const size_t offset = blobs[matching[0]].offset;
  Result<executorch_openvino::BlobView> blob =
      executorch_openvino::parse_blob(file.data() + offset, file.size() - offset);
  if (!blob.ok()) return nullptr;
  side.weights.assign(blob->ir_weights, blob->ir_weights + blob->ir_weights_size);
  std::shared_ptr<ov::Model> model = core.read_model(
      std::string(blob->ir_xml), ov::Tensor(ov::element::u8, ov::Shape{side.weights.size()}, side.weights.data()));
  if (blob->has_named_weights()) {
    Result<const executorch::runtime::NamedDataMap*> named_data = program.get_named_data_map();
    if (!named_data.ok() ||
        executorch_openvino::put_named_weights(*model, *named_data, side.named_weights) != Error::Ok) {
      return nullptr;
    }
  }
  return model;
}

bool load_openvino(const Args& args, const std::vector<uint8_t>& file, const Program& program, const StepInputs& step,
                   OpenvinoSide& side) {
  ov::Core core;
  std::shared_ptr<ov::Model> model = method_ir(args, file, program, core, side);
  if (!model) return false;
  const std::vector<size_t> method_input = method_inputs_of(*model, *program.method_meta(args.method.c_str()));
  if (method_input.empty()) {
    std::fprintf(stderr, "the delegate of '%s' does not take the method's inputs\n", args.method.c_str());
    return false;
  }
  executorch_openvino::CompileSettings options;
  options.inference_precision = args.precision;
  side.compiled = core.compile_model(model, options.device, executorch_openvino::compile_config(options));
  side.request = side.compiled.create_infer_request();
  for (size_t j = 0; j < side.compiled.inputs().size(); ++j) {
    const auto& port = side.compiled.input(j);
    side.inputs.emplace_back(port.get_element_type(), port.get_shape());
    ov::Tensor& input = side.inputs.back();
    if (method_input[j] == step.token) side.step.token = j;
    if (method_input[j] == step.position) side.step.position = j;
    if (port.get_element_type() == ov::element::f32) {
      fill_input(input.data<float>(), input.get_size(), method_input[j]);
    } else {
      std::memset(input.data(), 0, input.get_byte_size());
    }
    side.request.set_input_tensor(j, input);
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

/// One engine: a call, and (decoder steps) what writes a step's inputs before it.
struct Engine {
  std::function<bool()> call;
  std::function<bool(int64_t position)> set_step;
};

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

/// One sequence: positions 0..start-1 untimed, then `steps` positions each timed.
bool run_sequence(const Engine& engine, const Args& args, std::vector<double>& times) {
  for (int64_t position = 0; position < args.start + args.steps; ++position) {
    if (!engine.set_step(position)) return false;
    const auto start = Clock::now();
    if (!engine.call()) return false;
    if (position >= args.start) times.push_back(microseconds_since(start));
  }
  return true;
}

/// Calls for `args.round_ms` after a few untimed ones, each timed.
bool run_calls(const Engine& engine, const Args& args, std::vector<double>& times) {
  for (int i = 0; i < 5; ++i) {
    if (!engine.call()) return false;
  }
  const auto end = Clock::now() + std::chrono::duration<double, std::milli>(args.round_ms);
  while (Clock::now() < end || times.size() < 10) {
    const auto start = Clock::now();
    if (!engine.call()) return false;
    times.push_back(microseconds_since(start));
  }
  return true;
}

/// One round of an engine; false when a call fails.
bool run_round(const Engine& engine, const Args& args, Series& series) {
  std::vector<double> round;
  if (!(args.steps > 0 ? run_sequence(engine, args, round) : run_calls(engine, args, round))) return false;
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
    } else if (arg == "--method" && has_value) {
      args.method = argv[++i];
    } else if (arg == "--rounds" && has_value) {
      args.rounds = std::atoi(argv[++i]);
    } else if (arg == "--round-ms" && has_value) {
      args.round_ms = std::atof(argv[++i]);
    } else if (arg == "--steps" && has_value) {
      args.steps = std::atoi(argv[++i]);
    } else if (arg == "--start" && has_value) {
      args.start = std::atoi(argv[++i]);
    } else if (!arg.empty() && arg[0] != '-' && args.program.empty()) {
      args.program = arg;
    } else {
      return false;
    }
  }
  return !args.program.empty() && args.rounds > 0 && args.round_ms > 0 && args.steps >= 0 && args.start >= 0;
}

/// The largest difference between the engines' first outputs, relative to the largest
/// OpenVINO value, and how many values were compared; false when they are not float.
bool compare_first_outputs(const ExecutorchSide& ours, const OpenvinoSide& alone, double& relative, size_t& count) {
  const EValue& first_output = ours.method->get_output(0);
  if (!first_output.isTensor() || first_output.toTensor().scalar_type() != ScalarType::Float ||
      alone.outputs[0].get_element_type() != ov::element::f32) {
    std::fprintf(stderr, "the first output is not a float tensor; this benchmark compares float outputs\n");
    return false;
  }
  const auto& ours_output = first_output.toTensor();
  const float* expected = alone.outputs[0].data<const float>();
  count = std::min(static_cast<size_t>(ours_output.numel()), alone.outputs[0].get_size());
  double largest = 0, difference = 0;
  for (size_t k = 0; k < count; ++k) {
    largest = std::max(largest, std::fabs(static_cast<double>(expected[k])));
    difference =
        std::max(difference, std::fabs(static_cast<double>(ours_output.const_data_ptr<float>()[k]) - expected[k]));
  }
  relative = largest > 0 ? difference / largest : difference;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: %s program.pte [--method NAME] [--precision f32|bf16|f16] [--rounds N] [--round-ms MS]\n"
                 "       %s program.pte --method NAME --steps N [--start S] [--precision P] [--rounds N]\n",
                 argv[0], argv[0]);
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
  StepInputs step;
  try {
    if (!open_program(args, ours)) {
      std::fprintf(stderr, "loading %s failed\n", args.program.c_str());
      return 2;
    }
    if (args.steps > 0 && !find_step_inputs(*ours.program->method_meta(args.method.c_str()), step)) return 2;
    if (!load_openvino(args, file, *ours.program, step, alone) || !load_method(args, step, ours)) {
      std::fprintf(stderr, "loading %s failed (ExecuTorch's log above says why)\n", args.program.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "OpenVINO failed: %s\n", e.what());
    return 2;
  }
  const Engine ours_engine{[&] { return ours.method->execute() == Error::Ok; },
                           [&](int64_t position) { return ours.set_step(step, position); }};
  const Engine alone_engine{[&] {
                              alone.request.infer();
                              return true;
                            },
                            [&](int64_t position) {
                              alone.set_step(position);
                              return true;
                            }};

  Series ours_series, alone_series, warm_up;
  if (args.steps > 0 && !(run_round(ours_engine, args, warm_up) && run_round(alone_engine, args, warm_up))) {
    std::fprintf(stderr, "a call failed in the warm-up sequence\n");
    return 2;
  }
  for (int round = 0; round < args.rounds; ++round) {
    const bool ours_first = round % 2 == 0;
    const bool ok = ours_first
                        ? run_round(ours_engine, args, ours_series) && run_round(alone_engine, args, alone_series)
                        : run_round(alone_engine, args, alone_series) && run_round(ours_engine, args, ours_series);
    if (!ok) {
      std::fprintf(stderr, "a call failed in round %d\n", round);
      return 2;
    }
  }

  // Both engines computed from the same inputs (and sequence): their first outputs must agree.
  double max_rel_diff = 0;
  size_t compared = 0;
  if (!compare_first_outputs(ours, alone, max_rel_diff, compared)) return 2;
  std::printf(
      "{\"program\": \"%s\", \"method\": \"%s\", \"precision\": \"%s\", \"rounds\": %d, \"round_ms\": %.0f, "
      "\"steps\": %d, \"start\": %d,\n"
      " \"ours\": {\"median_us\": %.3f, \"calls\": %zu, \"round_medians_us\": %s},\n"
      " \"openvino\": {\"median_us\": %.3f, \"calls\": %zu, \"round_medians_us\": %s},\n"
      " \"outputs_compared\": %zu, \"max_rel_diff\": %.3g}\n",
      args.program.c_str(), args.method.c_str(), args.precision.c_str(), args.rounds, args.round_ms, args.steps,
      args.start, median(ours_series.all_us), ours_series.all_us.size(),
      json_list(ours_series.round_medians_us).c_str(), median(alone_series.all_us), alone_series.all_us.size(),
      json_list(alone_series.round_medians_us).c_str(), compared, max_rel_diff);
  return 0;
}
