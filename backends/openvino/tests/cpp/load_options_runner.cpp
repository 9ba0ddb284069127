/*
 * A minimal C++ application that runs .pte programs through our delegate the way
 * an embedding application would: Program::load over a FileDataLoader, then
 * Program::load_method with a LoadBackendOptionsMap carrying per-load options for
 * "ExecutorchOpenvinoBackend", execute, print the outputs, destroy. It links
 * libexecutorch_openvino_runtime.so (whose loading registers the delegate) and
 * libexecutorch.so, and no kernel library: give it fully delegated programs.
 *
 *   etov_load_runner [options] program.pte [program.pte ...]
 *     --precision VALUE  per-load inference_precision (f32, f16, bf16; anything is passed on)
 *     --cache-dir DIR    per-load cache_dir
 *     --iterations N     executes per loaded method (default 1)
 *     --loads N          load, execute N times, destroy: this many cycles per program (default 1)
 *     --vary-dim0        execute t gives every input of dynamic shape dim 0 = 1 + t % (its
 *                        planned bound); static inputs keep their shape
 *     --print-all        print the outputs of every execute, not only the last
 *     --method NAME      the method to run (default forward)
 *
 * Inputs are deterministic so that a caller can compute the expected result:
 * element k of input j at execute t is
 *     floating point: ((7k + 5j + 3t) mod 17 - 8) / 4
 *     integers:        (7k + 5j + 3t) mod 17 - 8
 *     bool:            (k + j + t) mod 2 == 0
 * Each printed output is one line:
 *     output <i> execute <t>: <dtype> [<sizes>] = v0 v1 ...
 *
 * Exit status: 0 success; 1 usage or I/O; 2 Program::load failed; 3 load_method
 * failed; 4 set_input failed; 5 execute failed. ExecuTorch's log (our delegate's
 * "OpenVINO delegate loaded on CPU at inference precision ..." line among it)
 * goes to stderr.
 */
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/backend/backend_options_map.h>
#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <executorch_openvino/backend.h>

#include "method_memory.h"

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
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;
using executorch::runtime::etensor::TensorImpl;

struct Options {
  std::string precision;
  bool has_precision = false;
  std::string cache_dir;
  bool has_cache_dir = false;
  long iterations = 1;
  long loads = 1;
  bool vary_dim0 = false;
  bool print_all = false;
  std::string method = "forward";
  std::vector<std::string> programs;
};

const char* error_name(Error error) {
  return executorch::runtime::to_string(error);
}

/// One input tensor with its own memory, filled with the documented values.
struct InputTensor {
  std::vector<uint8_t> data;
  std::vector<TensorImpl::SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<TensorImpl::StridesType> strides;
  std::unique_ptr<TensorImpl> impl;
};

template <typename T>
void fill_values(T* out, size_t n, size_t j, long t, bool floating) {
  for (size_t k = 0; k < n; ++k) {
    const long v = static_cast<long>((7 * k + 5 * j + 3 * static_cast<size_t>(t)) % 17) - 8;
    out[k] = floating ? static_cast<T>(static_cast<double>(v) / 4.0) : static_cast<T>(v);
  }
}

bool fill(ScalarType type, void* data, size_t n, size_t j, long t) {
  switch (type) {
    case ScalarType::Float:
      fill_values(static_cast<float*>(data), n, j, t, true);
      return true;
    case ScalarType::Double:
      fill_values(static_cast<double*>(data), n, j, t, true);
      return true;
    case ScalarType::Int:
      fill_values(static_cast<int32_t*>(data), n, j, t, false);
      return true;
    case ScalarType::Long:
      fill_values(static_cast<int64_t*>(data), n, j, t, false);
      return true;
    case ScalarType::Short:
      fill_values(static_cast<int16_t*>(data), n, j, t, false);
      return true;
    case ScalarType::Char:
      fill_values(static_cast<int8_t*>(data), n, j, t, false);
      return true;
    case ScalarType::Bool: {
      auto* out = static_cast<bool*>(data);
      for (size_t k = 0; k < n; ++k) out[k] = (k + j + static_cast<size_t>(t)) % 2 == 0;
      return true;
    }
    default:
      return false;
  }
}

