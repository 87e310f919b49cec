// validate()'s errors: each names the node or value at fault, and no input crashes it.
#include "ir/graph.hpp"
#include "ir_test_util.hpp"

#include <gtest/gtest.h>

#include <random>

namespace switchyard::ir {
namespace {

using test::iota_tensor;
using test::kFloat32;
using ::testing::HasSubstr;

std::string validation_error(Graph& g) {
  return test::error_message([&] { validate(g); }, ErrorKind::Graph);
}

// x -> relu "a" -> y, a valid starting point each test breaks in one way.
Graph small_graph() {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32, {2});
  g.add_node("a", "aten::relu", {x}, {"y"});
  g.outputs.push_back(g.find_value("y"));
  return g;
}

TEST(ValidateErrors, CycleNamesItsNodes) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32);
  const ValueId loop = g.add_value("loop", ValueKind::NodeOutput);
  g.add_node("entry", "aten::relu", {x}, {"e"});
  g.add_node("block.add", "aten::add", {g.find_value("e"), loop}, {"s"});
  g.add_node("block.mul", "aten::mul", {g.find_value("s")}, {});
  g.nodes.back().outputs.push_back(loop);
  const std::string message = validation_error(g);
  EXPECT_THAT(message, HasSubstr("cycle"));
  EXPECT_THAT(message, HasSubstr("'block.add'"));
  EXPECT_THAT(message, HasSubstr("'block.mul'"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("'entry'")));
}

TEST(ValidateErrors, SelfLoopIsACycle) {
  Graph g;
  const int32_t n = g.add_node("self", "aten::relu", {}, {"v"});
  g.nodes[n].inputs.push_back(g.find_value("v"));
  EXPECT_THAT(validation_error(g), HasSubstr("cycle through node 'self'"));
}

TEST(ValidateErrors, InputIdOutOfRange) {
  Graph g = small_graph();
  g.nodes[0].inputs.push_back(99);
  const std::string message = validation_error(g);
  EXPECT_THAT(message, HasSubstr("node 'a'"));
  EXPECT_THAT(message, HasSubstr("value id 99"));
  EXPECT_THAT(message, HasSubstr("out of range"));
  g.nodes[0].inputs.back() = -7;
  EXPECT_THAT(validation_error(g), HasSubstr("value id -7"));
}

TEST(ValidateErrors, DanglingInput) {
  Graph g = small_graph();
  g.nodes[0].inputs.push_back(g.add_value("ghost", ValueKind::NodeOutput));
  const std::string message = validation_error(g);
  EXPECT_THAT(message, HasSubstr("node 'a'"));
  EXPECT_THAT(message, HasSubstr("'ghost' is never produced"));
}

TEST(ValidateErrors, ValueProducedTwice) {
  Graph g = small_graph();
  g.add_node("b", "aten::neg", {g.find_value("x")}, {});
  g.nodes.back().outputs.push_back(g.find_value("y"));
  const std::string message = validation_error(g);
  EXPECT_THAT(message, HasSubstr("'y' is produced twice"));
  EXPECT_THAT(message, HasSubstr("node 'a'"));
  EXPECT_THAT(message, HasSubstr("node 'b'"));
}

TEST(ValidateErrors, NodeCannotProduceAGraphInputOrConstant) {
  Graph g = small_graph();
  g.nodes[0].outputs.push_back(g.find_value("x"));
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': output 'x' is a graph input"));
  Graph h = small_graph();
  h.nodes[0].outputs.push_back(h.add_constant("w", iota_tensor({1})));
  EXPECT_THAT(validation_error(h), HasSubstr("node 'a': output 'w' is a graph constant"));
}

TEST(ValidateErrors, OutputIdOutOfRange) {
  Graph g = small_graph();
  g.nodes[0].outputs.push_back(1234);
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': output #1 refers to value id 1234"));
}

TEST(ValidateErrors, DuplicateNodeNames) {
  Graph g = small_graph();
  g.add_node("a", "aten::neg", {g.find_value("x")}, {"z"});
  EXPECT_THAT(validation_error(g), HasSubstr("duplicate node name 'a'"));
}

TEST(ValidateErrors, DuplicateValueNames) {
  Graph g = small_graph();
  g.add_node("b", "aten::neg", {g.find_value("x")}, {"x"});
  const std::string message = validation_error(g);
  EXPECT_THAT(message, HasSubstr("duplicate value name 'x'"));
  EXPECT_THAT(message, HasSubstr("a graph input"));
  EXPECT_THAT(message, HasSubstr("node 'b'"));
}

TEST(ValidateErrors, GraphOutputNeverProduced) {
  Graph g = small_graph();
  g.outputs.push_back(g.add_value("result", ValueKind::NodeOutput));
  EXPECT_THAT(validation_error(g), HasSubstr("graph output 'result' is never produced"));
  g.outputs.back() = 42;
  EXPECT_THAT(validation_error(g), HasSubstr("graph output #1 refers to value id 42"));
}

