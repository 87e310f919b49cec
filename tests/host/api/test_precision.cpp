// [precision] compute when a model loads: a bfloat16 or float16 model computes in float32
// on the family plugins by default; "as-is" keeps its dtypes where a kernel takes them and
// runs the other nodes as float32 islands.
// Built only with the aten plugin, which converts the inputs as they enter.
#include "../exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/error.hpp>
#include <switchyard/half.hpp>
#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

constexpr DLDataType kBF16{kDLBfloat, 16, 1}, kF16{kDLFloat, 16, 1};

Tensor half(DLDataType dtype, std::vector<int64_t> shape, const std::vector<float>& v) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.data<uint16_t>()[i] = dtype.code == kDLBfloat ? float_to_bfloat16(v[i]) : float_to_half(v[i]);
  return t;
}

// y = x @ W^T + b on [2, 3] x [4, 3]: every value exact in both half formats.
ir::Graph linear(DLDataType dtype) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", dtype, {-1, 3});
  const ir::ValueId w = g.add_constant("w", half(dtype, {4, 3}, {1, 0, -1, 0.5f, 2, 0, -2, 1, 1, 0, 0, 4}));
  const ir::ValueId b = g.add_constant("b", half(dtype, {4}, {0.25f, -1, 0, 2}));
  g.add_node("fc", "aten::linear", {x, w, b}, {"y"}, {}, "fc");
  g.outputs = {g.find_value("y")};
  return g;
}

const PlanEntry& entry(const std::vector<PlanEntry>& plan, const std::string& node) {
  for (const PlanEntry& e : plan)
    if (e.node == node) return e;
  throw std::runtime_error("no plan entry for " + node);
}

// A half-precision tensor's values as floats (exact).
std::vector<float> half_values(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<float> out;
  for (int64_t i = 0; i < c.numel(); ++i) {
    const uint16_t v = c.data<uint16_t>()[i];
    out.push_back(c.dtype().code == kDLBfloat ? bfloat16_to_float(v) : half_to_float(v));
  }
  return out;
}

std::string config(const std::string& precision) {
  return write_config("precision", "[selection]\ndefault = [\"linalg\", \"aten\"]\n" + precision);
}

}  // namespace

