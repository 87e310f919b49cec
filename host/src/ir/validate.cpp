// validate(): checks a graph built by an importer and sorts its nodes topologically.
// Every id is range-checked before use, so any graph, however broken, gives an Error
// naming the node or value at fault and never a crash. The graph changes only on success.
#include "ir/graph.hpp"
#include "ir/sym.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace switchyard::ir {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorKind::Graph, message); }

// Names a node in messages, even one whose name is empty.
std::string node_label(const Graph& graph, size_t index) {
  const Node& node = graph.nodes[index];
  if (node.name.empty()) return "node #" + std::to_string(index) + " (op '" + node.op + "')";
  return "node '" + node.name + "'";
}

// Names a value in messages, even one whose name is empty.
std::string value_label(const Graph& graph, ValueId id) {
  const Value& value = graph.values[static_cast<size_t>(id)];
  if (value.name.empty()) return "value #" + std::to_string(id);
  return "'" + value.name + "'";
}

bool in_range(const Graph& graph, ValueId id) { return id >= 0 && static_cast<size_t>(id) < graph.values.size(); }

std::string out_of_range(const Graph& graph, ValueId id) {
  return "value id " + std::to_string(id) + ", which is out of range (the graph has " +
         std::to_string(graph.values.size()) + " values)";
}

void check_graph_inputs(const Graph& graph) {
  std::unordered_set<ValueId> seen;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ValueId id = graph.inputs[i];
    if (!in_range(graph, id)) fail("graph input #" + std::to_string(i) + " refers to " + out_of_range(graph, id));
    const Value& value = graph.values[static_cast<size_t>(id)];
    if (value.kind != ValueKind::Input) fail("graph input " + value_label(graph, id) + " is not a value of kind Input");
    if (!seen.insert(id).second) fail("graph input " + value_label(graph, id) + " is listed twice");
    for (int64_t dim : value.shape)
      if (dim < -1)
        fail("graph input " + value_label(graph, id) + " has invalid dimension " + std::to_string(dim) + " in shape " +
             shape_string(value.shape));
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const auto id = static_cast<ValueId>(v);
    const Value& value = graph.values[v];
    if (value.kind == ValueKind::Input && seen.count(id) == 0)
      fail("value " + value_label(graph, id) + " is of kind Input but is not a graph input");
    if (value.kind == ValueKind::Constant && !value.constant.defined())
      fail("constant " + value_label(graph, id) + " has no tensor");
  }
}

void check_attributes(const Graph& graph, size_t node_index) {
  const Node& node = graph.nodes[node_index];
  std::unordered_set<std::string> names;
  for (size_t a = 0; a < node.attrs.size(); ++a) {
    const auto& [name, attr] = node.attrs[a];
    const std::string where = node_label(graph, node_index) + ": attribute";
    if (name.empty()) fail(where + " #" + std::to_string(a) + " has an empty name");
    if (!names.insert(name).second) fail(where + " '" + name + "' appears twice");
    const int kind = static_cast<int>(attr.kind);
    if (kind < static_cast<int>(AttrKind::None) || kind > static_cast<int>(AttrKind::Tensor))
      fail(where + " '" + name + "' has unknown kind " + std::to_string(kind));
    if (attr.kind == AttrKind::Tensor && !attr.tensor.defined() && !attr.bound())
      fail(where + " '" + name + "' is of kind tensor but holds no tensor");
    if (attr.bound()) {
      if (!in_range(graph, attr.ref)) fail(where + " '" + name + "' is bound to " + out_of_range(graph, attr.ref));
      if (attr.kind != AttrKind::Int && attr.kind != AttrKind::Float && attr.kind != AttrKind::Ints &&
          attr.kind != AttrKind::Floats)
        fail(where + " '" + name + "' is bound to a value but expects " + attr_kind_name(attr.kind) +
             " (a bound attribute expects int, float, ints or floats)");
      if (is_sym_op(node.op)) fail(where + " '" + name + "' is bound to a value; sym ops take values as inputs");
    }
  }
}

// Checks node names, ops, attributes and outputs; returns each value's producing node.
std::vector<int32_t> check_nodes(const Graph& graph) {
  std::vector<int32_t> producers(graph.values.size(), -1);
  std::unordered_map<std::string, size_t> node_names;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.name.empty()) fail(node_label(graph, n) + " has an empty name");
    auto [it, inserted] = node_names.emplace(node.name, n);
    if (!inserted)
      fail("duplicate node name '" + node.name + "' (nodes #" + std::to_string(it->second) + " and #" +
           std::to_string(n) + ")");
    if (node.op.empty()) fail(node_label(graph, n) + " has an empty op name");
    check_attributes(graph, n);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ValueId id = node.outputs[o];
      if (!in_range(graph, id))
        fail(node_label(graph, n) + ": output #" + std::to_string(o) + " refers to " + out_of_range(graph, id));
      const Value& value = graph.values[static_cast<size_t>(id)];
      if (value.kind != ValueKind::NodeOutput)
        fail(node_label(graph, n) + ": output " + value_label(graph, id) + " is a graph " +
             (value.kind == ValueKind::Input ? "input" : "constant") + " and cannot be produced by a node");
      int32_t& producer = producers[static_cast<size_t>(id)];
      if (producer >= 0)
        fail("value " + value_label(graph, id) + " is produced twice: by " +
             node_label(graph, static_cast<size_t>(producer)) + " and by " + node_label(graph, n));
      producer = static_cast<int32_t>(n);
    }
  }
  return producers;
}

std::string value_origin(const Graph& graph, const std::vector<int32_t>& producers, size_t v) {
  switch (graph.values[v].kind) {
    case ValueKind::Input: return "a graph input";
    case ValueKind::Constant: return "a constant";
    case ValueKind::NodeOutput: break;
  }
  if (producers[v] < 0) return "an unproduced value";
  return "an output of " + node_label(graph, static_cast<size_t>(producers[v]));
}

void check_value_names(const Graph& graph, const std::vector<int32_t>& producers) {
  std::unordered_map<std::string, size_t> names;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const std::string& name = graph.values[v].name;
    if (name.empty())
      fail("value #" + std::to_string(v) + " (" + value_origin(graph, producers, v) + ") has an empty name");
    auto [it, inserted] = names.emplace(name, v);
    if (!inserted)
      fail("duplicate value name '" + name + "': " + value_origin(graph, producers, it->second) + " and " +
           value_origin(graph, producers, v));
  }
}

void check_node_inputs(const Graph& graph, const std::vector<int32_t>& producers) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      if (id == kNoValue) continue;  // an absent optional input
      if (!in_range(graph, id))
        fail(node_label(graph, n) + ": input #" + std::to_string(i) + " refers to " + out_of_range(graph, id));
      const auto v = static_cast<size_t>(id);
      if (graph.values[v].kind == ValueKind::NodeOutput && producers[v] < 0)
        fail(node_label(graph, n) + ": input " + value_label(graph, id) + " is never produced (dangling value)");
    }
    for (const auto& [name, attr] : node.attrs)  // bound attributes, range-checked already
      if (attr.bound() && (graph.values[static_cast<size_t>(attr.ref)].kind != ValueKind::NodeOutput ||
                           producers[static_cast<size_t>(attr.ref)] < 0))
        fail(node_label(graph, n) + ": attribute '" + name + "' is bound to " + value_label(graph, attr.ref) +
             ", which no sym node produces");
  }
}

// A sym node's output is a scalar (a tensor for sym::tensor); everything else makes tensors.
ValueType type_of_output(const Node& node) {
  return is_sym_op(node.op) && node.op != "sym::tensor" ? ValueType::Scalar : ValueType::Tensor;
}

// True for tensor values computed from constants and sizes alone (no graph input's data).
std::vector<char> shape_derived(const Graph& graph, const std::vector<int32_t>& order) {
  std::vector<char> derived(graph.values.size(), 0);
  for (size_t v = 0; v < graph.values.size(); ++v) derived[v] = graph.values[v].kind == ValueKind::Constant;
  for (int32_t n : order) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    bool ok = node.op == "sym::tensor" || !is_sym_op(node.op);
    if (!is_sym_op(node.op))
      for (ValueId id : node.inputs) ok = ok && (id == kNoValue || derived[static_cast<size_t>(id)]);
    for (ValueId id : node.outputs) derived[static_cast<size_t>(id)] = ok;
  }
  return derived;
}

// The static kinds of scalar values, and the type rules of sym nodes and bound attributes.
void check_types(const Graph& graph, const std::vector<int32_t>& order) {
  std::vector<AttrKind> kinds(graph.values.size(), AttrKind::Tensor);
  std::vector<char> scalar(graph.values.size(), 0);
  for (const Node& node : graph.nodes)
    if (type_of_output(node) == ValueType::Scalar)
      for (ValueId id : node.outputs) scalar[static_cast<size_t>(id)] = 1;
  std::vector<char> derived;
  for (int32_t n : order) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    const std::string who = node_label(graph, static_cast<size_t>(n));
    if (is_sym_op(node.op)) {
      std::vector<AttrKind> in;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.inputs[i] == kNoValue)
          fail(who + ": sym ops take no absent inputs (input #" + std::to_string(i) + ")");
        in.push_back(kinds[static_cast<size_t>(node.inputs[i])]);
      }
      const AttrKind out = sym_result_kind(node, in);
      if (node.op == "sym::item") {
        if (derived.empty()) derived = shape_derived(graph, order);
        if (!derived[static_cast<size_t>(node.inputs[0])])
          fail(who + ": sym::item reads " + value_label(graph, node.inputs[0]) +
               ", which depends on the data of a graph input; sizes are evaluated once per input shape, so "
               "they may come from sizes and constants only");
      }
      if (out != AttrKind::Tensor) kinds[static_cast<size_t>(node.outputs[0])] = out;
      continue;
    }
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != kNoValue && scalar[static_cast<size_t>(node.inputs[i])])
        fail(who + ": input #" + std::to_string(i) + " " + value_label(graph, node.inputs[i]) +
             " is a scalar; kernels read tensors (make it one with sym::tensor)");
    for (const auto& [name, attr] : node.attrs) {
      if (!attr.bound()) continue;
      if (!scalar[static_cast<size_t>(attr.ref)])
        fail(who + ": attribute '" + name + "' is bound to " + value_label(graph, attr.ref) +
             ", which is a tensor, not a scalar");
      const AttrKind have = kinds[static_cast<size_t>(attr.ref)], want = attr.kind;
      // AttrKind::None: a number known only at run time (sym::item); bind_scalar checks it then.
      const bool fits =
          have == want || have == AttrKind::None || (want == AttrKind::Float && have == AttrKind::Int) ||
          (want == AttrKind::Ints && have == AttrKind::Int) ||
          (want == AttrKind::Floats && (have == AttrKind::Ints || have == AttrKind::Int || have == AttrKind::Float));
      if (!fits)
        fail(who + ": attribute '" + name + "' expects " + attr_kind_name(want) + " but " +
             value_label(graph, attr.ref) + " is " + attr_kind_name(have));
    }
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    if (scalar[static_cast<size_t>(graph.outputs[i])])
      fail("graph output " + value_label(graph, graph.outputs[i]) + " is a scalar; models return tensors");
}

void check_graph_outputs(const Graph& graph, const std::vector<int32_t>& producers) {
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const ValueId id = graph.outputs[i];
    if (!in_range(graph, id)) fail("graph output #" + std::to_string(i) + " refers to " + out_of_range(graph, id));
    const auto v = static_cast<size_t>(id);
    if (graph.values[v].kind == ValueKind::NodeOutput && producers[v] < 0)
      fail("graph output " + value_label(graph, id) + " is never produced");
  }
}

// Walks producer edges back from a node left over by Kahn's algorithm until a node repeats:
// every leftover node has a leftover producer, so the walk always closes a cycle.
[[noreturn]] void fail_with_cycle(const Graph& graph, const std::vector<int32_t>& producers,
                                  const std::vector<int32_t>& pending_inputs) {
  size_t start = 0;
  while (pending_inputs[start] == 0) ++start;
  std::vector<size_t> walk;
  std::vector<int> position(graph.nodes.size(), -1);
  size_t current = start;
  while (position[current] < 0) {
    position[current] = static_cast<int>(walk.size());
    walk.push_back(current);
    size_t next = current;
    for_each_dependency(graph.nodes[current], [&](ValueId id) {
      const int32_t producer = producers[static_cast<size_t>(id)];
      if (next == current && producer >= 0 && pending_inputs[static_cast<size_t>(producer)] > 0)
        next = static_cast<size_t>(producer);
    });
    current = next;
  }
  // walk[position[current]..] is the cycle against data flow; print it along data flow.
  std::vector<size_t> cycle(walk.begin() + position[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string path;
  for (size_t n : cycle) path += "'" + graph.nodes[n].name + "' -> ";
  path += "'" + graph.nodes[cycle.front()].name + "'";
  fail("the graph has a cycle through node '" + graph.nodes[cycle.front()].name + "': " + path);
}

// Kahn's algorithm with a min-heap of node indices: among ready nodes the one earliest in
// file order runs first, so an already sorted graph keeps its order exactly.
std::vector<int32_t> topological_order(const Graph& graph, const std::vector<int32_t>& producers) {
  const size_t count = graph.nodes.size();
  std::vector<int32_t> pending_inputs(count, 0);
  std::vector<std::vector<int32_t>> consumers(count);
  for (size_t n = 0; n < count; ++n)
    for_each_dependency(graph.nodes[n], [&](ValueId id) {
      const int32_t producer = producers[static_cast<size_t>(id)];
      if (producer < 0) return;  // graph input or constant: always ready
      consumers[static_cast<size_t>(producer)].push_back(static_cast<int32_t>(n));
      ++pending_inputs[n];
    });
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (size_t n = 0; n < count; ++n)
    if (pending_inputs[n] == 0) ready.push(static_cast<int32_t>(n));
  std::vector<int32_t> order;
  order.reserve(count);
  while (!ready.empty()) {
    const int32_t n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int32_t consumer : consumers[static_cast<size_t>(n)])
      if (--pending_inputs[static_cast<size_t>(consumer)] == 0) ready.push(consumer);
  }
  if (order.size() != count) fail_with_cycle(graph, producers, pending_inputs);
  return order;
}

}  // namespace

void validate(Graph& graph) {
  check_graph_inputs(graph);
  const std::vector<int32_t> producers = check_nodes(graph);
  check_value_names(graph, producers);
  check_node_inputs(graph, producers);
  check_graph_outputs(graph, producers);
  const std::vector<int32_t> order = topological_order(graph, producers);
  check_types(graph, order);

  // All checks passed: reorder the nodes and make every producer index point at the new order.
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (int32_t n : order) sorted.push_back(std::move(graph.nodes[static_cast<size_t>(n)]));
  graph.nodes = std::move(sorted);
  for (Value& value : graph.values) value.producer = -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ValueId id : graph.nodes[n].outputs) {
      graph.values[static_cast<size_t>(id)].producer = static_cast<int32_t>(n);
      graph.values[static_cast<size_t>(id)].type = type_of_output(graph.nodes[n]);
    }
}

}  // namespace switchyard::ir