TEST(ValidateErrors, EmptyNames) {
  Graph g = small_graph();
  g.nodes[0].op.clear();
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a' has an empty op name"));
  Graph h = small_graph();
  h.nodes[0].name.clear();
  EXPECT_THAT(validation_error(h), HasSubstr("node #0 (op 'aten::relu') has an empty name"));
  Graph k = small_graph();
  k.values[k.find_value("y")].name.clear();
  EXPECT_THAT(validation_error(k), HasSubstr("(an output of node 'a') has an empty name"));
}

TEST(ValidateErrors, AttributeProblems) {
  Graph g = small_graph();
  g.nodes[0].attrs = {{"dim", Attribute::of_int(1)}, {"", Attribute::of_int(2)}};
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': attribute #1 has an empty name"));
  g.nodes[0].attrs = {{"dim", Attribute::of_int(1)}, {"dim", Attribute::of_float(2)}};
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': attribute 'dim' appears twice"));
  g.nodes[0].attrs = {{"table", Attribute::of_tensor(Tensor())}};
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': attribute 'table' is of kind tensor but holds no tensor"));
  Attribute bad;
  bad.kind = static_cast<AttrKind>(42);
  g.nodes[0].attrs = {{"weird", bad}};
  EXPECT_THAT(validation_error(g), HasSubstr("node 'a': attribute 'weird' has unknown kind 42"));
}

TEST(ValidateErrors, GraphInputProblems) {
  Graph g = small_graph();
  g.inputs.push_back(g.inputs[0]);
  EXPECT_THAT(validation_error(g), HasSubstr("graph input 'x' is listed twice"));
  Graph h = small_graph();
  h.inputs.clear();
  EXPECT_THAT(validation_error(h), HasSubstr("'x' is of kind Input but is not a graph input"));
  Graph k = small_graph();
  k.inputs.push_back(k.find_value("y"));
  EXPECT_THAT(validation_error(k), HasSubstr("graph input 'y' is not a value of kind Input"));
  Graph m = small_graph();
  m.values[0].shape = {2, -5};
  EXPECT_THAT(validation_error(m), HasSubstr("graph input 'x' has invalid dimension -5"));
}

TEST(ValidateErrors, ConstantWithoutTensor) {
  Graph g = small_graph();
  g.add_constant("w", Tensor());
  EXPECT_THAT(validation_error(g), HasSubstr("constant 'w' has no tensor"));
}

TEST(ValidateErrors, FailedValidationLeavesGraphUnchanged) {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32);
  const ValueId a = g.add_value("a", ValueKind::NodeOutput);
  g.add_node("late", "aten::relu", {a}, {"b"});
  g.add_node("early", "aten::neg", {x}, {});
  g.nodes.back().outputs.push_back(a);
  g.outputs.push_back(g.add_value("missing", ValueKind::NodeOutput));
  validation_error(g);
  EXPECT_EQ(g.nodes[0].name, "late");
  EXPECT_EQ(g.nodes[1].name, "early");
}

// Random graphs with ids in and out of range: validate() either accepts or throws Error.
TEST(ValidateErrors, RandomGraphsNeverCrash) {
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    Graph g;
    const int value_count = 1 + static_cast<int>(rng() % 8);
    auto random_id = [&] { return static_cast<ValueId>(static_cast<int>(rng() % (value_count + 4)) - 2); };
    for (int v = 0; v < value_count; ++v) {
      const auto kind = static_cast<ValueKind>(rng() % 3);
      std::string name = "v" + std::to_string(rng() % 10);
      if (kind == ValueKind::Input)
        g.add_input(name, kFloat32);
      else if (kind == ValueKind::Constant)
        g.add_constant(name, rng() % 4 ? iota_tensor({1}) : Tensor());
      else
        g.add_value(name, ValueKind::NodeOutput);
    }
    const int node_count = static_cast<int>(rng() % 6);
    for (int n = 0; n < node_count; ++n) {
      Node node;
      node.name = "n" + std::to_string(rng() % 8);
      node.op = rng() % 8 ? "aten::relu" : "";
      for (unsigned i = rng() % 3; i > 0; --i) node.inputs.push_back(random_id());
      for (unsigned o = rng() % 3; o > 0; --o) node.outputs.push_back(random_id());
      if (rng() % 4 == 0) node.attrs.push_back({rng() % 2 ? "k" : "", Attribute::of_int(1)});
      g.nodes.push_back(node);
    }
    for (unsigned o = rng() % 3; o > 0; --o) g.outputs.push_back(random_id());
    if (rng() % 4 == 0) g.inputs.push_back(random_id());
    try {
      validate(g);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Graph);
    }
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace switchyard::ir
