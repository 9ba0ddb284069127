#include "npy_file.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch_openvino::runner {
namespace {

using executorch::aten::ScalarType;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The dtypes a .npy file and an ExecuTorch tensor share. "|" marks one-byte types,
// which have no byte order.
constexpr std::array<std::pair<const char*, ScalarType>, 12> kDescrs{{
    {"<f4", ScalarType::Float},
    {"<f8", ScalarType::Double},
    {"<f2", ScalarType::Half},
    {"<i8", ScalarType::Long},
    {"<i4", ScalarType::Int},
    {"<i2", ScalarType::Short},
    {"<u8", ScalarType::UInt64},
    {"<u4", ScalarType::UInt32},
    {"<u2", ScalarType::UInt16},
    {"|i1", ScalarType::Char},
    {"|u1", ScalarType::Byte},
    {"|b1", ScalarType::Bool},
}};

// The text after "'key':" in the header dictionary, or npos.
size_t value_start(const std::string& header, const char* key) {
  const size_t at = header.find(std::string("'") + key + "'");
  if (at == std::string::npos) return at;
  const size_t colon = header.find(':', at);
  if (colon == std::string::npos) return colon;
  return header.find_first_not_of(' ', colon + 1);
}

bool parse_header(const std::string& header, NpyArray& array, std::string& why) {
  const size_t descr = value_start(header, "descr");
  if (descr == std::string::npos || header[descr] != '\'') {
    why = "its header has no 'descr'";
    return false;
  }
  const std::string text = header.substr(descr + 1, header.find('\'', descr + 1) - descr - 1);
  bool known = false;
  for (const auto& [name, type] : kDescrs) {
    // A one-byte type may also be written with "<", ">" or "=".
    if (text == name || (name[0] == '|' && text.size() == 3 && text.compare(1, 2, name + 1) == 0)) {
      array.dtype = type;
      known = true;
    }
  }
  if (!known) {
    why = "its dtype '" + text + "' is not one of <f4 <f8 <f2 <i8 <i4 <i2 <u8 <u4 <u2 i1 u1 b1 (little-endian)";
    return false;
  }
  const size_t order = value_start(header, "fortran_order");
  if (order == std::string::npos || header.compare(order, 5, "False") != 0) {
    why = "it is not in C order (fortran_order must be False; save np.ascontiguousarray(x))";
    return false;
  }
  const size_t shape = value_start(header, "shape");
  if (shape == std::string::npos || header[shape] != '(') {
    why = "its header has no 'shape'";
    return false;
  }
  const size_t close = header.find(')', shape);
  if (close == std::string::npos) {
    why = "its header's 'shape' has no closing parenthesis";
    return false;
  }
  // Sizes separated by commas, as numpy writes them: "(2, 3)", "(2,)", "()".
  array.shape.clear();
  std::istringstream sizes(header.substr(shape + 1, close - shape - 1));
  for (std::string item; std::getline(sizes, item, ',');) {
    const size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;  // after the trailing comma of "(2,)"
    const size_t last = item.find_last_not_of(' ');
    const std::string digits = item.substr(first, last - first + 1);
    const bool all_digits =
        std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    // ExecuTorch's tensor sizes are 32-bit: a larger one (even beside a 0, which makes
    // the data empty) would wrap when the runner makes the input tensor.
    if (!all_digits || digits.size() > 10 || std::stoll(digits) > std::numeric_limits<int32_t>::max()) {
      why = "its shape holds '" + digits + "', not a size (0 to 2**31 - 1, ExecuTorch's largest)";
      return false;
    }
    array.shape.push_back(std::stoll(digits));
  }
  return true;
}

// How many bytes `shape` of `element_size`-byte values takes, or false past `limit`.
bool bytes_of(const std::vector<int64_t>& shape, size_t element_size, uint64_t limit, uint64_t& bytes) {
  bytes = element_size;
  for (int64_t size : shape) {
    if (size != 0 && bytes > limit / static_cast<uint64_t>(size)) return false;
    bytes *= static_cast<uint64_t>(size);
  }
  return bytes <= limit;
}

}  // namespace

