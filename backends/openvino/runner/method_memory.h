/*
 * The memory a C++ application gives Program::load_method, set up as ExecuTorch's
 * executor_runner does: one heap buffer per memory-planned buffer the method
 * declares, and malloc for the method's own and temporary allocations. Shared by
 * executorch-openvino-run, the load runner (tests/cpp) and the call-overhead
 * benchmark (benchmarks/cpp).
 */
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method_meta.h>

namespace executorch_openvino {

/// Owns everything the MemoryManager points at; must outlive the loaded Method.
class MethodMemory {
 public:
  explicit MethodMemory(const executorch::runtime::MethodMeta& meta) : spans_(allocate(meta, buffers_)) {}
  MethodMemory(const MethodMemory&) = delete;
  MethodMemory& operator=(const MethodMemory&) = delete;

  executorch::runtime::MemoryManager* manager() { return &manager_; }

 private:
  // The members are built in this order: the buffers and their spans before the
  // allocator that hands them out.
  static std::vector<executorch::runtime::Span<uint8_t>> allocate(const executorch::runtime::MethodMeta& meta,
                                                                  std::vector<std::unique_ptr<uint8_t[]>>& buffers) {
    std::vector<executorch::runtime::Span<uint8_t>> spans;
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      const size_t size = static_cast<size_t>(meta.memory_planned_buffer_size(i).get());
      buffers.push_back(std::make_unique<uint8_t[]>(size));
      spans.emplace_back(buffers.back().get(), size);
    }
    return spans;
  }

  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  std::vector<executorch::runtime::Span<uint8_t>> spans_;
  executorch::runtime::HierarchicalAllocator planned_{{spans_.data(), spans_.size()}};
  executorch::extension::MallocMemoryAllocator method_allocator_;
  executorch::extension::MallocMemoryAllocator temp_allocator_;
  executorch::runtime::MemoryManager manager_{&method_allocator_, &planned_, &temp_allocator_};
};

}  // namespace executorch_openvino
