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
struct Attribute {
  AttrKind kind = AttrKind::None;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  Tensor tensor;

  static Attribute none() { return {}; }
  static Attribute of_int(int64_t v) { Attribute a; a.kind = AttrKind::Int; a.i = v; return a; }
  static Attribute of_float(double v) { Attribute a; a.kind = AttrKind::Float; a.f = v; return a; }
  static Attribute of_string(std::string v) {
    Attribute a; a.kind = AttrKind::String; a.s = std::move(v); return a;
  }
  static Attribute of_ints(std::vector<int64_t> v) {
    Attribute a; a.kind = AttrKind::Ints; a.ints = std::move(v); return a;
  }
  static Attribute of_floats(std::vector<double> v) {
    Attribute a; a.kind = AttrKind::Floats; a.floats = std::move(v); return a;
  }
  static Attribute of_tensor(Tensor v) {
    Attribute a; a.kind = AttrKind::Tensor; a.tensor = std::move(v); return a;
  }
};

// Attributes keep their file order; nodes have a handful, so a vector beats a map.
using Attributes = std::vector<std::pair<std::string, Attribute>>;
const Attribute* find_attr(const Attributes& attrs, const std::string& name);

enum class ValueKind { Input, Constant, NodeOutput };

struct Value {
  std::string name;
  ValueKind kind = ValueKind::NodeOutput;
  Tensor constant;              // ValueKind::Constant only: the weight, shared not copied
  int32_t producer = -1;        // NodeOutput only: index into Graph::nodes
  DLDataType dtype{kDLFloat, 32, 1};  // declared dtype of inputs and constants
  std::vector<int64_t> shape;   // declared shape of inputs (-1 = any size); may be empty
};

struct Node {
  std::string name;             // unique, e.g. "layer1.0.conv1" or "add_3"
  std::string op;               // e.g. "aten::linear"
  std::string module_path;      // e.g. "layer1.0" (may be empty)
  Attributes attrs;
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;       // topological order after validate()
  std::vector<ValueId> inputs;   // graph inputs, in call order
  std::vector<ValueId> outputs;  // graph outputs, in return order

  ValueId add_value(std::string name, ValueKind kind);
  ValueId add_input(std::string name, DLDataType dtype, std::vector<int64_t> shape = {});
  ValueId add_constant(std::string name, Tensor weight);
  // Appends a node; creates its output values named `output_names`. Returns its index.
  int32_t add_node(std::string name, std::string op, std::vector<ValueId> inputs,
                   std::vector<std::string> output_names, Attributes attrs = {},
                   std::string module_path = {});
  ValueId find_value(const std::string& name) const;  // kNoValue if absent
};

// Checks the graph and sorts its nodes topologically. Throws switchyard::Error (ErrorKind::Graph) with a message
// naming the node or value at fault: cycles, dangling values, duplicate names, values
// produced twice, outputs never produced, bad attributes.
void validate(Graph& graph);

}  // namespace switchyard::ir
