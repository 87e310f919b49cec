// Graph construction helpers. They only append; validate() does all the checking, so
// importers can build a graph in any order and get one complete report at the end.
#include "ir/graph.hpp"

namespace switchyard::ir {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::None: return "none";
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::Tensor: return "tensor";
  }
  return "unknown";
}

const Attribute* find_attr(const Attributes& attrs, const std::string& name) {
  for (const auto& [attr_name, attr] : attrs)
    if (attr_name == name) return &attr;
  return nullptr;
}

ValueId Graph::add_value(std::string name, ValueKind kind) {
  Value value;
  value.name = std::move(name);
  value.kind = kind;
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::add_input(std::string name, DLDataType dtype, std::vector<int64_t> shape) {
  ValueId id = add_value(std::move(name), ValueKind::Input);
  values[id].dtype = dtype;
  values[id].shape = std::move(shape);
  inputs.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor weight) {
  ValueId id = add_value(std::move(name), ValueKind::Constant);
  Value& value = values[id];
  if (weight.defined()) {
    value.dtype = weight.dtype();
    value.shape = weight.shape();
  }
  value.constant = std::move(weight);
  return id;
}

int32_t Graph::add_node(std::string name, std::string op, std::vector<ValueId> node_inputs,
                        std::vector<std::string> output_names, Attributes attrs, std::string module_path) {
  const auto index = static_cast<int32_t>(nodes.size());
  Node node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.module_path = std::move(module_path);
  node.attrs = std::move(attrs);
  node.inputs = std::move(node_inputs);
  node.outputs.reserve(output_names.size());
  for (auto& output_name : output_names) {
    ValueId id = add_value(std::move(output_name), ValueKind::NodeOutput);
    values[id].producer = index;
    node.outputs.push_back(id);
  }
  nodes.push_back(std::move(node));
  return index;
}

bool has_bound_attrs(const Node& node) {
  for (const auto& [name, attr] : node.attrs)
    if (attr.bound()) return true;
  return false;
}

ValueId Graph::add_sym(std::string name, std::string op, std::vector<ValueId> node_inputs, Attributes attrs,
                       std::string output_name) {
  const bool makes_tensor = op == "sym::tensor";
  if (output_name.empty()) output_name = name;
  const int32_t n =
      add_node(std::move(name), std::move(op), std::move(node_inputs), {std::move(output_name)}, std::move(attrs));
  const ValueId out = nodes[static_cast<size_t>(n)].outputs[0];
  values[static_cast<size_t>(out)].type = makes_tensor ? ValueType::Tensor : ValueType::Scalar;
  return out;
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<ValueId>(i);
  return kNoValue;
}

void remove_nodes(Graph& graph, const std::vector<bool>& removed) {
  std::vector<Node> kept;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (!removed[n]) kept.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(kept);
  for (Value& v : graph.values)
    if (v.kind == ValueKind::NodeOutput) v.producer = -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ValueId v : graph.nodes[n].outputs) graph.values[static_cast<size_t>(v)].producer = static_cast<int32_t>(n);
}

}  // namespace switchyard::ir