bool make_input(const TensorInfo& info, size_t j, long t, bool vary_dim0, InputTensor& input) {
  const auto sizes = info.sizes();
  const auto dim_order = info.dim_order();
  input.sizes.assign(sizes.begin(), sizes.end());
  input.dim_order.assign(dim_order.begin(), dim_order.end());
  if (vary_dim0 && !input.sizes.empty() && input.sizes[0] > 0) {
    input.sizes[0] = 1 + static_cast<TensorImpl::SizesType>(t % input.sizes[0]);
  }
  // Contiguous strides in the tensor's dim order.
  input.strides.assign(input.sizes.size(), 1);
  TensorImpl::StridesType stride = 1;
  for (size_t i = input.dim_order.size(); i-- > 0;) {
    const size_t d = input.dim_order[i];
    input.strides[d] = stride;
    stride *= input.sizes[d];
  }
  size_t n = 1;
  for (auto s : input.sizes) n *= static_cast<size_t>(s);
  input.data.assign(n * executorch::runtime::elementSize(info.scalar_type()) + 1, 0);
  if (!fill(info.scalar_type(), input.data.data(), n, j, t)) {
    std::fprintf(stderr, "input %zu: dtype %s is not supported by this runner\n", j,
                 executorch::runtime::toString(info.scalar_type()));
    return false;
  }
  input.impl =
      std::make_unique<TensorImpl>(info.scalar_type(), static_cast<ssize_t>(input.sizes.size()), input.sizes.data(),
                                   input.data.data(), input.dim_order.data(), input.strides.data());
  return true;
}

template <typename T>
void print_values(std::string& line, const void* data, size_t n) {
  const T* values = static_cast<const T*>(data);
  char text[64];
  for (size_t k = 0; k < n; ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      std::snprintf(text, sizeof(text), " %.9g", static_cast<double>(values[k]));
    } else {
      std::snprintf(text, sizeof(text), " %lld", static_cast<long long>(values[k]));
    }
    line += text;
  }
}

void print_output(size_t i, long t, const EValue& value) {
  std::string line = "output " + std::to_string(i) + " execute " + std::to_string(t) + ": ";
  if (!value.isTensor()) {
    line += "tag " + std::to_string(static_cast<int>(value.tag));
    std::printf("%s\n", line.c_str());
    return;
  }
  const auto& tensor = value.toTensor();
  line += executorch::runtime::toString(tensor.scalar_type());
  line += " [";
  for (ssize_t d = 0; d < tensor.dim(); ++d) line += (d ? ", " : "") + std::to_string(tensor.size(d));
  line += "] =";
  const size_t n = static_cast<size_t>(tensor.numel());
  switch (tensor.scalar_type()) {
    case ScalarType::Float:
      print_values<float>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Double:
      print_values<double>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Int:
      print_values<int32_t>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Long:
      print_values<int64_t>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Short:
      print_values<int16_t>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Char:
      print_values<int8_t>(line, tensor.const_data_ptr(), n);
      break;
    case ScalarType::Bool:
      print_values<bool>(line, tensor.const_data_ptr(), n);
      break;
    default:
      line += " (values not printed)";
      break;
  }
  std::printf("%s\n", line.c_str());
}

/// Loads the method once, executes it, destroys it. Returns an exit status.
int run_once(const Program& program, const Options& options, const LoadBackendOptionsMap* backend_options) {
  Result<MethodMeta> meta = program.method_meta(options.method.c_str());
  if (!meta.ok()) {
    std::fprintf(stderr, "method_meta(%s) failed: %s\n", options.method.c_str(), error_name(meta.error()));
    return 3;
  }
  executorch_openvino::MethodMemory memory(*meta);

  Result<Method> method =
      program.load_method(options.method.c_str(), memory.manager(), nullptr, nullptr, backend_options);
  if (!method.ok()) {
    std::fprintf(stderr, "load_method(%s) failed: %s (0x%x)\n", options.method.c_str(), error_name(method.error()),
                 static_cast<unsigned>(method.error()));
    return 3;
  }
  std::printf("method %s loaded (%zu inputs, %zu outputs)\n", options.method.c_str(), method->inputs_size(),
              method->outputs_size());
  // Which inputs may change shape. MethodMeta does not say; the loaded input does.
  std::vector<bool> dynamic(method->inputs_size(), false);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  for (size_t j = 0; j < method->inputs_size(); ++j) {
    const EValue& input = method->get_input(j);
    dynamic[j] =
        input.isTensor() && input.toTensor().shape_dynamism() != executorch::runtime::TensorShapeDynamism::STATIC;
  }
#pragma GCC diagnostic pop

  for (long t = 0; t < options.iterations; ++t) {
    std::vector<InputTensor> inputs(method->inputs_size());
    for (size_t j = 0; j < method->inputs_size(); ++j) {
      Result<Tag> tag = meta->input_tag(j);
      if (!tag.ok() || *tag != Tag::Tensor) {
        std::fprintf(stderr, "input %zu is not a tensor; this runner feeds tensors only\n", j);
        return 4;
      }
      Result<TensorInfo> info = meta->input_tensor_meta(j);
      if (!info.ok() || !make_input(*info, j, t, options.vary_dim0 && dynamic[j], inputs[j])) {
        return 4;
      }
      executorch::aten::Tensor tensor(inputs[j].impl.get());
      const Error error = method->set_input(EValue(tensor), j);
      if (error != Error::Ok) {
        std::fprintf(stderr, "set_input(%zu) failed: %s\n", j, error_name(error));
        return 4;
      }
    }
    const Error error = method->execute();
    if (error != Error::Ok) {
      std::fprintf(stderr, "execute %ld failed: %s (0x%x)\n", t, error_name(error), static_cast<unsigned>(error));
      return 5;
    }
    if (options.print_all || t == options.iterations - 1) {
      for (size_t i = 0; i < method->outputs_size(); ++i) {
        print_output(i, t, method->get_output(i));
      }
    }
  }
  return 0;  // the Method, and with it our delegates, is destroyed here
}

