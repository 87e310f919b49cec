// sym:: ops (ir/sym.hpp): Python's arithmetic on sizes, lists, errors that name the node,
// and validate()'s typing of scalar values and bound attributes.
#include "ir/graph.hpp"
#include "ir/sym.hpp"
#include "ir_test_util.hpp"

#include <gtest/gtest.h>

namespace switchyard::ir {
namespace {

using test::kFloat32;
using ::testing::HasSubstr;

Node sym_node(const std::string& op, Attributes attrs = {}) {
  Node n;
  n.name = "s";
  n.op = op;
  n.attrs = std::move(attrs);
  n.outputs = {0};
  return n;
}

Attribute eval(const std::string& op, std::vector<Attribute> in, Attributes attrs = {}) {
  std::vector<SymArg> args;
  for (const Attribute& a : in) args.push_back(SymArg{&a, nullptr});
  return eval_sym(sym_node(op, std::move(attrs)), args);
}

int64_t ival(const Attribute& a) {
  EXPECT_EQ(a.kind, AttrKind::Int);
  return a.i;
}

TEST(Sym, IntegerDivisionAndModuloFollowPython) {
  auto I = Attribute::of_int;
  EXPECT_EQ(ival(eval("sym::floordiv", {I(7), I(2)})), 3);
  EXPECT_EQ(ival(eval("sym::floordiv", {I(-7), I(2)})), -4);
  EXPECT_EQ(ival(eval("sym::floordiv", {I(7), I(-2)})), -4);
  EXPECT_EQ(ival(eval("sym::mod", {I(-7), I(3)})), 2);
  EXPECT_EQ(ival(eval("sym::mod", {I(7), I(-3)})), -2);
  const Attribute d = eval("sym::div", {I(7), I(2)});
  EXPECT_EQ(d.kind, AttrKind::Float);
  EXPECT_DOUBLE_EQ(d.f, 3.5);
  const Attribute p = eval("sym::pow", {I(2), I(10)});
  EXPECT_EQ(p.kind, AttrKind::Float);
  EXPECT_DOUBLE_EQ(p.f, 1024.0);
}

TEST(Sym, MixingIntsAndFloatsGivesFloats) {
  const Attribute m = eval("sym::mul", {Attribute::of_int(3), Attribute::of_float(0.5)});
  EXPECT_EQ(m.kind, AttrKind::Float);
  EXPECT_DOUBLE_EQ(m.f, 1.5);
  EXPECT_EQ(ival(eval("sym::floor", {Attribute::of_float(-1.5)})), -2);
  EXPECT_EQ(ival(eval("sym::ceil", {Attribute::of_float(1.2)})), 2);
  EXPECT_EQ(ival(eval("sym::int", {Attribute::of_float(-1.7)})), -1);
  EXPECT_DOUBLE_EQ(eval("sym::round", {Attribute::of_float(2.5)}).f, 2.0);  // half to even
  EXPECT_DOUBLE_EQ(eval("sym::sqrt", {Attribute::of_int(64)}).f, 8.0);
}

TEST(Sym, ListsAreBuiltIndexedSlicedAndJoined) {
  const Attribute l = eval("sym::list", {Attribute::of_int(2), Attribute::of_int(-1), Attribute::of_int(64)});
  EXPECT_EQ(l.kind, AttrKind::Ints);
  EXPECT_EQ(l.ints, (std::vector<int64_t>{2, -1, 64}));
  EXPECT_EQ(ival(eval("sym::get", {l}, {{"index", Attribute::of_int(-1)}})), 64);
  EXPECT_EQ(ival(eval("sym::get", {l, Attribute::of_int(1)})), -1);
  EXPECT_EQ(ival(eval("sym::len", {l})), 3);
  EXPECT_EQ(eval("sym::slice", {l}, {{"start", Attribute::of_int(1)}}).ints, (std::vector<int64_t>{-1, 64}));
  EXPECT_EQ(eval("sym::slice", {l}, {{"end", Attribute::of_int(-1)}}).ints, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(eval("sym::cat", {l, Attribute::of_ints({7})}).ints, (std::vector<int64_t>{2, -1, 64, 7}));
  const Attribute f = eval("sym::list", {Attribute::of_int(1), Attribute::of_float(0.5)});
  EXPECT_EQ(f.kind, AttrKind::Floats);
}

TEST(Sym, SizesComeFromTheTensor) {
  Tensor t = Tensor::empty(kFloat32, {2, 5, 7});
  auto run = [&](const std::string& op, Attributes attrs = {}) {
    return eval_sym(sym_node(op, std::move(attrs)), {SymArg{nullptr, &t}});
  };
  EXPECT_EQ(run("sym::size").ints, (std::vector<int64_t>{2, 5, 7}));
  EXPECT_EQ(ival(run("sym::size", {{"dim", Attribute::of_int(-1)}})), 7);
  EXPECT_EQ(ival(run("sym::dim")), 3);
  EXPECT_EQ(ival(run("sym::numel")), 70);
  EXPECT_THAT(test::error_message(
                  [&] {
                    run("sym::size", {{"dim", Attribute::of_int(3)}});
                  },
                  ErrorKind::Input),
              HasSubstr("node 's' (sym::size): dimension 3 is out of range for a tensor of shape [2, 5, 7]"));
}

TEST(Sym, ImpossibleArithmeticNamesTheNode) {
  auto I = Attribute::of_int;
  EXPECT_THAT(test::error_message(
                  [&] {
                    eval("sym::floordiv", {I(1), I(0)});
                  },
                  ErrorKind::Input),
              HasSubstr("node 's' (sym::floordiv): integer division by zero"));
  EXPECT_THAT(test::error_message(
                  [&] {
                    eval("sym::mul", {I(INT64_MAX), I(2)});
                  },
                  ErrorKind::Input),
              HasSubstr("integer overflow"));
  for (const char* op : {"sym::neg", "sym::abs"})  // (-INT64_MIN does not fit; the sanitized build sees the UB)
    EXPECT_THAT(test::error_message([&] { eval(op, {I(INT64_MIN)}); }, ErrorKind::Input), HasSubstr("integer overflow"))
        << op;
  EXPECT_EQ(ival(eval("sym::abs", {I(-INT64_MAX)})), INT64_MAX);
  EXPECT_THAT(test::error_message(
                  [&] {
                    eval("sym::get", {Attribute::of_ints({1}), I(5)});
                  },
                  ErrorKind::Input),
              HasSubstr("index 5 is out of range for [1]"));
}

TEST(Sym, BoundScalarsConvertWhereTheAttributeExpectsIt) {
  Node n = sym_node("aten::view");
  EXPECT_EQ(bind_scalar(Attribute::of_int(3), AttrKind::Float, n, "a").f, 3.0);
  EXPECT_EQ(bind_scalar(Attribute::of_int(3), AttrKind::Ints, n, "a").ints, (std::vector<int64_t>{3}));
  EXPECT_THAT(
      test::error_message([&] { bind_scalar(Attribute::of_float(0.5), AttrKind::Ints, n, "size"); }, ErrorKind::Graph),
      HasSubstr("attribute 'size' expects ints but its value 0.5 is float"));
}

// ---- validate()

std::string validation_error(Graph& g) {
  return test::error_message([&] { validate(g); }, ErrorKind::Graph);
}

TEST(SymValidate, AScalarIsNotAKernelInput) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32, {2});
  ValueId n = g.add_sym("n", "sym::numel", {x});
  g.add_node("add", "aten::add", {x, n}, {"y"});
  g.outputs = {g.find_value("y")};
  EXPECT_THAT(validation_error(g), HasSubstr("node 'add': input #1 'n' is a scalar; kernels read tensors"));
}

TEST(SymValidate, ABoundAttributeNeedsAScalarOfAFittingKind) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32, {2});
  ValueId s = g.add_sym("shape", "sym::size", {x});
  g.add_node("mul", "aten::mul", {x}, {"y"}, {{"other", Attribute::of_ref(s, AttrKind::Float)}});
  g.outputs = {g.find_value("y")};
  EXPECT_THAT(validation_error(g), HasSubstr("attribute 'other' expects float but 'shape' is ints"));

  Graph h;
  ValueId y = h.add_input("y", kFloat32, {2});
  h.add_node("mul", "aten::mul", {y}, {"z"}, {{"other", Attribute::of_ref(y, AttrKind::Float)}});
  h.outputs = {h.find_value("z")};
  EXPECT_THAT(validation_error(h), HasSubstr("which no sym node produces"));
}

