#include "exec/fusion.hpp"

#include "ir/sym.hpp"

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
    // The consumer's other inputs must exist when the fused node runs, in the producer's
    // place: constants, graph inputs, or tensors made before the producer (a residual).
    bool rest_ready = !ir::is_sym_op(next.op) && !ir::is_sym_op(producer.op);
    for (size_t i = 1; i < next.inputs.size(); ++i) {
      const ir::ValueId v = next.inputs[i];
      if (v == ir::kNoValue) continue;
      const ir::Value& value = graph.values[v];
      rest_ready &= value.type == ir::ValueType::Tensor &&
                    (value.kind != ir::ValueKind::NodeOutput || value.producer < static_cast<int32_t>(n));
    }
    if (rest_ready && !ir::has_bound_attrs(next)) out[n] = consumer[mid];
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