int run_program(const std::string& path, const Options& options, const LoadBackendOptionsMap* backend_options) {
  Result<FileDataLoader> loader = FileDataLoader::from(path.c_str());
  if (!loader.ok()) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), error_name(loader.error()));
    return 1;
  }
  Result<Program> program = Program::load(&loader.get());
  if (!program.ok()) {
    std::fprintf(stderr, "Program::load(%s) failed: %s\n", path.c_str(), error_name(program.error()));
    return 2;
  }
  std::printf("program %s\n", path.c_str());
  for (long cycle = 0; cycle < options.loads; ++cycle) {
    const int status = run_once(*program, options, backend_options);
    if (status != 0) return status;
  }
  return 0;
}

bool parse_long(const char* text, long* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1) return false;
  *out = value;
  return true;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--precision V] [--cache-dir D] [--iterations N] [--loads N] "
               "[--vary-dim0] [--print-all] [--method NAME] program.pte [program.pte ...]\n",
               argv0);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--precision" && has_value) {
      options.precision = argv[++i];
      options.has_precision = true;
    } else if (arg == "--cache-dir" && has_value) {
      options.cache_dir = argv[++i];
      options.has_cache_dir = true;
    } else if (arg == "--iterations" && has_value) {
      if (!parse_long(argv[++i], &options.iterations)) return usage(argv[0]);
    } else if (arg == "--loads" && has_value) {
      if (!parse_long(argv[++i], &options.loads)) return usage(argv[0]);
    } else if (arg == "--method" && has_value) {
      options.method = argv[++i];
    } else if (arg == "--vary-dim0") {
      options.vary_dim0 = true;
    } else if (arg == "--print-all") {
      options.print_all = true;
    } else if (arg.rfind("--", 0) == 0) {
      return usage(argv[0]);
    } else {
      options.programs.push_back(arg);
    }
  }
  if (options.programs.empty()) return usage(argv[0]);

  executorch::runtime::runtime_init();
  if (etov_registration_status() != 0) {
    std::fprintf(stderr, "the OpenVINO delegate did not register (error %d)\n", etov_registration_status());
    return 1;
  }

  // Per-load options for our delegate. The option values are copied into the
  // BackendOptions; it must outlive every method loaded with the map.
  BackendOptions<2> openvino_options;
  if (options.has_precision &&
      openvino_options.set_option("inference_precision", options.precision.c_str()) != Error::Ok) {
    return usage(argv[0]);
  }
  if (options.has_cache_dir && openvino_options.set_option("cache_dir", options.cache_dir.c_str()) != Error::Ok) {
    return usage(argv[0]);
  }
  LoadBackendOptionsMap backend_options;
  const bool any_option = options.has_precision || options.has_cache_dir;
  if (any_option && backend_options.set_options(etov_backend_id(), openvino_options.view()) != Error::Ok) {
    std::fprintf(stderr, "LoadBackendOptionsMap refused the options\n");
    return 1;
  }

  for (const std::string& path : options.programs) {
    const int status = run_program(path, options, any_option ? &backend_options : nullptr);
    if (status != 0) return status;
  }
  std::fflush(stdout);
  return 0;
}