TEST(SymValidate, ItemMayNotReadInputData) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32, {1});
  ValueId v = g.add_sym("v", "sym::item", {x});
  g.add_node("mul", "aten::mul", {x}, {"y"}, {{"other", Attribute::of_ref(v, AttrKind::Float)}});
  g.outputs = {g.find_value("y")};
  EXPECT_THAT(validation_error(g), HasSubstr("sym::item reads 'x', which depends on the data of a graph input"));
}

TEST(SymValidate, AttributeReferencesOrderTheNodes) {
  Graph g;  // the mul comes first in the file but reads a size computed after it
  ValueId x = g.add_input("x", kFloat32, {2});
  g.add_node("mul", "aten::mul", {x}, {"y"}, {{"other", Attribute::of_ref(2, AttrKind::Float)}});
  ValueId n = g.add_sym("n", "sym::numel", {x});
  ASSERT_EQ(n, 2);
  g.outputs = {g.find_value("y")};
  validate(g);
  EXPECT_EQ(g.nodes[0].name, "n");
  EXPECT_EQ(g.nodes[1].name, "mul");
  EXPECT_EQ(g.values[static_cast<size_t>(n)].type, ValueType::Scalar);
}

TEST(SymValidate, ScalarsAreNotGraphOutputsAndUnknownOpsAreNamed) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32, {2});
  ValueId n = g.add_sym("n", "sym::numel", {x});
  g.outputs = {n};
  EXPECT_THAT(validation_error(g), HasSubstr("graph output 'n' is a scalar"));
  Graph h;
  ValueId y = h.add_input("y", kFloat32, {2});
  ValueId m = h.add_sym("m", "sym::frobnicate", {y});
  h.add_node("mul", "aten::mul", {y}, {"z"}, {{"other", Attribute::of_ref(m, AttrKind::Float)}});
  h.outputs = {h.find_value("z")};
  EXPECT_THAT(validation_error(h), HasSubstr("node 'm' (sym::frobnicate): unknown sym op"));
}

}  // namespace
}  // namespace switchyard::ir
