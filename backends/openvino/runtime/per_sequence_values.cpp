#include "per_sequence_values.h"

#include <string>
#include <unordered_set>
#include <vector>

#include <openvino/op/assign.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/read_value.hpp>

#include "kv_cache.h"

namespace executorch_openvino {

namespace {

// Whether any input of the model that `value` is computed from has a dynamic shape.
bool reads_a_dynamic_input(const ov::Output<ov::Node>& value) {
  std::vector<ov::Node*> pending{value.get_node()};
  std::unordered_set<ov::Node*> seen;
  while (!pending.empty()) {
    ov::Node* node = pending.back();
    pending.pop_back();
    if (!seen.insert(node).second) continue;
    if (dynamic_cast<ov::op::v0::Parameter*>(node) != nullptr && node->get_output_partial_shape(0).is_dynamic()) {
      return true;
    }
    for (const auto& input : node->input_values()) {
      pending.push_back(input.get_node());
    }
  }
  return false;
}

}  // namespace

bool may_compute_per_sequence_values_wrong(std::string_view ir_xml, const CompileSettings& settings) {
  // Empty: f32, which the runtime asks of the CPU plugin (options.cpp, cpu_settings).
  const bool sixteen_bits = settings.inference_precision == "bf16" || settings.inference_precision == "f16";
  return sixteen_bits && cpu_settings_place(settings.device) != CpuSettingsPlace::kNone &&
         ir_xml.find(kPerSequenceSuffix) != std::string_view::npos;
}

size_t compute_per_sequence_values_at_each_call(ov::Model& model) {
  std::unordered_set<std::string> taken;
  for (const auto& node : model.get_ordered_ops()) {
    auto read = std::dynamic_pointer_cast<ov::op::v6::ReadValue>(node);
    if (!read || read->get_input_size() != 1 || !is_per_sequence_id(read->get_variable_id()) ||
        !reads_a_dynamic_input(read->input_value(0))) {
      continue;
    }
    read->output(0).replace(read->input_value(0));
    taken.insert(read->get_variable_id());
  }
  // Copies: removing a sink or a variable changes the model's own lists.
  const ov::SinkVector sinks = model.get_sinks();
  for (const auto& sink : sinks) {
    auto assign = std::dynamic_pointer_cast<ov::op::v6::Assign>(sink);
    if (assign && taken.count(assign->get_variable_id()) != 0) {
      model.remove_sink(assign);
    }
  }
  const ov::op::util::VariableVector variables = model.get_variables();
  for (const auto& variable : variables) {
    if (taken.count(variable->get_info().variable_id) != 0) {
      model.remove_variable(variable);
    }
  }
  if (!taken.empty()) {
    model.validate_nodes_and_infer_types();
  }
  return taken.size();
}

}  // namespace executorch_openvino
