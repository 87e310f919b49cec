// [precision] compute when a model loads: a bfloat16 or float16 model computes in float32
// on the family plugins by default, "as-is" keeps its dtypes (and so its kernels' limits).
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

TEST(Precision, AsIsKeepsTheModelsDtype) {
  Runtime rt(Options{config("[precision]\ncompute = \"as-is\"\n")});
  auto model = load_graph(rt, linear(kBF16));
  const Tensor x = half(kBF16, {2, 3}, {1, 2, 3, -1, 0.5f, 4});
  try {  // aten's linear may take bfloat16; linalg does not; nothing is converted
    const std::vector<Tensor> out = model->run({x});
    EXPECT_TRUE(same_dtype(out[0].dtype(), kBF16));
    EXPECT_EQ(model->plan({x}).size(), 1u) << "no conversion node";
    EXPECT_EQ(model->plan({x})[0].backend, "aten");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  }
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

const PlanEntry& entry(const std::vector<PlanEntry>& plan, const std::string& node) {
  for (const PlanEntry& e : plan)
    if (e.node == node) return e;
  throw std::runtime_error("no plan entry for " + node);
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
