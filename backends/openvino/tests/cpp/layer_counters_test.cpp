/*
 * OpenVINO's performance counters are on only for a method loaded with an event
 * tracer: the delegate's init, given a blob, compiles each of its models (the
 * general one, and the model of one token when the program asks for it) with
 * ov::enable_profiling when the init context has a tracer, and without it when it
 * has none. Read from the compiled models' own property.
 *
 *   etov_layer_counters_test blob.bin [--one-token]
 *
 * blob.bin is a delegate's processed bytes (tests/runtime/test_profiling.py writes it);
 * --one-token loads it with the compile spec one_token_model=1 and expects two
 * compiled models. Exits 0 when every check passes; otherwise prints each failed
 * check and exits 1 (2 on usage or I/O).
 */
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/platform/runtime.h>

#include <executorch_openvino/backend.h>

#include "layer_events.h"
#include "options.h"

namespace {

using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::EventTracer;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::MemoryAllocator;

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

/// Loads `blob` through the backend's init with `tracer` (or none) in the init
/// context; the counters of each compiled model, or an empty list when init failed.
std::vector<bool> counters_after_init(BackendInterface& backend, const std::vector<char>& blob, bool one_token,
                                      EventTracer* tracer) {
  static char one[] = "1";
  CompileSpec spec{executorch_openvino::kOneTokenModelKey, {one, 1}};
  const executorch::runtime::ArrayRef<CompileSpec> specs(&spec, one_token ? 1 : 0);
  std::vector<uint8_t> arena(1024);
  MemoryAllocator allocator(static_cast<uint32_t>(arena.size()), arena.data());
  BackendInitContext context(&allocator, tracer);
  FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto handle = backend.init(context, &processed, specs);
  if (!handle.ok()) {
    std::fprintf(stderr, "init failed: 0x%x\n", static_cast<unsigned>(handle.error()));
    return {};
  }
  std::vector<bool> counters = executorch_openvino::layer_counters_of(*handle);
  backend.destroy(*handle);
  return counters;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (argc == 3 && std::strcmp(argv[2], "--one-token") != 0) || argc > 3) {
    std::fprintf(stderr, "usage: %s blob.bin [--one-token]\n", argv[0]);
    return 2;
  }
  const bool one_token = argc == 3;
  std::ifstream file(argv[1], std::ios::binary);
  const std::vector<char> blob((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (blob.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  executorch::runtime::runtime_init();
  BackendInterface* backend = executorch::runtime::get_backend_class(executorch_openvino::kBackendId);
  if (backend == nullptr) {
    std::fprintf(stderr, "the OpenVINO delegate is not registered\n");
    return 2;
  }
  const size_t models = one_token ? 2 : 1;

  const std::vector<bool> untraced = counters_after_init(*backend, blob, one_token, nullptr);
  EXPECT(untraced.size() == models, "loaded without a tracer: %zu compiled models, expected %zu", untraced.size(),
         models);
  for (size_t i = 0; i < untraced.size(); ++i) {
    EXPECT(!untraced[i], "loaded without a tracer, compiled model %zu counts its layers' times", i);
  }

  executorch::etdump::ETDumpGen tracer;
  const std::vector<bool> traced = counters_after_init(*backend, blob, one_token, &tracer);
  EXPECT(traced.size() == models, "loaded with a tracer: %zu compiled models, expected %zu", traced.size(), models);
  for (size_t i = 0; i < traced.size(); ++i) {
    EXPECT(traced[i], "loaded with a tracer, compiled model %zu does not count its layers' times", i);
  }

  if (failures == 0) {
    std::printf("all checks passed\n");
  }
  return failures == 0 ? 0 : 1;
}
