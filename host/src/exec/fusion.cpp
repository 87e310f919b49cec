#include "exec/fusion.hpp"

#include "ir/sym.hpp"

namespace switchyard::exec {

namespace {

// Whether `node` gives the same with its first two inputs swapped: a + b (alpha 1) and a * b
// are exactly commutative in IEEE arithmetic, so `x + f(x)` (RegNet's residual, and many
// others') fuses with f as `f(x) + x` does.
bool commutative(const ir::Node& node) {
  if (node.op == "aten::mul") return true;
  if (node.op != "aten::add") return false;
  for (const auto& [name, value] : node.attrs)
    if (name == "alpha")
      return !value.bound() && ((value.kind == ir::AttrKind::Int && value.i == 1) ||
                                (value.kind == ir::AttrKind::Float && value.f == 1.0));
  return true;
}

}  // namespace

std::vector<ir::ValueId> inputs_fed_by(const ir::Node& consumer, ir::ValueId fed) {
  std::vector<ir::ValueId> in = consumer.inputs;
  if (!in.empty() && in[0] == fed) return in;
  if (in.size() >= 2 && in[1] == fed && commutative(consumer)) {
    std::swap(in[0], in[1]);
    return in;
  }
  return {};
}

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
    const std::vector<ir::ValueId> ins = inputs_fed_by(next, mid);
    if (ins.empty()) continue;
    // The consumer's other inputs must exist when the fused node runs, in the producer's
    // place: constants, graph inputs, or tensors made before the producer (a residual).
    bool rest_ready = !ir::is_sym_op(next.op) && !ir::is_sym_op(producer.op);
    for (size_t i = 1; i < ins.size(); ++i) {
      const ir::ValueId v = ins[i];
      if (v == ir::kNoValue) continue;
      const ir::Value& value = graph.values[v];
      rest_ready &= value.type == ir::ValueType::Tensor &&
                    (value.kind != ir::ValueKind::NodeOutput || value.producer < static_cast<int32_t>(n));
    }
    if (rest_ready && !ir::has_bound_attrs(next)) out[n] = consumer[mid];
  }
  return out;
}

std::vector<int32_t> fusion_chain(const ir::Graph& graph, const std::vector<int32_t>& consumers, size_t head,
                                  size_t max_len) {
  std::vector<int32_t> chain{static_cast<int32_t>(head)};
  while (chain.size() < max_len) {
    const int32_t next = consumers[static_cast<size_t>(chain.back())];
    if (next < 0) break;
    bool ready = true;  // fusable_consumers checked against the node before; the kernel runs at head
    const ir::Node& node = graph.nodes[static_cast<size_t>(next)];
    const std::vector<ir::ValueId> ins = inputs_fed_by(node, graph.nodes[static_cast<size_t>(chain.back())].outputs[0]);
    for (size_t i = 1; i < ins.size(); ++i) {
      const ir::ValueId v = ins[i];
      if (v == ir::kNoValue) continue;
      const ir::Value& value = graph.values[v];
      ready &= value.kind != ir::ValueKind::NodeOutput || value.producer < static_cast<int32_t>(head);
    }
    if (!ready) break;
    chain.push_back(next);
  }
  return chain;
}

std::string fused_op(const ir::Graph& graph, const std::vector<int32_t>& chain) {
  std::string op;
  for (int32_t n : chain) op += (op.empty() ? "" : "+") + graph.nodes[static_cast<size_t>(n)].op;
  return op;
}

ir::Node fused_node(const ir::Graph& graph, const std::vector<int32_t>& chain, const ir::Node* head_as_run) {
  const ir::Node& head = head_as_run != nullptr ? *head_as_run : graph.nodes[static_cast<size_t>(chain.front())];
  ir::Node f;
  f.name = head.name;
  f.op = fused_op(graph, chain);  // the graph's ops: resolving changes attributes only
  f.module_path = head.module_path;
  f.attrs = head.attrs;
  f.inputs = head.inputs;
  for (size_t k = 1; k < chain.size(); ++k) {
    const ir::Node& next = graph.nodes[static_cast<size_t>(chain[k])];
    const std::string prefix = k == 1 ? "post." : "post" + std::to_string(k) + ".";
    for (const auto& [name, value] : next.attrs) f.attrs.emplace_back(prefix + name, value);
    const std::vector<ir::ValueId> ins = inputs_fed_by(next, graph.nodes[static_cast<size_t>(chain[k - 1])].outputs[0]);
    f.inputs.insert(f.inputs.end(), ins.begin() + 1, ins.end());
  }
  f.outputs = graph.nodes[static_cast<size_t>(chain.back())].outputs;
  return f;
}

}  // namespace switchyard::exec
