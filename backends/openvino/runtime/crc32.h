/*
 * CRC-32 of the blob (blob_format.h): the IEEE 802.3 polynomial, bit-reflected,
 * the same value zlib.crc32 gives, so that preprocess can write it from Python.
 *
 * The check runs over every byte of the weights at each load, so its speed is
 * part of the load time (16 MB took 8 ms with tables alone). On x86-64 CPUs with
 * carry-less multiplication (PCLMULQDQ, every x86-64 CPU since 2010) the bulk is
 * folded 64 bytes at a time; elsewhere, and for short inputs, slicing-by-8 tables
 * compute the same value.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch_openvino {

/// CRC-32 of `size` bytes, continuing from `crc` (0 to start): the fastest
/// implementation this CPU runs.
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

namespace crc32_impl {

/// The table implementation, on any CPU.
uint32_t portable(const uint8_t* data, size_t size, uint32_t crc);

/// True when this build and this CPU can run folded().
bool folded_available();

/// The carry-less multiplication implementation; call only when folded_available().
uint32_t folded(const uint8_t* data, size_t size, uint32_t crc);

}  // namespace crc32_impl
}  // namespace executorch_openvino
