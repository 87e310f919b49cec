// The graph IR: values, nodes, constants, graph inputs and outputs. Importers build it,
// validate() checks it, selection and the executor read it. Nothing here runs kernels.
#pragma once

#include <switchyard/tensor.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::ir {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an absent optional input (e.g. bias=None)

enum class AttrKind { None, Int, Float, String, Ints, Floats, Tensor };
const char* attr_kind_name(AttrKind kind);

// A non-tensor argument of a node (ATen schema names: "dim", "alpha", ...), or a small
// constant tensor. Booleans are stored as Int 0/1.
//
// A bound attribute (`ref` set) takes its value at run time from the scalar value `ref`
// (computed by sym:: nodes from the actual input shapes, see ir/sym.hpp); `kind` is then
// the kind the node expects (Int, Float, Ints or Floats) and the other fields are unused.
// The executor resolves bound attributes once per input-shape signature.
struct Attribute {
  AttrKind kind = AttrKind::None;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  Tensor tensor;
  int32_t ref = -1;  // a ValueId of a scalar value, or -1 (a literal)

  bool bound() const { return ref >= 0; }

  static Attribute none() { return {}; }
  static Attribute of_int(int64_t v) {
    Attribute a;
    a.kind = AttrKind::Int;
    a.i = v;
    return a;
  }
  static Attribute of_float(double v) {
    Attribute a;
    a.kind = AttrKind::Float;
    a.f = v;
    return a;
  }
  static Attribute of_string(std::string v) {
    Attribute a;
    a.kind = AttrKind::String;
    a.s = std::move(v);
    return a;
  }
  static Attribute of_ints(std::vector<int64_t> v) {
    Attribute a;
    a.kind = AttrKind::Ints;
    a.ints = std::move(v);
    return a;
  }
  static Attribute of_floats(std::vector<double> v) {
    Attribute a;
    a.kind = AttrKind::Floats;
    a.floats = std::move(v);
    return a;
  }
  static Attribute of_tensor(Tensor v) {
    Attribute a;
    a.kind = AttrKind::Tensor;
    a.tensor = std::move(v);
    return a;
  }
  // Bound to scalar value `value`, which must hold (or convert to) `expected`.
  static Attribute of_ref(int32_t value, AttrKind expected) {
    Attribute a;
    a.kind = expected;
    a.ref = value;
    return a;
  }
};

// Attributes keep their file order; nodes have a handful, so a vector beats a map.
using Attributes = std::vector<std::pair<std::string, Attribute>>;
const Attribute* find_attr(const Attributes& attrs, const std::string& name);

enum class ValueKind { Input, Constant, NodeOutput };

// The sizes an input dimension may take, both ends included (a torch.export Dim's range).
struct DimRange {
  int64_t min = 0;
  int64_t max = INT64_MAX;
  bool bounded() const { return min > 0 || max < INT64_MAX; }
};

// What a value holds at run time: a tensor, or a scalar (an int, float or list of them,
// held as an Attribute) that sym:: nodes compute from tensor shapes (ir/sym.hpp).
enum class ValueType { Tensor, Scalar };

struct Value {
  std::string name;
  ValueKind kind = ValueKind::NodeOutput;
  ValueType type = ValueType::Tensor;  // Scalar: a NodeOutput of a sym:: node
  Tensor constant;                     // ValueKind::Constant only: the weight, shared not copied
  int32_t producer = -1;               // NodeOutput only: index into Graph::nodes
  DLDataType dtype{kDLFloat, 32, 1};   // declared dtype of inputs and constants
  std::vector<int64_t> shape;          // declared shape of inputs (-1 = any size); may be empty
  bool rank_known = false;             // inputs: `shape` gives the rank even where it is empty (0-D)
  // Inputs: a name per dimension for messages and `plan` ("B", "S"); "" where none.
  std::vector<std::string> dim_names;
  // Inputs: per dimension, the sizes it may take (empty, or one per dimension); a run
  // outside them is refused. From a torch.export program's range constraints.
  std::vector<DimRange> dim_ranges;
  // Inputs: a shape the model is known to take (e.g. the traced one, from an optional
  // hint), for `plan` without inputs and for sample inputs; empty if none is known.
  std::vector<int64_t> example_shape;
};

struct Node {
  std::string name;         // unique, e.g. "layer1.0.conv1" or "add_3"
  std::string op;           // e.g. "aten::linear"
  std::string module_path;  // e.g. "layer1.0" (may be empty)
  Attributes attrs;
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
};

// The values a node depends on: its inputs, then the scalar values its bound attributes
// read. Both must be computed before the node runs.
template <typename F>
void for_each_dependency(const Node& node, F&& f) {
  for (ValueId v : node.inputs)
    if (v != kNoValue) f(v);
  for (const auto& [name, attr] : node.attrs)
    if (attr.bound()) f(static_cast<ValueId>(attr.ref));
}
bool has_bound_attrs(const Node& node);

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;       // topological order after validate()
  std::vector<ValueId> inputs;   // graph inputs, in call order
  std::vector<ValueId> outputs;  // graph outputs, in return order

  ValueId add_value(std::string name, ValueKind kind);
  ValueId add_input(std::string name, DLDataType dtype, std::vector<int64_t> shape = {});
  ValueId add_constant(std::string name, Tensor weight);
  // Appends a node; creates its output values named `output_names`. Returns its index.
  int32_t add_node(std::string name, std::string op, std::vector<ValueId> inputs, std::vector<std::string> output_names,
                   Attributes attrs = {}, std::string module_path = {});
  ValueId find_value(const std::string& name) const;  // kNoValue if absent
  // Appends a sym:: node (ir/sym.hpp) whose one output is a scalar value (or, for
  // sym::tensor, a tensor). Returns the output.
  ValueId add_sym(std::string name, std::string op, std::vector<ValueId> inputs, Attributes attrs = {},
                  std::string output_name = {});
};

// Drops the nodes marked in `removed` (one flag per node), keeping the others in order, and
// renumbers the values' producers. For rewrites that fold nodes into others.
void remove_nodes(Graph& graph, const std::vector<bool>& removed);

// Checks the graph and sorts its nodes topologically. Throws switchyard::Error (ErrorKind::Graph) with a message
// naming the node or value at fault: cycles, dangling values, duplicate names, values
// produced twice, outputs never produced, bad attributes.
void validate(Graph& graph);

}  // namespace switchyard::ir
