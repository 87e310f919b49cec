#include "exec/fusion.hpp"

namespace switchyard::exec {

std::vector<int32_t> fusable_consumers(const ir::Graph& graph) {
  const size_t n_values = graph.values.size();
  std::vector<int32_t> consumer(n_values, -1), uses(n_values, 0);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ir::ValueId v : graph.nodes[n].inputs)
      if (v != ir::kNoValue) {
        ++uses[v];
        consumer[v] = static_cast<int32_t>(n);
      }
  for (ir::ValueId v : graph.outputs) uses[v] += 1000;  // never fuse away a graph output

  std::vector<int32_t> out(graph.nodes.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& producer = graph.nodes[n];
    if (producer.outputs.size() != 1) continue;
    const ir::ValueId mid = producer.outputs[0];
    if (uses[mid] != 1) continue;
    const ir::Node& next = graph.nodes[consumer[mid]];
    if (next.inputs.empty() || next.inputs[0] != mid) continue;
    bool rest_constant = true;
    for (size_t i = 1; i < next.inputs.size(); ++i) {
      ir::ValueId v = next.inputs[i];
      rest_constant &= v == ir::kNoValue || graph.values[v].kind == ir::ValueKind::Constant;
    }
    if (rest_constant) out[n] = consumer[mid];
  }
  return out;
}

std::string fused_op(const ir::Node& producer, const ir::Node& consumer) {
  return producer.op + "+" + consumer.op;
}

ir::Node fused_node(const ir::Node& producer, const ir::Node& consumer) {
  ir::Node f;
  f.name = producer.name;
  f.op = fused_op(producer, consumer);
  f.module_path = producer.module_path;
  f.attrs = producer.attrs;
  for (const auto& [name, value] : consumer.attrs) f.attrs.emplace_back("post." + name, value);
  f.inputs = producer.inputs;
  f.inputs.insert(f.inputs.end(), consumer.inputs.begin() + 1, consumer.inputs.end());
  f.outputs = consumer.outputs;
  return f;
}

}  // namespace switchyard::exec
