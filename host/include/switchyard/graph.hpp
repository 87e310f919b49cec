// switchyard::Graph: a model as data. Read one from a file (a portable .json graph, or a
// TorchScript .pt once torchscript::register_loader() ran), or build one node by node,
// write it as a portable graph file, or run it with Runtime::load(graph).
//
//   switchyard::Graph g;
//   auto x = g.add_input("x", {kDLFloat, 32, 1}, {-1, 8});
//   auto w = g.add_constant("w", weight);
//   auto y = g.add_node("fc", "aten::linear", {x, w, Graph::kNoValue}, {"y"})[0];
//   g.add_output(y);
//   auto model = runtime.load(std::move(g));   // validates; throws Error (Graph)
//
// Ops and attributes use ATen's schema names ("aten::add", "alpha"); docs/graph-format.md
// lists what the portable format holds.
#pragma once

#include <switchyard/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace switchyard {

// A node's non-tensor argument, or a small constant tensor. Booleans are int64 0/1;
// std::monostate is None (an argument given as None). A plain `1` is int64, `1.0` double.
using Attribute =
    std::variant<std::monostate, int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, Tensor>;
// In call order; names are unique per node.
using Attributes = std::vector<std::pair<std::string, Attribute>>;

// A graph input as declared: dtype (kAnyDtype where the model pins none) and shape (-1
// for a free dimension; empty if unknown).
struct ValueInfo {
  std::string name;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
};

namespace detail {
struct GraphAccess;  // the host's own way in (host/src/api/internal.hpp)
}

class Graph {
 public:
  using ValueId = int32_t;                 // a value of this graph
  static constexpr ValueId kNoValue = -1;  // an absent optional input (e.g. bias=None)

  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  Graph(const Graph&);  // shares the weights, copies the rest
  Graph& operator=(const Graph&);

  // Reads a model file by its extension (.json portable graph, or a registered format such
  // as .pt) and validates it. Throws Error naming the file (Io) or the node at fault (Graph).
  static Graph read(const std::string& path);
  // Writes the portable graph format: `json_path` and the weights beside it (.bin).
  // Validates first. Throws Error (Io, Graph).
  void save(const std::string& json_path) const;
  // Where save() puts the weights for `json_path`.
  static std::string weights_path_for(const std::string& json_path);

  // ---- building (nothing is checked until validate(), save() or Runtime::load) ----
  ValueId add_input(std::string name, DLDataType dtype, std::vector<int64_t> shape = {});
  ValueId add_constant(std::string name, Tensor weight);  // shared, not copied
  // Appends a node and makes its outputs, named `output_names`; returns their ids.
  std::vector<ValueId> add_node(std::string name, std::string op, std::vector<ValueId> inputs,
                                std::vector<std::string> output_names, Attributes attrs = {},
                                std::string module_path = {});
  void add_output(ValueId value);
  ValueId find_value(const std::string& name) const;  // kNoValue if absent
  // Checks the graph and sorts its nodes topologically. Throws Error (Graph) naming the
  // node or value at fault.
  void validate();

  // ---- what it holds ----
  std::vector<ValueInfo> inputs() const;
  std::vector<std::string> output_names() const;
  std::vector<std::string> node_ops() const;  // per node, in node order
  size_t num_nodes() const;
  size_t num_constants() const;

  struct Impl;

 private:
  friend struct detail::GraphAccess;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard
