// Graph construction, attribute lookup, and validate()'s topological sort.
#include "ir/graph.hpp"
#include "ir_test_util.hpp"

#include <gtest/gtest.h>

namespace switchyard::ir {
namespace {

using test::iota_tensor;
using test::kFloat32;

TEST(Graph, AddValuesAndNodes) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32, {-1, 8});
  const ValueId w = g.add_constant("w", iota_tensor({4, 8}));
  const int32_t n =
      g.add_node("fc", "aten::linear", {x, w, kNoValue}, {"y"}, {{"alpha", Attribute::of_int(2)}}, "encoder.fc");
  g.outputs.push_back(g.nodes[n].outputs[0]);

  ASSERT_EQ(g.values.size(), 3u);
  EXPECT_EQ(g.inputs, std::vector<ValueId>{x});
  EXPECT_EQ(g.values[x].kind, ValueKind::Input);
  EXPECT_EQ(g.values[x].shape, (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(g.values[w].kind, ValueKind::Constant);
  EXPECT_EQ(g.values[w].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(same_dtype(g.values[w].dtype, kFloat32));
  EXPECT_EQ(n, 0);
  const Node& node = g.nodes[0];
  EXPECT_EQ(node.name, "fc");
  EXPECT_EQ(node.op, "aten::linear");
  EXPECT_EQ(node.module_path, "encoder.fc");
  EXPECT_EQ(node.inputs, (std::vector<ValueId>{x, w, kNoValue}));
  ASSERT_EQ(node.outputs.size(), 1u);
  EXPECT_EQ(g.values[node.outputs[0]].name, "y");
  EXPECT_EQ(g.values[node.outputs[0]].kind, ValueKind::NodeOutput);
  EXPECT_EQ(g.values[node.outputs[0]].producer, 0);

  EXPECT_EQ(g.find_value("w"), w);
  EXPECT_EQ(g.find_value("y"), node.outputs[0]);
  EXPECT_EQ(g.find_value("nope"), kNoValue);
  EXPECT_NO_THROW(validate(g));
}

TEST(Graph, FindAttrAndKindNames) {
  Attributes attrs{{"dim", Attribute::of_int(-1)}, {"mode", Attribute::of_string("tanh")}};
  ASSERT_NE(find_attr(attrs, "dim"), nullptr);
  EXPECT_EQ(find_attr(attrs, "dim")->i, -1);
  EXPECT_EQ(find_attr(attrs, "mode")->s, "tanh");
  EXPECT_EQ(find_attr(attrs, "missing"), nullptr);

  EXPECT_STREQ(attr_kind_name(AttrKind::None), "none");
  EXPECT_STREQ(attr_kind_name(AttrKind::Int), "int");
  EXPECT_STREQ(attr_kind_name(AttrKind::Float), "float");
  EXPECT_STREQ(attr_kind_name(AttrKind::String), "string");
  EXPECT_STREQ(attr_kind_name(AttrKind::Ints), "ints");
  EXPECT_STREQ(attr_kind_name(AttrKind::Floats), "floats");
  EXPECT_STREQ(attr_kind_name(AttrKind::Tensor), "tensor");
}

// Nodes are appended in reverse data-flow order; validate() must sort them and fix producers.
TEST(Validate, SortsNodesTopologically) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32, {2});
  const ValueId b = g.add_value("b", ValueKind::NodeOutput);  // produced by node "second"
  const int32_t third = g.add_node("third", "aten::relu", {b}, {"c"});
  g.add_node("first", "aten::neg", {x}, {"a"});
  const int32_t second = g.add_node("second", "aten::exp", {g.find_value("a")}, {});
  g.nodes[second].outputs.push_back(b);
  g.outputs.push_back(g.nodes[third].outputs[0]);

  validate(g);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "first");
  EXPECT_EQ(g.nodes[1].name, "second");
  EXPECT_EQ(g.nodes[2].name, "third");
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (ValueId out : g.nodes[n].outputs) EXPECT_EQ(g.values[out].producer, static_cast<int32_t>(n));
  EXPECT_EQ(g.values[x].producer, -1);
}

// Independent nodes keep their file order: the sort is stable.
TEST(Validate, KeepsFileOrderOfIndependentNodes) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32);
  const char* names[] = {"n3", "n1", "n4", "n0", "n2"};
  for (const char* name : names) g.add_node(name, "aten::relu", {x}, {std::string(name) + ".out"});
  // "join" comes first in the file but consumes everything, so it must move to the end.
  Graph sorted = g;
  std::vector<ValueId> all;
  for (const Node& node : g.nodes) all.push_back(node.outputs[0]);
  sorted.add_node("join", "aten::cat", all, {"y"});
  std::rotate(sorted.nodes.begin(), sorted.nodes.end() - 1, sorted.nodes.end());
  validate(sorted);
  std::vector<std::string> order;
  for (const Node& node : sorted.nodes) order.push_back(node.name);
  EXPECT_EQ(order, (std::vector<std::string>{"n3", "n1", "n4", "n0", "n2", "join"}));
}

TEST(Validate, AcceptsOptionalInputsAndPassThroughOutputs) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32);
  const ValueId w = g.add_constant("w", iota_tensor({2, 2}));
  g.add_node("fc", "aten::linear", {x, w, kNoValue}, {"y"});
  g.outputs = {g.find_value("y"), x, w};  // a graph may return an input or a constant
  EXPECT_NO_THROW(validate(g));
}

TEST(Validate, EmptyGraphIsValid) {
  Graph g;
  EXPECT_NO_THROW(validate(g));
}

}  // namespace
}  // namespace switchyard::ir