const char* npy_descr(ScalarType dtype) {
  for (const auto& [name, type] : kDescrs) {
    if (type == dtype) return name;
  }
  return nullptr;
}

bool read_npy(const std::string& path, NpyArray& array, std::string& error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open " + path;
    return false;
  }
  std::array<char, kMagicSize + 2> lead{};
  if (!file.read(lead.data(), lead.size()) || std::memcmp(lead.data(), kMagic, kMagicSize) != 0) {
    error = path + " is not a .npy file (no \\x93NUMPY magic)";
    return false;
  }
  const int major = static_cast<unsigned char>(lead[kMagicSize]);
  uint32_t header_size = 0;
  if (major == 1) {
    std::array<unsigned char, 2> size{};
    file.read(reinterpret_cast<char*>(size.data()), size.size());
    header_size = size[0] | (size[1] << 8);
  } else if (major == 2 || major == 3) {
    std::array<unsigned char, 4> size{};
    file.read(reinterpret_cast<char*>(size.data()), size.size());
    header_size = size[0] | (size[1] << 8) | (size[2] << 16) | (static_cast<uint32_t>(size[3]) << 24);
  } else {
    error = path + ": .npy format version " + std::to_string(major) + " is not one of 1, 2, 3";
    return false;
  }
  // The header's size is checked against the file's before anything is allocated.
  const std::streampos header_start = file.tellg();
  file.seekg(0, std::ios::end);
  const std::streampos file_end = file.tellg();
  file.seekg(header_start);
  if (!file || header_start < 0 || static_cast<uint64_t>(file_end - header_start) < header_size) {
    error = path + ": the file ends inside its header";
    return false;
  }
  std::string header(header_size, '\0');
  if (!file.read(header.data(), header_size)) {
    error = path + ": the file ends inside its header";
    return false;
  }
  std::string why;
  if (!parse_header(header, array, why)) {
    error = path + ": " + why;
    return false;
  }
  // The values' size is checked against the file's before anything is allocated.
  const std::streampos values_start = file.tellg();
  file.seekg(0, std::ios::end);
  const uint64_t left = static_cast<uint64_t>(file.tellg() - values_start);
  file.seekg(values_start);
  uint64_t bytes = 0;
  if (!bytes_of(array.shape, executorch::runtime::elementSize(array.dtype), left, bytes)) {
    error = path + ": the file holds fewer values than its shape says";
    return false;
  }
  array.bytes.resize(static_cast<size_t>(bytes));
  if (!file.read(reinterpret_cast<char*>(array.bytes.data()), static_cast<std::streamsize>(array.bytes.size()))) {
    error = path + ": the file holds fewer values than its shape says";
    return false;
  }
  if (file.peek() != std::char_traits<char>::eof()) {
    error = path + ": the file holds more values than its shape says";
    return false;
  }
  return true;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string& error) {
  const char* descr = npy_descr(array.dtype);
  if (descr == nullptr) {
    error = std::string("dtype ") + executorch::runtime::toString(array.dtype) + " has no .npy form here";
    return false;
  }
  std::string shape;
  for (int64_t size : array.shape) shape += std::to_string(size) + ", ";
  if (array.shape.size() > 1) shape.resize(shape.size() - 1);  // (2, 3) but (2,)
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Version 1.0: the data starts at a multiple of 64 bytes; the header ends with a newline.
  const size_t lead = kMagicSize + 2 + 2;
  header.append(64 - (lead + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  const char version[2] = {1, 0};
  const char size[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  file.write(kMagic, kMagicSize).write(version, 2).write(size, 2).write(header.data(), header.size());
  file.write(reinterpret_cast<const char*>(array.bytes.data()), static_cast<std::streamsize>(array.bytes.size()));
  if (!file) {
    error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace executorch_openvino::runner