TEST(Precision, AHalfModelComputesInFloat32OnTheFamilyPlugins) {
  for (const std::string& precision : {std::string(), std::string("[precision]\ncompute = \"fp32\"\n")}) {
    for (DLDataType dtype : {kBF16, kF16}) {
      Runtime rt(Options{config(precision)});
      auto model = load_graph(rt, linear(dtype));
      const Tensor x = half(dtype, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
      const std::vector<Tensor> out = model->run({x});
      ASSERT_TRUE(same_dtype(out[0].dtype(), kF32)) << "outputs are float32";
      EXPECT_EQ(values(out[0]), (std::vector<float>{-1.75f, 3.5f, 3.0f, 14.0f, -4.75f, -0.5f, 6.5f, 18.0f}));
      const auto plan = model->plan({x});
      ASSERT_EQ(plan.size(), 2u);
      EXPECT_EQ(plan[0].node, "x.to_float32");
      EXPECT_EQ(plan[1].backend, "linalg") << "float32 weights: the family plugin takes the node";
    }
  }
}

// "as-is" keeps the model's dtype where a kernel takes it: aten's linear takes bfloat16.
TEST(Precision, AsIsKeepsTheModelsDtypeWhereAKernelTakesIt) {
  Runtime rt(
      Options{write_config("as_is_aten", "[selection]\ndefault = [\"aten\"]\n[precision]\ncompute = \"as-is\"\n")});
  auto model = load_graph(rt, linear(kBF16));
  const Tensor x = half(kBF16, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
  const std::vector<Tensor> out = model->run({x});
  ASSERT_TRUE(same_dtype(out[0].dtype(), kBF16));
  EXPECT_EQ(half_values(out[0]), (std::vector<float>{-1.75f, 3.5f, 3.0f, 14.0f, -4.75f, -0.5f, 6.5f, 18.0f}));
  const auto plan = model->plan({x});
  ASSERT_EQ(plan.size(), 1u) << "no conversion node";
  EXPECT_EQ(plan[0].backend, "aten");
  EXPECT_EQ(plan[0].island, "");
  EXPECT_EQ(plan[0].compute, "");
}

// Where no kernel takes the dtype (linalg is float32 only), the node runs as a float32
// island: its inputs converted as they enter, the weights once, its output back to the
// model's dtype; the plan says so, with the bytes.
TEST(Precision, AsIsRunsANodeNoKernelTakesAsAFloat32Island) {
  for (DLDataType dtype : {kBF16, kF16}) {
    Runtime rt(Options{
        write_config("as_is_linalg", "[selection]\ndefault = [\"linalg\"]\n[precision]\ncompute = \"as-is\"\n")});
    auto model = load_graph(rt, linear(dtype));
    const Tensor x = half(dtype, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
    const std::vector<Tensor> out = model->run({x});
    ASSERT_TRUE(same_dtype(out[0].dtype(), dtype)) << "the output comes back in the model's dtype";
    EXPECT_EQ(half_values(out[0]), (std::vector<float>{-1.75f, 3.5f, 3.0f, 14.0f, -4.75f, -0.5f, 6.5f, 18.0f}));
    const auto plan = model->plan({x});
    ASSERT_EQ(plan.size(), 1u) << "the conversions are the island's own, not graph nodes";
    const PlanEntry& fc = plan[0];
    EXPECT_EQ(fc.backend, "linalg");
    EXPECT_EQ(fc.island, dtype_name(dtype));
    EXPECT_EQ(fc.compute, "float32");
    EXPECT_EQ(fc.compute_converted_bytes, 4u * (6 + 8)) << "x in, y out, as float32";
    EXPECT_EQ(fc.compute_constant_bytes, 4u * (12 + 4)) << "w and b, once";
    EXPECT_NE(fc.compute_note.find("no backend takes " + dtype_name(dtype)), std::string::npos) << fc.compute_note;
    EXPECT_NE(fc.reason.find("float32 island"), std::string::npos) << fc.reason;
    ASSERT_FALSE(fc.rejected.empty()) << "the half-precision refusals stay in the plan";
    EXPECT_EQ(fc.rejected[0].backend, "linalg");
  }
}

// Strict mode makes a rejection final: no island after it; a node a rule asks float32 of
// is still one (the plan, not a fallback).
TEST(Precision, StrictModeFormsNoIslandAfterARejection) {
  const std::string as_is = "[selection]\ndefault = [\"linalg\"]\nstrict = true\n[precision]\ncompute = \"as-is\"\n";
  Runtime rt(Options{write_config("as_is_strict", as_is)});
  try {
    auto model = load_graph(rt, linear(kBF16));
    model->run({half(kBF16, {2, 3}, {1, 2, 3, -1, 0.5f, 4})});
    FAIL() << "strict mode ran the node as a float32 island";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no float32 island is formed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("linalg"), std::string::npos) << e.what();
  }
  Runtime ruled(
      Options{write_config("as_is_strict_rule", as_is + "[[precision.rules]]\nnode = \"fc\"\ncompute = \"fp32\"\n")});
  auto model = load_graph(ruled, linear(kBF16));
  const Tensor x = half(kBF16, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
  EXPECT_EQ(half_values(model->run({x})[0]),
            (std::vector<float>{-1.75f, 3.5f, 3.0f, 14.0f, -4.75f, -0.5f, 6.5f, 18.0f}));
  EXPECT_EQ(entry(model->plan({x}), "fc").island, "bfloat16");
}

// A [[precision.rules]] "fp32" makes an island of its node even where a kernel takes the
// dtype; the other nodes keep it.
TEST(Precision, APrecisionRuleMakesAFloat32IslandOfOneNode) {
  Runtime rt(Options{write_config("as_is_rule",
                                  "[selection]\ndefault = [\"aten\"]\n[precision]\ncompute = \"as-is\"\n"
                                  "[[precision.rules]]\nnode = \"fc\"\ncompute = \"fp32\"\n")});
  ir::Graph g = linear(kBF16);
  g.add_node("act", "aten::relu", {g.find_value("y")}, {"z"}, {}, "act");
  g.outputs = {g.find_value("z")};
  auto model = load_graph(rt, std::move(g));
  const Tensor x = half(kBF16, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
  const std::vector<Tensor> out = model->run({x});
  ASSERT_TRUE(same_dtype(out[0].dtype(), kBF16));
  EXPECT_EQ(half_values(out[0]), (std::vector<float>{0, 3.5f, 3.0f, 14.0f, 0, 0, 6.5f, 18.0f}));
  const auto plan = model->plan({x});
  EXPECT_EQ(entry(plan, "fc").island, "bfloat16");
  EXPECT_NE(entry(plan, "fc").compute_note.find("[[precision.rules]]"), std::string::npos);
  EXPECT_EQ(entry(plan, "act").island, "");
}

// ATen's products take one floating dtype: a bfloat16 weight beside a float32 activation
// (a trace made in float32, then converted) is declined by aten and runs as an island.
TEST(Precision, MixedFloatDtypesInAProductRunAsAnIsland) {
  Runtime rt(
      Options{write_config("as_is_mixed", "[selection]\ndefault = [\"aten\"]\n[precision]\ncompute = \"as-is\"\n")});
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {-1, 3});
  const ir::ValueId w = g.add_constant("w", half(kBF16, {4, 3}, {1, 0, -1, 0.5f, 2, 0, -2, 1, 1, 0, 0, 4}));
  g.add_node("fc", "aten::linear", {x, w, ir::kNoValue}, {"y"}, {}, "fc");
  g.outputs = {g.find_value("y")};
  auto model = load_graph(rt, std::move(g));
  const Tensor x_in = f32({2, 3}, {1, 2, 3, -1, 0.5f, 4});
  const std::vector<Tensor> out = model->run({x_in});
  ASSERT_TRUE(same_dtype(out[0].dtype(), kBF16));
  EXPECT_EQ(half_values(out[0]), (std::vector<float>{-2.0f, 4.5f, 3.0f, 12.0f, -5.0f, 0.5f, 6.5f, 16.0f}));
  const PlanEntry& fc = model->plan({x_in})[0];
  EXPECT_EQ(fc.island, "bfloat16");
  ASSERT_FALSE(fc.rejected.empty());
  EXPECT_NE(fc.rejected[0].reason.find("two floating dtypes"), std::string::npos) << fc.rejected[0].reason;
}

namespace {

// y = relu(x @ W^T + b) in float32, every value a bfloat16 value: bf16 products are exact.
ir::Graph float32_linear_relu() {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {-1, 3});
  const ir::ValueId w = g.add_constant("w", f32({4, 3}, {1, 0, -1, 0.5f, 2, 0, -2, 1, 1, 0, 0, 4}));
  const ir::ValueId b = g.add_constant("b", f32({4}, {0.25f, -1, 0, 2}));
  g.add_node("fc", "aten::linear", {x, w, b}, {"h"}, {}, "fc");
  g.add_node("act", "aten::relu", {g.find_value("h")}, {"y"}, {}, "act");
  g.outputs = {g.find_value("y")};
  return g;
}

}  // namespace

// [precision] compute = "bf16": linalg's linear multiplies in bfloat16 (or says why not, on
// a CPU without bfloat16 dot products); relu, on aten, has no bfloat16 kernel, and the plan
// says so. Unfused, so that each node answers for itself.
TEST(Precision, Bf16ComputeIsShownPerNode) {
  const std::string cfg = write_config(
      "bf16", "[selection]\ndefault = [\"linalg\", \"aten\"]\nfuse = false\n[precision]\ncompute = \"bf16\"\n");
  Runtime rt(Options{cfg});
  auto model = load_graph(rt, float32_linear_relu());
  const Tensor x = f32({2, 3}, {1, 2, 3, -1, 0.5f, 4});
  EXPECT_EQ(values(model->run({x})[0]), (std::vector<float>{0, 3.5f, 3.0f, 14.0f, 0, 0, 6.5f, 18.0f}));
  const std::vector<PlanEntry> plan = model->plan({x});
  const PlanEntry& fc = entry(plan, "fc");
  EXPECT_EQ(fc.backend, "linalg");
  EXPECT_EQ(fc.compute_asked, "bfloat16");
  if (fc.compute == "bfloat16") {
    EXPECT_EQ(fc.compute_converted_bytes, 2u * 6u) << "x, [2, 3], in bfloat16 per run";
    EXPECT_EQ(fc.compute_constant_bytes, 2u * 12u) << "W, [4, 3], in bfloat16 once";
  } else {  // this CPU has no bfloat16 dot products: float32, and why
    EXPECT_EQ(fc.compute, "float32");
    EXPECT_NE(fc.compute_note.find("no bfloat16 dot products"), std::string::npos) << fc.compute_note;
  }
  const PlanEntry& act = entry(plan, "act");
  EXPECT_EQ(act.compute_asked, "bfloat16");
  EXPECT_TRUE(act.compute.empty()) << "aten's relu says nothing: it computes in its tensors' float32";
}

// Under bf16 the fused MLP (linear + gelu or relu + linear) converts only its input per
// run: the first product writes the hidden block in bfloat16 for the second (relu then
// runs over the bfloat16 bits), and the plan says so.
TEST(Precision, Bf16MlpConvertsOnlyItsInput) {
  for (const char* act : {"aten::gelu", "aten::relu"}) {
    SCOPED_TRACE(act);
    const std::string cfg =
        write_config("bf16_mlp", "[selection]\ndefault = [\"linalg\", \"aten\"]\n[precision]\ncompute = \"bf16\"\n");
    const std::string ref = write_config("fp32_mlp", "[selection]\ndefault = [\"linalg\", \"aten\"]\n");
    ir::Graph g;
    const ir::ValueId x = g.add_input("x", kF32, {-1, 4});
    std::vector<float> w1v(8 * 4), w2v(2 * 8);
    for (size_t i = 0; i < w1v.size(); ++i) w1v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
    for (size_t i = 0; i < w2v.size(); ++i) w2v[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
    const ir::ValueId w1 = g.add_constant("w1", f32({8, 4}, w1v));
    const ir::ValueId b1 = g.add_constant("b1", f32({8}, {0, 0.5f, -0.5f, 1, 0, 0, 0.25f, -1}));
    const ir::ValueId w2 = g.add_constant("w2", f32({2, 8}, w2v));
    const ir::ValueId b2 = g.add_constant("b2", f32({2}, {0.125f, -0.25f}));
    g.add_node("fc1", "aten::linear", {x, w1, b1}, {"h"}, {}, "mlp");
    g.add_node("act", act, {g.find_value("h")}, {"a"}, {}, "mlp");
    g.add_node("fc2", "aten::linear", {g.find_value("a"), w2, b2}, {"y"}, {}, "mlp");
    g.outputs = {g.find_value("y")};
    Runtime rt(Options{cfg}), rt_ref(Options{ref});
    auto model = load_graph(rt, g);
    auto model_ref = load_graph(rt_ref, g);
    const Tensor in = f32({3, 4}, {1, 2, 3, -1, 0.5f, 4, -2, 0, 0.25f, -0.75f, 1.5f, 2});
    const std::vector<PlanEntry> plan = model->plan({in});
    const PlanEntry& fc1 = entry(plan, "fc1");
    ASSERT_EQ(fc1.op, std::string("aten::linear+") + act + "+aten::linear");
    if (fc1.compute == "bfloat16") EXPECT_EQ(fc1.compute_converted_bytes, 2u * 3u * 4u) << "x, [3, 4], only";
    const std::vector<float> y = values(model->run({in})[0]), y_ref = values(model_ref->run({in})[0]);
    ASSERT_EQ(y.size(), y_ref.size());
    // Three bfloat16 roundings (x, the weights, the hidden) of about 2^-9 each, over sums of
    // at most 8 terms of magnitude under 8: 0.1 bounds it with room, 1e-6 would not.
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], y_ref[i], 0.1) << i;
  }
}

// A rule keeps one node in float32 under a bf16 policy, and asks nothing of it.
TEST(Precision, RulesChooseComputePerNode) {
  const std::string cfg = write_config("bf16_rules",
                                       "[selection]\ndefault = [\"linalg\", \"aten\"]\nfuse = false\n[precision]\n"
                                       "compute = \"bf16\"\n[[precision.rules]]\nnode = \"fc\"\ncompute = \"fp32\"\n");
  Runtime rt(Options{cfg});
  auto model = load_graph(rt, float32_linear_relu());
  const Tensor x = f32({2, 3}, {1, 2, 3, -1, 0.5f, 4});
  const std::vector<PlanEntry> plan = model->plan({x});
  EXPECT_TRUE(entry(plan, "fc").compute_asked.empty());
  EXPECT_TRUE(entry(plan, "fc").compute.empty());
  EXPECT_EQ(entry(plan, "act").compute_asked, "bfloat16");
}
