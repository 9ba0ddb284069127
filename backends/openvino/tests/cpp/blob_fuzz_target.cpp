/*
 * Fuzz target for blob loading. One input is one processed blob, as
 * preprocess (serialization/blob.py) writes it and ExecuTorch hands it to our BackendInterface.
 *
 * For every input:
 *   1. parse_blob() must either accept it or refuse it with InvalidArgument /
 *      DelegateInvalidCompatibility and an error log line.
 *   2. The full init path then runs for every input (whether it parsed or not):
 *      the backend registered under "ExecutorchOpenvinoBackend" is fetched with
 *      get_backend_class, init() gets a BackendInitContext over a MemoryAllocator
 *      and a FreeableBuffer holding a heap copy of the blob (freed through its
 *      free function, so a double free or a leak of the blob shows), then
 *      destroy() on success. A refusal must come with an ExecuTorch error
 *      (not Ok) and at least one error log line.
 * Anything else (an unexpected error code, a refusal without a log line, init
 * succeeding on a blob parse_blob refused) aborts, which libFuzzer reports as a
 * crash. AddressSanitizer and LeakSanitizer report memory errors and leaks.
 *
 * Under libFuzzer a custom mutator (ETOV_LIBFUZZER) helps reach OpenVINO's IR
 * reader and compiler, which are not instrumented and so give libFuzzer no
 * coverage signal: half of the mutations are plain byte-level ones on the whole
 * blob (truncation, bit flips, random headers); the other half take a blob that
 * parses apart, mutate its IR XML or its weights, and put it back together with
 * a consistent header, so the damage reaches OpenVINO instead of our size checks.
 *
 * Built two ways (CMakeLists.txt, ETOV_BUILD_TESTS):
 *   etov_blob_fuzzer  clang -fsanitize=fuzzer,address: the libFuzzer binary;
 *   etov_blob_driver  any compiler, with blob_fuzz_main.cpp: runs files through
 *                     the same function, printing one line per file.
 * ETOV_FUZZ_VERBOSE=1 prints ExecuTorch's log lines (silenced by default).
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch_openvino/backend.h>

#include "blob_format.h"
#include "blob_reader.h"
#include "crc32.h"

namespace {

using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;

size_t error_log_lines = 0;
bool verbose = false;
// How the inputs ended: refused by parse_blob, parsed but refused by init, loaded.
size_t outcome_counts[3] = {0, 0, 0};

[[maybe_unused]] void print_outcomes() {
  std::fprintf(stderr,
               "blob fuzz outcomes: %zu refused by parse_blob, %zu parsed and refused by init, "
               "%zu loaded and destroyed\n",
               outcome_counts[0], outcome_counts[1], outcome_counts[2]);
}

void capture_log(et_timestamp_t, et_pal_log_level_t level, const char* filename, const char*, size_t line,
                 const char* message, size_t length) {
  if (level == kError || level == kFatal) {
    ++error_log_lines;
  }
  if (verbose) {
    std::fprintf(stderr, "%c %s:%zu] %.*s\n", static_cast<char>(level), filename, line, static_cast<int>(length),
                 message);
  }
}

BackendInterface* backend() {
  static BackendInterface* instance = [] {
    executorch::runtime::runtime_init();
    const char* verbose_env = std::getenv("ETOV_FUZZ_VERBOSE");
    verbose = verbose_env != nullptr && verbose_env[0] != '\0' && std::strcmp(verbose_env, "0") != 0;
    executorch::runtime::register_pal(executorch::runtime::PalImpl::create(capture_log, __FILE__));
#ifdef ETOV_LIBFUZZER
    std::atexit(print_outcomes);
#endif
    if (etov_registration_status() != 0) {
      std::fprintf(stderr, "the OpenVINO delegate did not register\n");
      std::abort();
    }
    BackendInterface* found = executorch::runtime::get_backend_class("ExecutorchOpenvinoBackend");
    if (found == nullptr) {
      std::fprintf(stderr, "ExecutorchOpenvinoBackend is not registered\n");
      std::abort();
    }
    return found;
  }();
  return instance;
}

void fail(const char* what, Error error) {
  std::fprintf(stderr, "blob fuzz: %s (error %s, 0x%x)\n", what, executorch::runtime::to_string(error),
               static_cast<unsigned>(error));
  std::abort();
}

bool is_expected_refusal(Error error) {
  return error == Error::InvalidArgument || error == Error::DelegateInvalidCompatibility ||
         error == Error::NotSupported;
}

void free_blob(void* context, void* data, size_t size) {
  std::free(data);
  ++*static_cast<int*>(context);
}

}  // namespace

/// What happened to the last input, for the file driver: 0 refused by parse_blob,
/// 1 parsed but refused by init, 2 loaded (init and destroy succeeded).
extern "C" {
int etov_fuzz_last_outcome = 0;
int etov_fuzz_last_error = 0;             // the ExecuTorch Error code init returned
unsigned etov_fuzz_last_model_facts = 0;  // the model facts parse_blob read (BlobView::model_facts)
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  BackendInterface* openvino = backend();

  error_log_lines = 0;
  Result<executorch_openvino::BlobView> view = executorch_openvino::parse_blob(data, size);
  const bool parsed = view.ok();
  etov_fuzz_last_model_facts = parsed ? view->model_facts : 0;
  if (!parsed) {
    if (!is_expected_refusal(view.error())) fail("parse_blob refused with an unexpected error", view.error());
    if (error_log_lines == 0) fail("parse_blob refused without an error log line", view.error());
  }

  // A heap copy, like a program segment the delegate must keep or give back.
  void* copy = std::malloc(size == 0 ? 1 : size);
  if (size != 0) std::memcpy(copy, data, size);
  int frees = 0;
  {
    FreeableBuffer processed(copy, size, free_blob, &frees);
    executorch::extension::MallocMemoryAllocator allocator;
    BackendInitContext context(&allocator);
    error_log_lines = 0;
    Result<DelegateHandle*> handle = openvino->init(context, &processed, executorch::runtime::ArrayRef<CompileSpec>());
    etov_fuzz_last_error = static_cast<int>(handle.ok() ? Error::Ok : handle.error());
    if (handle.ok()) {
      if (!parsed) fail("init accepted a blob that parse_blob refused", Error::Ok);
      if (*handle == nullptr) fail("init returned a null handle", Error::Ok);
      openvino->destroy(*handle);
      etov_fuzz_last_outcome = 2;
    } else {
      if (!is_expected_refusal(handle.error())) fail("init refused with an unexpected error", handle.error());
      if (error_log_lines == 0) fail("init refused without an error log line", handle.error());
      etov_fuzz_last_outcome = parsed ? 1 : 0;
    }
  }
  ++outcome_counts[etov_fuzz_last_outcome];
  // Whether init kept the blob (and destroy gave it back) or not, it is freed once.
  if (frees != 1) {
    std::fprintf(stderr, "blob fuzz: the blob was freed %d times\n", frees);
    std::abort();
  }
  return 0;
}

#ifdef ETOV_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

void put_le64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Mutates `part` in place with libFuzzer's own mutations, allowing it to grow.
void mutate_part(std::vector<uint8_t>& part, size_t max_size) {
  const size_t size = part.size();
  part.resize(std::max<size_t>(1, std::min(max_size, size + size / 4 + 64)));
  part.resize(LLVMFuzzerMutate(part.data(), size, part.size()));
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  backend();  // installs the quiet log before parse_blob logs anything
  std::minstd_rand random(seed);
  if (random() % 2 == 0 || size < executorch_openvino::kBlobHeaderSizeV2) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  Result<executorch_openvino::BlobView> view = executorch_openvino::parse_blob(data, size);
  if (!view.ok()) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  // The header of the blob's own format version: the XML starts right after it.
  const auto header_size = static_cast<size_t>(reinterpret_cast<const uint8_t*>(view->ir_xml.data()) - data);
  std::vector<uint8_t> header(data, data + header_size);
  std::vector<uint8_t> xml(view->ir_xml.begin(), view->ir_xml.end());
  std::vector<uint8_t> weights(view->ir_weights, view->ir_weights + view->ir_weights_size);
  if (random() % 4 != 0) {
    mutate_part(xml, max_size);
  } else {
    mutate_part(weights, max_size);
  }
  if (xml.empty()) xml.push_back('<');
  const size_t alignment = executorch_openvino::kBlobAlignment;
  const size_t weights_offset = (header.size() + xml.size() + alignment - 1) / alignment * alignment;
  const size_t total = weights_offset + weights.size();
  if (total > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  put_le64(header.data() + 64, xml.size());
  put_le64(header.data() + 72, weights.size());
  // A matching checksum, so that the damage reaches OpenVINO's IR reader.
  const uint32_t crc =
      executorch_openvino::crc32(weights.data(), weights.size(), executorch_openvino::crc32(xml.data(), xml.size()));
  for (int i = 0; i < 4; ++i) header[80 + i] = static_cast<uint8_t>(crc >> (8 * i));
  std::memset(data, 0, total);
  std::memcpy(data, header.data(), header.size());
  std::memcpy(data + header.size(), xml.data(), xml.size());
  if (!weights.empty()) std::memcpy(data + weights_offset, weights.data(), weights.size());
  return total;
}
#endif  // ETOV_LIBFUZZER
