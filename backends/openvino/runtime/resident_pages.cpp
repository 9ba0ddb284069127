#include "resident_pages.h"

#include "cache_file_names.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string_view>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace executorch_openvino {

#ifdef __linux__
namespace {

/// One line of /proc/self/maps.
struct Mapping {
  uintptr_t low = 0;
  uintptr_t high = 0;
  // A view of a file that cannot have been written through (read-only, or shared
  // with the file): dropping its pages loses nothing.
  bool unwritten_file_view = false;
  const char* path = "";  // valid during the visit only
};

// Visits the mappings in increasing address order until `visit` returns false.
void for_each_mapping(const std::function<bool(const Mapping&)>& visit) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) {
    return;
  }
  char line[4096 + 128];  // longer than any path the kernel prints
  bool more = true;
  while (more && std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long low = 0, high = 0, inode = 0;
    char perms[5] = {};
    int path_at = 0;
    // start-end perms offset dev inode path
    if (std::sscanf(line, "%lx-%lx %4s %*s %*s %lu %n", &low, &high, perms, &inode, &path_at) != 4) {
      continue;
    }
    line[std::strcspn(line, "\n")] = '\0';
    Mapping mapping;
    mapping.low = low;
    mapping.high = high;
    mapping.unwritten_file_view = inode != 0 && (perms[1] != 'w' || perms[3] == 's');
    mapping.path = line + path_at;
    more = visit(mapping);
  }
  std::fclose(maps);
}

// Whether [begin, end) is covered by adjacent unwritten file views. A loader's
// one mapping can show as several (locking part of it splits it).
bool inside_unwritten_file_views(uintptr_t begin, uintptr_t end) {
  uintptr_t covered = begin;  // [begin, covered) is known to qualify
  bool qualifies = true;
  for_each_mapping([&](const Mapping& mapping) {
    if (mapping.high <= covered) {
      return true;
    }
    qualifies = mapping.low <= covered && mapping.unwritten_file_view;
    covered = mapping.high;
    return qualifies && covered < end;
  });
  return qualifies && covered >= end;
}

/// The whole pages inside [begin, end): partial pages at either end hold bytes
/// that are not ours.
struct WholePages {
  void* start = nullptr;
  size_t size = 0;
};

WholePages whole_pages_of(uintptr_t begin, uintptr_t end) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = end / page * page;
  return first < last ? WholePages{reinterpret_cast<void*>(first), last - first} : WholePages{};
}

}  // namespace

PageRelease release_file_backed_pages(const void* data, size_t size) noexcept {
  try {
    const auto begin = reinterpret_cast<uintptr_t>(data);
    const auto end = begin + size;
    if (size == 0 || !inside_unwritten_file_views(begin, end)) {
      return PageRelease::kNotFileBacked;
    }
    const WholePages pages = whole_pages_of(begin, end);
    if (pages.size == 0) {
      return PageRelease::kReleased;  // no whole page to drop
    }
    // The buffer is the delegate's to free; a loader that locked it (MmapDataLoader's
    // mlock options) did so to keep the program's pages in memory while it runs,
    // which these pages no longer need, and locked pages cannot be dropped.
    munlock(pages.start, pages.size);
    return madvise(pages.start, pages.size, MADV_DONTNEED) == 0 ? PageRelease::kReleased : PageRelease::kNotSupported;
  } catch (...) {
    return PageRelease::kNotSupported;
  }
}

size_t release_pages_of_cache_files_in(const std::string& folder) noexcept {
  try {
    std::error_code error;
    const std::string prefix = std::filesystem::canonical(folder, error).string() + "/";
    if (error) {
      return 0;
    }
    // Only the cache's own files, and only directly in the folder: a shared
    // library's relocated read-only pages (RELRO) look like an unwritten view of
    // its file, and dropping them would bring back the file's unrelocated bytes.
    const auto is_cache_file = [&prefix](const char* path) {
      if (std::strncmp(path, prefix.c_str(), prefix.size()) != 0) {
        return false;
      }
      const std::string_view name(path + prefix.size());
      return name.find('/') == std::string_view::npos && is_cache_file_name(name);
    };
    size_t released = 0;
    for_each_mapping([&](const Mapping& mapping) {
      // Locked pages stay: they are not ours to unlock, and madvise refuses them.
      if (mapping.unwritten_file_view && is_cache_file(mapping.path) &&
          madvise(reinterpret_cast<void*>(mapping.low), mapping.high - mapping.low, MADV_DONTNEED) == 0) {
        ++released;
      }
      return true;
    });
    return released;
  } catch (...) {
    return 0;
  }
}

void WeightsGivenBack::after_call_of_new_sizes(uint64_t sizes) noexcept {
  try {
    if (empty() || seen_.size() >= kMaxSizes || !seen_.insert(sizes).second) {
      return;
    }
  } catch (...) {
    return;  // out of memory to remember the sizes: the pages stay, the call stands
  }
  // Checked and unlocked when first released; the delegate keeps the buffer mapped.
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  const WholePages pages = whole_pages_of(begin, begin + size_);
  if (pages.size > 0) {
    madvise(pages.start, pages.size, MADV_DONTNEED);
  }
}

#else

PageRelease release_file_backed_pages(const void*, size_t) noexcept {
  return PageRelease::kNotSupported;
}

void WeightsGivenBack::after_call_of_new_sizes(uint64_t) noexcept {}

size_t release_pages_of_cache_files_in(const std::string&) noexcept {
  return 0;
}

#endif

WeightsGivenBack WeightsGivenBack::in_program(const void* data, size_t size) noexcept {
  WeightsGivenBack weights;
  weights.data_ = data;
  weights.size_ = size;
  return weights;
}

bool release_free_heap_pages() noexcept {
#ifdef __GLIBC__
  return malloc_trim(0) == 1;
#else
  return false;
#endif
}

}  // namespace executorch_openvino
