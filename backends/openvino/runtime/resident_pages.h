/*
 * Giving back the resident pages of IR weights that a compiled model has
 * finished reading.
 *
 * OpenVINO's CPU plugin repacks the weights of most matrix multiplications into
 * its own memory while it compiles, yet its compiled model keeps the original
 * constants referenced (and may read them again, for example when a dynamic
 * shape needs another kernel). So the blob must stay alive, and after a compile
 * every page of it is resident: the weights count twice.
 *
 * When the program was loaded by mapping its file (ExecuTorch's MmapDataLoader,
 * the Python runtime's load_program(path), Module's Mmap load modes), the blob's
 * pages are a read-only view of the file. Dropping them from this process is
 * then lossless: a later read faults the same bytes back in from the page cache
 * or the file. Only pages read again come back (the embedding rows a generation
 * touches), so the resident set keeps the repacked weights and not the
 * originals. Memory that is not such a view (a program read into the heap,
 * writable or anonymous mappings) is left alone, since dropping it would lose
 * data.
 *
 * A model compiled through the model cache points into files OpenVINO maps from
 * the cache folder (the IR's weights, or its compiled model) rather than into the
 * blob; the same holds for the pages of those read-only mappings.
 *
 * Compiling also frees what it built on the way (transformed graphs, constants
 * folded and then repacked); glibc's malloc keeps those pages resident for later
 * allocations unless asked to give them back.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>

namespace executorch_openvino {

/// What release_file_backed_pages did.
enum class PageRelease {
  kReleased,       // the whole pages inside the range are no longer resident
  kNotFileBacked,  // heap, anonymous or writable memory: nothing dropped
  kNotSupported,   // not Linux, or the kernel refused
};

/// Drops this process's resident pages of [data, data + size) when the range
/// lies in read-only mappings of a file, unlocking them first (the range must
/// be the caller's to free); partial pages at either end stay.
PageRelease release_file_backed_pages(const void* data, size_t size) noexcept;

/// Drops this process's resident pages of read-only mappings of the model
/// cache's files directly in `folder` (cache_file_names.h; no other file there,
/// and nothing in its subfolders), leaving locked pages; returns how many
/// mappings were dropped.
size_t release_pages_of_cache_files_in(const std::string& folder) noexcept;

/// Gives the system the pages of heap memory that are allocated to nothing
/// (glibc's malloc_trim); returns whether any were given back. Elsewhere does
/// nothing.
bool release_free_heap_pages() noexcept;

/// Weights of a mapped program whose pages were given back (above), kept that way
/// for a model of dynamic shape: OpenVINO prepares some kernels at the first call
/// of new input sizes and reads the original weights back in to pack them, so
/// their pages are dropped again after such a call, without reading /proc (the
/// range was checked at load, and the delegate keeps it mapped). A call of sizes
/// seen before (or after kMaxSizes distinct ones) costs nothing. Pages of the model
/// cache's files are dropped at load only: finding them means reading /proc.
class WeightsGivenBack {
 public:
  static constexpr size_t kMaxSizes = 4096;

  WeightsGivenBack() = default;
  /// IR weights in the blob, released by release_file_backed_pages.
  static WeightsGivenBack in_program(const void* data, size_t size) noexcept;

  bool empty() const { return data_ == nullptr; }
  /// After a call whose input sizes hash to `sizes`, which differ from the
  /// previous call's.
  void after_call_of_new_sizes(uint64_t sizes) noexcept;

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  std::unordered_set<uint64_t> seen_;
};

}  // namespace executorch_openvino
