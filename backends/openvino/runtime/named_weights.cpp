#include "named_weights.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <executorch/runtime/platform/log.h>
#include <openvino/op/constant.hpp>
#include <openvino/op/parameter.hpp>

#include <executorch_openvino/backend.h>

#include "crc32.h"

namespace executorch_openvino {

using executorch::runtime::Error;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::NamedDataMap;
using executorch::runtime::Result;

namespace {

struct NamedWeight {
  std::string key;
  uint32_t crc = 0;
};

// "executorch_openvino.named_weight=<key>.crc=<8 hex digits>" -> key and CRC; an empty
// key when the name is not ours or does not parse.
NamedWeight named_weight_in(const std::string& name) {
  const size_t prefix = std::strlen(kNamedWeightName);
  const std::string crc_mark = ".crc=";
  if (name.compare(0, prefix, kNamedWeightName) != 0 || name.size() < prefix + crc_mark.size() + 8 + 1) {
    return {};
  }
  const size_t mark = name.size() - 8 - crc_mark.size();
  if (name.compare(mark, crc_mark.size(), crc_mark) != 0) {
    return {};
  }
  const std::string digits = name.substr(name.size() - 8);
  char* end = nullptr;
  const unsigned long crc = std::strtoul(digits.c_str(), &end, 16);
  if (*end != '\0' || digits.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return {};
  }
  return NamedWeight{name.substr(prefix, mark - prefix), static_cast<uint32_t>(crc)};
}

NamedWeight named_weight_of(const ov::op::v0::Parameter& parameter) {
  for (const auto& name : parameter.output(0).get_names()) {
    NamedWeight weight = named_weight_in(name);
    if (!weight.key.empty()) return weight;
  }
  return {};
}

// The bytes of `weight` from `named_data`, checked against what `parameter` says of them.
Result<std::shared_ptr<FreeableBuffer>> fetch(const NamedDataMap& named_data, const NamedWeight& weight,
                                              const ov::op::v0::Parameter& parameter) {
  Result<FreeableBuffer> data = named_data.get_data(weight.key.c_str());
  if (!data.ok()) {
    ET_LOG(Error, "OpenVINO blob: weight '%s' is not in the program's named data (error 0x%x)", weight.key.c_str(),
           static_cast<unsigned>(data.error()));
    return Error::InvalidArgument;
  }
  auto buffer = std::make_shared<FreeableBuffer>(std::move(*data));
  const auto& shape = parameter.get_output_partial_shape(0);
  const ov::element::Type type = parameter.get_output_element_type(0);
  if (!shape.is_static() || type.is_dynamic() || type.bitwidth() % 8 != 0 ||
      ov::shape_size(shape.to_shape()) * type.size() != buffer->size()) {
    ET_LOG(Error, "OpenVINO blob: weight '%s' holds %zu bytes, not those of a %s %s; the program is damaged",
           weight.key.c_str(), buffer->size(), type.to_string().c_str(), shape.to_string().c_str());
    return Error::InvalidArgument;
  }
  const uint32_t crc = crc32(static_cast<const uint8_t*>(buffer->data()), buffer->size());
  if (crc != weight.crc) {
    ET_LOG(Error, "OpenVINO blob: weight '%s' fails its CRC-32 (0x%08x, stored 0x%08x); the program is damaged",
           weight.key.c_str(), crc, weight.crc);
    return Error::InvalidArgument;
  }
  return buffer;
}

}  // namespace

Error put_named_weights(ov::Model& model, const NamedDataMap* named_data, NamedWeightBuffers& buffers) {
  // A copy: remove_parameter changes the model's own list.
  const ov::ParameterVector parameters = model.get_parameters();
  for (const auto& parameter : parameters) {
    const NamedWeight weight = named_weight_of(*parameter);
    if (weight.key.empty()) {
      continue;
    }
    if (named_data == nullptr) {
      ET_LOG(Error, "OpenVINO blob: weight '%s' is in the program's named data, which this load did not provide",
             weight.key.c_str());
      return Error::InvalidArgument;
    }
    Result<std::shared_ptr<FreeableBuffer>> buffer = fetch(*named_data, weight, *parameter);
    if (!buffer.ok()) {
      return buffer.error();
    }
    // The constant reads the bytes where they lie and holds the buffer while it lives.
    auto constant = std::make_shared<ov::op::v0::Constant>(parameter->get_output_element_type(0),
                                                           parameter->get_output_shape(0), (*buffer)->data(), *buffer);
    parameter->output(0).replace(constant->output(0));
    model.remove_parameter(parameter);
    buffers.push_back(std::move(*buffer));
  }
  model.validate_nodes_and_infer_types();
  return Error::Ok;
}

}  // namespace executorch_openvino
