/*
 * Unit test of the blob checksum (runtime/crc32.h): the carry-less multiplication
 * implementation must give the table implementation's value for every length,
 * alignment and starting value, because a wrong checksum refuses good programs.
 *
 *   etov_crc32_test          self-checks; exits 0 when all pass, 1 on a failure,
 *                            77 when this CPU cannot run the folded implementation
 *   etov_crc32_test FILE     prints "portable XXXXXXXX" and "folded XXXXXXXX" (when
 *                            available), the CRC-32 of FILE, for comparison with zlib
 */
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "crc32.h"

namespace {

using executorch_openvino::crc32;
namespace impl = executorch_openvino::crc32_impl;

int failures = 0;

void expect_equal(uint32_t got, uint32_t want, const char* what, size_t size, size_t offset, uint32_t start) {
  if (got != want) {
    ++failures;
    std::fprintf(stderr, "FAILED %s: size %zu, offset %zu, start %08x: got %08x, want %08x\n", what, size, offset,
                 start, got, want);
  }
}

std::vector<uint8_t> random_bytes(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::vector<uint8_t> bytes(size);
  for (auto& byte : bytes) byte = static_cast<uint8_t>(generator());
  return bytes;
}

int print_file_checksums(const char* path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::printf("portable %08x\n", impl::portable(bytes.data(), bytes.size(), 0));
  if (impl::folded_available()) {
    std::printf("folded %08x\n", impl::folded(bytes.data(), bytes.size(), 0));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    return print_file_checksums(argv[1]);
  }
  // The check value of CRC-32/ISO-HDLC, the CRC zlib computes.
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  expect_equal(impl::portable(check, sizeof(check), 0), 0xCBF43926u, "portable check value", 9, 0, 0);
  expect_equal(crc32(check, sizeof(check)), 0xCBF43926u, "crc32 check value", 9, 0, 0);
  if (!impl::folded_available()) {
    std::printf("the folded implementation does not run on this CPU or build (no PCLMULQDQ)\n");
    return failures == 0 ? 77 : 1;
  }
  expect_equal(impl::folded(check, sizeof(check), 0), 0xCBF43926u, "folded check value", 9, 0, 0);

  // Every length up to a few fold blocks, at every offset within 16 bytes, from two starts.
  const std::vector<uint8_t> bytes = random_bytes(1200, 1);
  for (uint32_t start : {0u, 0x9E3779B9u}) {
    for (size_t offset = 0; offset < 16; ++offset) {
      for (size_t size = 0; size + offset <= 1100; ++size) {
        const uint8_t* data = bytes.data() + offset;
        expect_equal(impl::folded(data, size, start), impl::portable(data, size, start), "folded", size, offset, start);
      }
    }
  }
  // Weights-sized buffers, also split in two as the blob's XML and weights are.
  for (size_t size : {size_t{1} << 20, (size_t{16} << 20) + 13}) {
    const std::vector<uint8_t> big = random_bytes(size, static_cast<unsigned>(size));
    const uint32_t whole = impl::portable(big.data(), size, 0);
    expect_equal(impl::folded(big.data(), size, 0), whole, "folded large", size, 0, 0);
    const size_t split = size / 3 + 5;
    expect_equal(crc32(big.data() + split, size - split, crc32(big.data(), split)), whole, "crc32 split", size, split,
                 0);
  }
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
