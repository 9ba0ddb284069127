/*
 * executorch-openvino-run: loads a .pte program, fills its inputs, runs it and
 * reports what a developer checks first: output shapes and values, per-call
 * latency, and which delegates the method uses.
 *
 *   executorch-openvino-run model.pte [--input file.npy ...] [--method NAME]
 *       [--inference-precision f32|f16|bf16] [--cache-dir DIR] [--give-back-memory]
 *       [--iterations N] [--save-outputs DIR] [--etdump FILE]
 *
 * Inputs come from the .npy files in order (one per tensor input, same dtype and
 * rank; a dynamic dimension may take any size up to its bound), or, without
 * --input, are filled with seeded uniform values in [-1, 1) for floating-point
 * inputs and zeros for integer and bool inputs (valid token ids and positions).
 * The ops a program leaves outside the delegate run on ExecuTorch's optimized CPU
 * kernels, which the runner links.
 *
 * With --etdump, the method is loaded with ExecuTorch's ETDumpGen as its event
 * tracer, and after the calls the ETDump is written to FILE: each call's operators
 * and delegate calls, and one event per OpenVINO layer (docs/profiling.md), for
 * executorch.devtools.Inspector. The latency printed then includes the tracing.
 *
 * Exit status: 0 success; 1 usage or I/O; 2 Program::load failed; 3 load_method
 * failed; 4 an input was refused; 5 execute failed.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/runtime/backend/backend_options_map.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <executorch_openvino/backend.h>

#include "method_memory.h"
#include "npy_file.h"

namespace {

using executorch::aten::ScalarType;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::TensorInfo;
using executorch::runtime::etensor::TensorImpl;
using executorch_openvino::runner::NpyArray;

constexpr int kUsage = 1, kProgramLoad = 2, kMethodLoad = 3, kInput = 4, kExecute = 5;
constexpr size_t kValuesShown = 8;
// Each call's latency is kept until the report: a bound keeps a mistyped count from
// growing that without end.
constexpr long kMostIterations = 100000000;

struct Options {
  std::string program;
  std::string method = "forward";
  std::vector<std::string> inputs;
  std::string precision;
  std::string cache_dir;
  std::string save_outputs;
  std::string etdump;
  bool give_back_memory = false;
  bool help = false;
  long iterations = 10;
};

const char* kUsageText =
    "usage: executorch-openvino-run model.pte [--input file.npy ...] [--method NAME]\n"
    "           [--inference-precision f32|f16|bf16] [--cache-dir DIR] [--give-back-memory]\n"
    "           [--iterations N] [--save-outputs DIR] [--etdump FILE]\n";

int usage(const std::string& problem) {
  std::fprintf(stderr, "%s\n%s", problem.c_str(), kUsageText);
  return kUsage;
}

/// Parses argv into `options`; an empty string when it worked, else what was wrong.
std::string parse(int argc, char** argv, Options& options) {
  const std::pair<const char*, std::string*> texts[] = {{"--method", &options.method},
                                                        {"--inference-precision", &options.precision},
                                                        {"--cache-dir", &options.cache_dir},
                                                        {"--save-outputs", &options.save_outputs},
                                                        {"--etdump", &options.etdump}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!options.program.empty()) return "one program only; also got " + arg;
      options.program = arg;
      continue;
    }
    if (arg == "--give-back-memory") {  // a switch: takes no value
      options.give_back_memory = true;
      continue;
    }
    if (arg == "--help") {
      options.help = true;
      return "";
    }
    const auto text = std::find_if(std::begin(texts), std::end(texts), [&](const auto& t) { return arg == t.first; });
    if (text == std::end(texts) && arg != "--input" && arg != "--iterations") return "unknown option " + arg;
    if (i + 1 >= argc) return arg + " needs a value";
    const char* value = argv[++i];
    if (text != std::end(texts)) {
      if (*value == '\0' && (arg == "--etdump" || arg == "--save-outputs")) return arg + " needs a path, not ''";
      *text->second = value;
    } else if (arg == "--input") {
      options.inputs.push_back(value);
    } else {
      char* end = nullptr;
      errno = 0;
      options.iterations = std::strtol(value, &end, 10);
      if (*end != '\0' || errno == ERANGE || options.iterations < 1 || options.iterations > kMostIterations) {
        return std::string("--iterations ") + value + " is not a count from 1 to " + std::to_string(kMostIterations);
      }
    }
  }
  // They become ExecuTorch load options, whose values hold fewer bytes (a longer one was cut).
  for (const auto& [flag, text] :
       {std::pair{"--cache-dir", &options.cache_dir}, {"--inference-precision", &options.precision}}) {
    if (text->size() >= executorch::runtime::kMaxOptionValueLength) {
      return std::string(flag) + " is " + std::to_string(text->size()) +
             " bytes long; ExecuTorch's load options take " +
             std::to_string(executorch::runtime::kMaxOptionValueLength - 1) + " at most";
    }
  }
  return options.program.empty() ? "no program given" : "";
}

/// Prints the delegates the method calls, as "<backend id> x<count>" per backend.
void print_delegates(const MethodMeta& meta) {
  std::vector<std::pair<std::string, int>> counts;
  for (size_t i = 0; i < meta.num_backends(); ++i) {
    Result<const char*> name = meta.get_backend_name(i);
    const std::string id = name.ok() ? *name : "?";
    auto found = std::find_if(counts.begin(), counts.end(), [&](const auto& count) { return count.first == id; });
    if (found == counts.end()) {
      counts.emplace_back(id, 1);
    } else {
      ++found->second;
    }
  }
  std::printf("delegates:");
  for (const auto& [id, count] : counts) {
    std::printf(" %s x%d", id.c_str(), count);
    if (id == "OpenvinoBackend") {
      std::printf(
          " (ExecuTorch's older OpenVINO backend, not this one: export again with executorch_openvino's "
          "OpenvinoPartitioner)");
    } else if (executorch::runtime::get_backend_class(id.c_str()) == nullptr) {
      std::printf(" (not registered in this runner: the method cannot load)");
    }
  }
  if (counts.empty()) {
    std::printf(" none (every op runs on ExecuTorch's CPU kernels)");
  }
  std::printf("\n");
}

/// One input tensor with its own memory; set_input copies it into the method's.
struct InputTensor {
  NpyArray array;
  std::vector<TensorImpl::SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<TensorImpl::StridesType> strides;
  std::unique_ptr<TensorImpl> impl;
};

void fill_random(NpyArray& array, std::mt19937& generator) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t n = array.bytes.size() / executorch::runtime::elementSize(array.dtype);
  if (array.dtype == ScalarType::Float) {
    auto* values = reinterpret_cast<float*>(array.bytes.data());
    for (size_t k = 0; k < n; ++k) values[k] = uniform(generator);
  } else if (array.dtype == ScalarType::Double) {
    auto* values = reinterpret_cast<double*>(array.bytes.data());
    for (size_t k = 0; k < n; ++k) values[k] = uniform(generator);
  }  // integer, bool and half inputs stay zero
}

/// Builds input `j` from its .npy file or from random values; 0, or an exit status
/// after a message on stderr.
int make_input(const TensorInfo& info, size_t j, const std::string* npy_path, std::mt19937& generator,
               InputTensor& input) {
  const auto planned = info.sizes();
  const auto dim_order = info.dim_order();
  for (size_t d = 0; d < dim_order.size(); ++d) {
    if (dim_order[d] != d) {
      std::fprintf(stderr,
                   "input %zu is planned in a dim order other than the default (channels last?); this "
                   "runner feeds contiguous inputs only\n",
                   j);
      return kInput;
    }
  }
  if (npy_path != nullptr) {
    std::string error;
    if (!executorch_openvino::runner::read_npy(*npy_path, input.array, error)) {
      std::fprintf(stderr, "input %zu: %s\n", j, error.c_str());
      return kUsage;
    }
    if (input.array.dtype != info.scalar_type() || input.array.shape.size() != planned.size()) {
      std::fprintf(stderr, "input %zu: %s holds %s with %zu dimensions; the method takes %s with %zu\n", j,
                   npy_path->c_str(), executorch::runtime::toString(input.array.dtype), input.array.shape.size(),
                   executorch::runtime::toString(info.scalar_type()), planned.size());
      return kInput;
    }
  } else {
    input.array.dtype = info.scalar_type();
    input.array.shape.assign(planned.begin(), planned.end());
    size_t numel = 1;
    for (auto size : planned) numel *= static_cast<size_t>(size);
    input.array.bytes.assign(numel * executorch::runtime::elementSize(info.scalar_type()), 0);
    fill_random(input.array, generator);
  }
  input.sizes.assign(input.array.shape.begin(), input.array.shape.end());
  input.dim_order.resize(input.sizes.size());
  input.strides.assign(input.sizes.size(), 1);
  for (size_t d = input.sizes.size(); d-- > 0;) {  // contiguous, C order
    input.dim_order[d] = static_cast<TensorImpl::DimOrderType>(d);
    if (d + 1 < input.sizes.size()) input.strides[d] = input.strides[d + 1] * input.sizes[d + 1];
  }
  input.impl = std::make_unique<TensorImpl>(info.scalar_type(), static_cast<TensorImpl::SizesType>(input.sizes.size()),
                                            input.sizes.data(), input.array.bytes.data(), input.dim_order.data(),
                                            input.strides.data());
  return 0;
}

/// Builds every input of the method from the options; an exit status.
int make_inputs(const MethodMeta& meta, const Options& options, std::vector<InputTensor>& inputs) {
  if (!options.inputs.empty() && options.inputs.size() != meta.num_inputs()) {
    std::fprintf(stderr, "the method takes %zu inputs; %zu --input files were given\n", meta.num_inputs(),
                 options.inputs.size());
    return kInput;
  }
  std::mt19937 generator(0);
  inputs.resize(meta.num_inputs());
  for (size_t j = 0; j < meta.num_inputs(); ++j) {
    Result<TensorInfo> info = meta.input_tensor_meta(j);
    if (!info.ok()) {
      std::fprintf(stderr, "input %zu is not a tensor; this runner feeds tensors only\n", j);
      return kInput;
    }
    const std::string* path = options.inputs.empty() ? nullptr : &options.inputs[j];
    if (const int status = make_input(*info, j, path, generator, inputs[j]); status != 0) return status;
  }
  return 0;
}

/// Gives memory to the outputs the program left unplanned (exported with
/// alloc_graph_output=False), each of its largest size; an exit status.
int give_unplanned_outputs_memory(Method& method, const MethodMeta& meta,
                                  std::vector<std::unique_ptr<uint8_t[]>>& buffers) {
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    Result<TensorInfo> info = meta.output_tensor_meta(i);
    if (!info.ok() || info->is_memory_planned() || info->nbytes() == 0) continue;
    buffers.push_back(std::make_unique<uint8_t[]>(info->nbytes()));
    const Error error = method.set_output_data_ptr(buffers.back().get(), info->nbytes(), i);
    if (error != Error::Ok) {
      std::fprintf(stderr, "output %zu: the method refused the runner's memory (%s)\n", i,
                   executorch::runtime::to_string(error));
      return kMethodLoad;
    }
  }
  return 0;
}

/// Copies the inputs into the method. Needed before every execute: memory planning
/// may reuse an input's memory for values computed after its last reader.
int set_inputs(Method& method, std::vector<InputTensor>& inputs) {
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Error error = method.set_input(EValue(executorch::aten::Tensor(inputs[j].impl.get())), j);
    if (error != Error::Ok) {
      std::fprintf(stderr,
                   "input %zu was refused by the method (%s): a static dimension differs or a dynamic one "
                   "passes its bound; see ExecuTorch's log above\n",
                   j, executorch::runtime::to_string(error));
      return kInput;
    }
  }
  return 0;
}

NpyArray to_array(const executorch::aten::Tensor& tensor) {
  NpyArray array;
  array.dtype = tensor.scalar_type();
  for (ssize_t d = 0; d < tensor.dim(); ++d) array.shape.push_back(tensor.size(d));
  const auto* data = static_cast<const uint8_t*>(tensor.const_data_ptr());
  array.bytes.assign(data, data + tensor.nbytes());
  return array;
}

double value_at(const NpyArray& array, size_t k) {
  const uint8_t* data = array.bytes.data();
  switch (array.dtype) {
    case ScalarType::Float:
      return reinterpret_cast<const float*>(data)[k];
    case ScalarType::Double:
      return reinterpret_cast<const double*>(data)[k];
    case ScalarType::Long:
      return static_cast<double>(reinterpret_cast<const int64_t*>(data)[k]);
    case ScalarType::Int:
      return reinterpret_cast<const int32_t*>(data)[k];
    case ScalarType::Short:
      return reinterpret_cast<const int16_t*>(data)[k];
    case ScalarType::UInt64:
      return static_cast<double>(reinterpret_cast<const uint64_t*>(data)[k]);
    case ScalarType::UInt32:
      return reinterpret_cast<const uint32_t*>(data)[k];
    case ScalarType::UInt16:
      return reinterpret_cast<const uint16_t*>(data)[k];
    case ScalarType::Char:
      return reinterpret_cast<const int8_t*>(data)[k];
    case ScalarType::Byte:
      return data[k];
    case ScalarType::Bool:
      return data[k] != 0;
    default:
      return 0.0;
  }
}

/// Prints each output's dtype, shape and first values, and saves it when asked; an exit status.
int report_outputs(const Method& method, const Options& options) {
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const EValue& value = method.get_output(i);
    if (!value.isTensor()) {
      std::printf("output %zu: not a tensor (tag %d)\n", i, static_cast<int>(value.tag));
      continue;
    }
    const NpyArray array = to_array(value.toTensor());
    std::printf("output %zu: %s [", i, executorch::runtime::toString(array.dtype));
    for (size_t d = 0; d < array.shape.size(); ++d)
      std::printf("%s%lld", d ? ", " : "", static_cast<long long>(array.shape[d]));
    const size_t numel = array.bytes.size() / executorch::runtime::elementSize(array.dtype);
    const bool printable = array.dtype != ScalarType::Half && array.dtype != ScalarType::BFloat16;
    std::printf("]%s", printable ? " =" : "");
    for (size_t k = 0; printable && k < std::min(numel, kValuesShown); ++k) std::printf(" %.6g", value_at(array, k));
    std::printf("%s\n", printable && numel > kValuesShown ? " ..." : "");
    if (!options.save_outputs.empty()) {
      std::string error;
      const std::string path = options.save_outputs + "/output_" + std::to_string(i) + ".npy";
      if (!executorch_openvino::runner::write_npy(path, array, error)) {
        std::fprintf(stderr, "output %zu: %s\n", i, error.c_str());
        return kUsage;
      }
    }
  }
  return 0;
}

/// Sets the inputs and runs the method `iterations` times; per-call milliseconds
/// of execute() alone, or an exit status after a failure.
int time_calls(Method& method, std::vector<InputTensor>& inputs, long iterations, std::vector<double>& milliseconds) {
  for (long t = 0; t < iterations; ++t) {
    if (const int status = set_inputs(method, inputs); status != 0) return status;
    const auto start = std::chrono::steady_clock::now();
    const Error error = method.execute();
    const auto stop = std::chrono::steady_clock::now();
    if (error != Error::Ok) {
      std::fprintf(stderr, "execute (call %ld) failed: %s (0x%x); see ExecuTorch's log above\n", t + 1,
                   executorch::runtime::to_string(error), static_cast<unsigned>(error));
      return kExecute;
    }
    milliseconds.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return 0;
}

/// The first call includes one-time work (OpenVINO's first inference), so the
/// median and p90 are taken over the calls after it when there are any.
void print_latency(std::vector<double> milliseconds) {
  const double first = milliseconds.front();
  if (milliseconds.size() > 1) milliseconds.erase(milliseconds.begin());
  std::sort(milliseconds.begin(), milliseconds.end());
  const auto at = [&](double q) { return milliseconds[static_cast<size_t>(q * (milliseconds.size() - 1) + 0.5)]; };
  std::printf("latency: first call %.3f ms; median %.3f ms, p90 %.3f ms over %zu calls\n", first, at(0.5), at(0.9),
              milliseconds.size());
}

/// Why a file cannot be written at `path`, found before the calls; empty when none is.
std::string unwritable(const std::string& path) {
  std::error_code error;
  const std::filesystem::path file(path);
  if (std::filesystem::is_directory(file, error)) return "it is a folder";
  const std::filesystem::path folder = file.parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, error)) return "its folder does not exist";
  return "";
}

/// Writes what `etdump` recorded to `path`; an exit status.
int write_etdump(executorch::etdump::ETDumpGen& etdump, const std::string& path) {
  // Without a buffer of the caller's, ETDumpGen allocates the result, which the caller frees.
  const executorch::etdump::ETDumpResult result = etdump.get_etdump_data();
  const std::unique_ptr<void, decltype(&std::free)> owned(result.buf, &std::free);
  if (result.buf == nullptr || result.size == 0) {
    std::fprintf(stderr, "the ETDump is empty: nothing was recorded\n");
    return kUsage;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(static_cast<const char*>(result.buf), static_cast<std::streamsize>(result.size));
  file.close();
  if (!file) {
    std::fprintf(stderr, "cannot write the ETDump to %s\n", path.c_str());
    return kUsage;
  }
  std::printf("etdump: %s (%zu bytes)\n", path.c_str(), result.size);
  return 0;
}

/// Per-load options for our delegate; they win over the program's compile specs.
executorch::runtime::BackendOptions<3> load_options(const Options& options) {
  executorch::runtime::BackendOptions<3> values;
  if (!options.precision.empty()) values.set_option(executorch_openvino::kPrecisionKey, options.precision.c_str());
  if (!options.cache_dir.empty()) values.set_option(executorch_openvino::kCacheDirKey, options.cache_dir.c_str());
  if (options.give_back_memory) values.set_option(executorch_openvino::kGiveBackMemoryKey, "1");
  return values;
}

int run(const Options& options) {
  // Mapped, as the Python runtime loads a path: with --give-back-memory the delegate
  // then gives back the pages of weights that OpenVINO has repacked
  // (runtime/resident_pages.h).
  Result<executorch::extension::MmapDataLoader> loader =
      executorch::extension::MmapDataLoader::from(options.program.c_str());
  if (!loader.ok()) {
    std::fprintf(stderr, "cannot read %s\n", options.program.c_str());
    return kUsage;
  }
  Result<Program> program = Program::load(&loader.get());
  if (!program.ok()) {
    std::fprintf(stderr, "%s is not a program ExecuTorch can load: %s\n", options.program.c_str(),
                 executorch::runtime::to_string(program.error()));
    return kProgramLoad;
  }
  Result<MethodMeta> meta = program->method_meta(options.method.c_str());
  if (!meta.ok()) {
    std::fprintf(stderr, "the program has no method '%s'\n", options.method.c_str());
    return kMethodLoad;
  }
  if (!options.etdump.empty()) {
    if (const std::string why = unwritable(options.etdump); !why.empty()) {
      std::fprintf(stderr, "cannot write the ETDump to %s: %s\n", options.etdump.c_str(), why.c_str());
      return kUsage;
    }
  }
  std::printf("program: %s, method %s: %zu inputs, %zu outputs\n", options.program.c_str(), options.method.c_str(),
              meta->num_inputs(), meta->num_outputs());
  print_delegates(*meta);
  std::vector<InputTensor> inputs;
  if (const int status = make_inputs(*meta, options, inputs); status != 0) return status;

  executorch_openvino::MethodMemory memory(*meta);
  auto openvino_options = load_options(options);
  executorch::runtime::LoadBackendOptionsMap backend_options;
  backend_options.set_options(executorch_openvino::kBackendId, openvino_options.view());
  std::optional<executorch::etdump::ETDumpGen> etdump;
  if (!options.etdump.empty()) etdump.emplace();
  Result<Method> method = program->load_method(options.method.c_str(), memory.manager(), etdump ? &*etdump : nullptr,
                                               nullptr, &backend_options);
  if (!method.ok()) {
    std::fprintf(stderr, "loading method '%s' failed: %s; see ExecuTorch's log above\n", options.method.c_str(),
                 executorch::runtime::to_string(method.error()));
    return kMethodLoad;
  }
  std::vector<std::unique_ptr<uint8_t[]>> output_buffers;
  if (const int status = give_unplanned_outputs_memory(*method, *meta, output_buffers); status != 0) return status;
  std::vector<double> milliseconds;
  if (const int status = time_calls(*method, inputs, options.iterations, milliseconds); status != 0) return status;
  if (const int status = report_outputs(*method, options); status != 0) return status;
  print_latency(milliseconds);
  return etdump ? write_etdump(*etdump, options.etdump) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::string problem = parse(argc, argv, options); !problem.empty()) return usage(problem);
  if (options.help) {
    std::printf("%s", kUsageText);
    return 0;
  }
  executorch::runtime::runtime_init();
  if (const int status = etov_registration_status(); status != 0) {
    std::fprintf(stderr, "the OpenVINO delegate did not register (error %d)\n", status);
    return kUsage;
  }
  const int status = run(options);
  std::fflush(stdout);
  return status;
}
