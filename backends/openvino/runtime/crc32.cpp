#include "crc32.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ETOV_CRC32_FOLDED 1
#include <emmintrin.h>
#include <wmmintrin.h>
#endif

namespace executorch_openvino {
namespace crc32_impl {
namespace {

constexpr uint32_t kReflectedPolynomial = 0xEDB88320u;

uint32_t read_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// Slicing-by-8 tables, built at compile time.
struct Tables {
  uint32_t t[8][256] = {};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t crc = i;
      for (int bit = 0; bit < 8; ++bit) {
        crc = (crc >> 1) ^ (kReflectedPolynomial & (0u - (crc & 1u)));
      }
      t[0][i] = crc;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int slice = 1; slice < 8; ++slice) {
        t[slice][i] = (t[slice - 1][i] >> 8) ^ t[0][t[slice - 1][i] & 0xFF];
      }
    }
  }
};
constexpr Tables kTables;

// Both implementations work on the register value, not inverted at either end.
uint32_t update_portable(uint32_t state, const uint8_t* data, size_t size) {
  const auto& t = kTables.t;
  while (size >= 8) {
    const uint32_t low = state ^ read_le32(data);
    const uint32_t high = read_le32(data + 4);
    state = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^
            t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
    data += 8;
    size -= 8;
  }
  while (size-- > 0) {
    state = (state >> 8) ^ t[0][(state ^ *data++) & 0xFF];
  }
  return state;
}

#ifdef ETOV_CRC32_FOLDED

// Folding with carry-less multiplication, after Intel's "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction" (2009). Each constant is x^n
// mod P, bit-reflected and shifted left by one: multiplying a 64-bit half by it
// moves that half n bits further on, where the data it is folded into sits.
constexpr uint64_t kFold512Low = 0x154442bd4;   // x^(4*128+32) mod P: four lanes of 128 bits
constexpr uint64_t kFold512High = 0x1c6e41596;  // x^(4*128-32) mod P
constexpr uint64_t kFold128Low = 0x1751997d0;   // x^(128+32) mod P: one lane
constexpr uint64_t kFold128High = 0x0ccaa009e;  // x^(128-32) mod P
constexpr uint64_t kFold64 = 0x163cd6124;       // x^64 mod P
constexpr uint64_t kPolynomial = 0x1db710641;   // P, bit-reflected, with its x^32 term
constexpr uint64_t kBarrettMu = 0x1f7011641;    // floor(x^64 / P), bit-reflected

// Lanes of 128 bits start and stay at the same byte offsets, so unaligned loads are fine.
__attribute__((target("pclmul"))) inline __m128i fold(__m128i lane, __m128i constants, __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(lane, constants, 0x00);
  const __m128i high = _mm_clmulepi64_si128(lane, constants, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

inline __m128i load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Needs size >= 64 and a multiple of 16.
__attribute__((target("pclmul"))) uint32_t update_folded(uint32_t state, const uint8_t* data, size_t size) {
  const __m128i fold512 = _mm_set_epi64x(kFold512High, kFold512Low);
  const __m128i fold128 = _mm_set_epi64x(kFold128High, kFold128Low);
  const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);

  __m128i x0 = _mm_xor_si128(load(data), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i x1 = load(data + 16);
  __m128i x2 = load(data + 32);
  __m128i x3 = load(data + 48);
  data += 64;
  size -= 64;
  while (size >= 64) {
    x0 = fold(x0, fold512, load(data));
    x1 = fold(x1, fold512, load(data + 16));
    x2 = fold(x2, fold512, load(data + 32));
    x3 = fold(x3, fold512, load(data + 48));
    data += 64;
    size -= 64;
  }
  __m128i x = fold(fold(fold(x0, fold128, x1), fold128, x2), fold128, x3);
  for (; size >= 16; data += 16, size -= 16) {
    x = fold(x, fold128, load(data));
  }
  // 128 bits to 64, then to 32 ...
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, fold128, 0x10));
  x = _mm_xor_si128(_mm_srli_si128(x, 4),
                    _mm_clmulepi64_si128(_mm_and_si128(x, low32), _mm_set_epi64x(0, kFold64), 0x00));
  // ... and the remainder of those 32 bits by P, with Barrett reduction.
  const __m128i barrett = _mm_set_epi64x(kBarrettMu, kPolynomial);
  __m128i quotient = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10), low32);
  x = _mm_xor_si128(x, _mm_clmulepi64_si128(quotient, barrett, 0x00));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(x, 4)));
}

#endif  // ETOV_CRC32_FOLDED

}  // namespace

uint32_t portable(const uint8_t* data, size_t size, uint32_t crc) {
  return ~update_portable(~crc, data, size);
}

bool folded_available() {
#ifdef ETOV_CRC32_FOLDED
  // SSE2 is part of x86-64. __builtin_cpu_init makes the check safe even when a
  // static constructor of the embedding program is the first caller.
  static const bool available = (__builtin_cpu_init(), __builtin_cpu_supports("pclmul"));
  return available;
#else
  return false;
#endif
}

uint32_t folded(const uint8_t* data, size_t size, uint32_t crc) {
  uint32_t state = ~crc;
#ifdef ETOV_CRC32_FOLDED
  if (size >= 64) {
    const size_t bulk = size & ~static_cast<size_t>(15);
    state = update_folded(state, data, bulk);
    data += bulk;
    size -= bulk;
  }
#endif
  return ~update_portable(state, data, size);
}

}  // namespace crc32_impl

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  return crc32_impl::folded_available() ? crc32_impl::folded(data, size, crc) : crc32_impl::portable(data, size, crc);
}

}  // namespace executorch_openvino
