// The elementwise plugin in graphs, against the aten plugin running every node: outputs
// written over dying inputs, broadcasting both ways, strided inputs, a traced Python
// number (a 0-dim float64 tensor), and what it leaves to aten. (Single-node cases: the
// conformance kit's binary cases, host/conformance/cases_elementwise.cpp.)
#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

using namespace switchyard;
using namespace sytest;

namespace {

Tensor uniform(std::vector<int64_t> shape, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t = Tensor::empty(kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

Tensor number(double v) {
  Tensor t = Tensor::empty(DLDataType{kDLFloat, 64, 1}, {});
  *t.data<double>() = v;
  return t;
}

Runtime runtime_with(const std::string& backends) {
  return Runtime(Options{
      write_config("elementwise_" + std::to_string(backends.size()),
                   "[plugins]\nload = [\"elementwise\", \"aten\"]\n[selection]\ndefault = [" + backends + "]\n")});
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-6f * (1.0f + std::abs(want.data<float>()[i])))
        << what << ", element " << i;
}

// x, y [4, 6, 8]; s a number; bias [8]: ((x + y) * 2.5 / s - 0.5 * bias) + x
ir::Graph residual_chain() {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32), y = g.add_input("y", kF32);
  const ir::ValueId s = g.add_input("s", DLDataType{kDLFloat, 64, 1}), bias = g.add_input("bias", kF32);
  g.add_node("sum", "aten::add", {x, y}, {"a"}, {{"alpha", ir::Attribute::of_int(1)}});
  g.add_node("scale", "aten::mul", {g.find_value("a")}, {"b"}, {{"other", ir::Attribute::of_float(2.5)}});
  g.add_node("norm", "aten::div", {g.find_value("b"), s}, {"c"});
  g.add_node("shift", "aten::sub", {g.find_value("c"), bias}, {"d"}, {{"alpha", ir::Attribute::of_float(0.5)}});
  g.add_node("residual", "aten::add", {g.find_value("d"), x}, {"out"}, {{"alpha", ir::Attribute::of_int(1)}});
  g.outputs = {g.find_value("out")};
  return g;
}

}  // namespace

TEST(ElementwisePlugin, WritesOverDyingInputsAndMatchesAten) {
  const std::vector<Tensor> feeds = {uniform({4, 6, 8}, 1), uniform({4, 6, 8}, 2), number(3.0), uniform({8}, 3)};
  Runtime ours = runtime_with("\"elementwise\", \"aten\""), ref = runtime_with("\"aten\"");
  auto model = load_graph(ours, residual_chain());
  for (const PlanEntry& e : model->plan(feeds)) EXPECT_EQ(e.backend, "elementwise") << e.node;
  int in_place = 0;
  std::string placements;
  for (const MemoryValue& v : model->memory_plan(feeds).values) {
    in_place += v.placement.rfind("view of", 0) == 0 ? 1 : 0;
    EXPECT_EQ(v.in_place, v.placement.rfind("view of", 0) == 0) << v.value << ": every view here is an in-place write";
    placements += v.value + ": " + v.placement + "; ";
  }
  EXPECT_GE(in_place, 3) << "scale, norm and shift should each write over the value they consume; " << placements;

  const Tensor want = load_graph(ref, residual_chain())->run(feeds)[0];
  for (int run = 0; run < 3; ++run) expect_same(model->run(feeds)[0], want, "run " + std::to_string(run));
}

// Checked against values worked out here (a[i1, i0] read through the transpose's
// strides, b broadcast along the last dim) and against aten.
TEST(ElementwisePlugin, BroadcastsBothWaysAndReadsStridedInputs) {
  const std::vector<Tensor> feeds = {uniform({5, 3, 1}, 4), uniform({7}, 5, 0.5f, 2.0f)};
  const float* a = feeds[0].data<float>();
  const float* b = feeds[1].data<float>();
  const std::vector<std::pair<std::string, float (*)(float, float)>> ops = {
      {"aten::add", [](float x, float y) { return x + y; }},
      {"aten::sub", [](float x, float y) { return x - y; }},
      {"aten::mul", [](float x, float y) { return x * y; }},
      {"aten::div", [](float x, float y) { return x / y; }}};
  for (const auto& [op, f] : ops) {
    ir::Graph g;
    const ir::ValueId ia = g.add_input("a", kF32), ib = g.add_input("b", kF32);
    g.add_node("t", "aten::transpose", {ia}, {"at"},
               {{"dim0", ir::Attribute::of_int(0)}, {"dim1", ir::Attribute::of_int(1)}});
    g.add_node("op", op, {g.find_value("at"), ib}, {"out"});
    g.outputs = {g.find_value("out")};
    Runtime both = runtime_with("\"elementwise\", \"aten\"");
    auto model = load_graph(both, std::move(g));
    EXPECT_EQ(model->plan(feeds)[1].backend, "elementwise") << op;
    const Tensor got = model->run(feeds)[0];  // [3, 5, 7]
    ASSERT_EQ(got.shape(), (std::vector<int64_t>{3, 5, 7})) << op;
    ASSERT_TRUE(got.is_contiguous()) << op;
    // aten keeps the transposed operand's layout (strides [7, 21, 1]), as PyTorch does;
    // read through its strides, its values are the same.
    Runtime ref = runtime_with("\"aten\"");
    ir::Graph gr;
    const ir::ValueId ra = gr.add_input("a", kF32), rb = gr.add_input("b", kF32);
    gr.add_node("t", "aten::transpose", {ra}, {"at"},
                {{"dim0", ir::Attribute::of_int(0)}, {"dim1", ir::Attribute::of_int(1)}});
    gr.add_node("op", op, {gr.find_value("at"), rb}, {"out"});
    gr.outputs = {gr.find_value("out")};
    expect_same(got, load_graph(ref, std::move(gr))->run(feeds)[0].contiguous(), op + " against aten");
    for (int64_t i0 = 0; i0 < 3; ++i0)
      for (int64_t i1 = 0; i1 < 5; ++i1)
        for (int64_t k = 0; k < 7; ++k)
          ASSERT_EQ(got.data<float>()[(i0 * 5 + i1) * 7 + k], f(a[i1 * 3 + i0], b[k]))
              << op << " at " << i0 << ", " << i1 << ", " << k;
  }
}

// One add, run after run, over operands laid out otherwise each time: the kernel remembers
// the last call's walk, and a different layout must not get the remembered one. The
// strided runs feed a [4, 6] view of every other column of an [4, 12] buffer.
TEST(ElementwisePlugin, OneInstanceFollowsItsOperandsFromRunToRun) {
  ir::Graph g;
  const ir::ValueId ia = g.add_input("a", kF32), ib = g.add_input("b", kF32);
  g.add_node("op", "aten::add", {ia, ib}, {"out"}, {{"alpha", ir::Attribute::of_float(0.5)}});
  g.outputs = {g.find_value("out")};
  Runtime both = runtime_with("\"elementwise\", \"aten\"");
  auto model = load_graph(both, std::move(g));
  const Tensor a = uniform({4, 6}, 11), b = uniform({4, 6}, 12), wide = uniform({4, 12}, 13);
  const Tensor every_other =
      Tensor::from_blob(const_cast<float*>(wide.data<float>()), kF32, {4, 6}, {12, 2}, [wide] {});
  const std::vector<std::vector<Tensor>> feeds = {
      {a, b}, {every_other, b}, {a, every_other}, {a, b}, {every_other, every_other}};
  for (size_t i = 0; i < feeds.size(); ++i) {
    EXPECT_EQ(model->plan(feeds[i])[0].backend, "elementwise") << "run " << i;
    const Tensor got = model->run(feeds[i])[0];
    ASSERT_EQ(got.shape(), (std::vector<int64_t>{4, 6})) << "run " << i;
    const Tensor x = feeds[i][0].contiguous(), y = feeds[i][1].contiguous();
    for (int64_t e = 0; e < 24; ++e)
      ASSERT_EQ(got.data<float>()[e], x.data<float>()[e] + 0.5f * y.data<float>()[e])
          << "run " << i << ", element " << e;
  }
}

// Attention's score scaling, q.transpose(0, 1) / 8 on [6000, 3, 32]: 3 x 6000 rows of 32,
// large enough to be split across threads (one chunk starts mid-way through a dim), each
// row's offset stepped from the last; and a strided other broadcast along the middle dim.
TEST(ElementwisePlugin, LargeStridedWalksSplitAcrossThreads) {
  const std::vector<Tensor> feeds = {uniform({6000, 3, 32}, 7), uniform({3, 1, 32}, 8, 0.5f, 2.0f)};
  const float* a = feeds[0].data<float>();
  const float* b = feeds[1].data<float>();
  ir::Graph g;
  const ir::ValueId ia = g.add_input("a", kF32), ib = g.add_input("b", kF32);
  g.add_node("t", "aten::transpose", {ia}, {"at"},
             {{"dim0", ir::Attribute::of_int(0)}, {"dim1", ir::Attribute::of_int(1)}});
  g.add_node("scale", "aten::div", {g.find_value("at")}, {"s"}, {{"other", ir::Attribute::of_float(8.0)}});
  g.add_node("t2", "aten::transpose", {ia}, {"at2"},
             {{"dim0", ir::Attribute::of_int(0)}, {"dim1", ir::Attribute::of_int(1)}});
  g.add_node("mix", "aten::mul", {g.find_value("at2"), ib}, {"m"});
  g.outputs = {g.find_value("s"), g.find_value("m")};
  Runtime both = runtime_with("\"elementwise\", \"aten\"");
  auto model = load_graph(both, std::move(g));
  const std::vector<PlanEntry> plan = model->plan(feeds);
  EXPECT_EQ(plan[1].backend, "elementwise");
  EXPECT_EQ(plan[3].backend, "elementwise");
  const std::vector<Tensor> got = model->run(feeds);
  ASSERT_EQ(got[0].shape(), (std::vector<int64_t>{3, 6000, 32}));
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t t = 0; t < 6000; ++t)
      for (int64_t k = 0; k < 32; ++k) {
        const float x = a[(t * 3 + h) * 32 + k];
        ASSERT_EQ(got[0].data<float>()[(h * 6000 + t) * 32 + k], x / 8.0f) << h << ", " << t << ", " << k;
        ASSERT_EQ(got[1].data<float>()[(h * 6000 + t) * 32 + k], x * b[h * 32 + k]) << h << ", " << t << ", " << k;
      }
}

TEST(ElementwisePlugin, LeavesOtherDtypesAndRoundingModesToAten) {
  Runtime both = runtime_with("\"elementwise\", \"aten\"");
  ir::Graph g;
  const ir::ValueId a = g.add_input("a", kF32), i = g.add_input("i", DLDataType{kDLInt, 64, 1});
  g.add_node("int_other", "aten::mul", {a, i}, {"m"});
  g.add_node("floor_div", "aten::div", {g.find_value("m"), a}, {"out"},
             {{"rounding_mode", ir::Attribute::of_string("floor")}});
  g.outputs = {g.find_value("out")};
  Tensor ints = Tensor::empty(DLDataType{kDLInt, 64, 1}, {4});
  for (int64_t k = 0; k < 4; ++k) ints.data<int64_t>()[k] = k + 1;
  auto model = load_graph(both, std::move(g));
  const std::vector<PlanEntry> plan = model->plan({uniform({4}, 6), ints});
  ASSERT_EQ(plan.size(), 2u);
  for (const PlanEntry& e : plan) {
    EXPECT_EQ(e.backend, "aten") << e.node;
    ASSERT_FALSE(e.rejected.empty()) << e.node;
    EXPECT_EQ(e.rejected[0].backend, "elementwise") << e.node;
  }
  EXPECT_NE(plan[0].rejected[0].reason.find("int64"), std::string::npos) << plan[0].rejected[0].reason;
  EXPECT_NE(plan[1].rejected[0].reason.find("rounding_mode"), std::string::npos) << plan[1].rejected[0].reason;
}

// aten::maximum / aten::minimum, broadcast, with NaNs on either side: as aten computes them.
TEST(ElementwisePlugin, MaximumAndMinimumMatchAtenWithNaNs) {
  for (const char* op : {"aten::maximum", "aten::minimum"}) {
    ir::Graph g;
    const ir::ValueId x = g.add_input("x", kF32), y = g.add_input("y", kF32);
    g.add_node("m", op, {x, y}, {"out"});
    g.outputs = {g.find_value("out")};
    Tensor a = uniform({3, 5}, 11), b = uniform({5}, 12);
    a.data<float>()[2] = std::nanf("");
    b.data<float>()[4] = std::nanf("");
    const std::vector<Tensor> feeds = {a, b};
    Runtime ours = runtime_with("\"elementwise\", \"aten\""), ref = runtime_with("\"aten\"");
    auto model = load_graph(ours, ir::Graph(g));
    for (const PlanEntry& e : model->plan(feeds)) EXPECT_EQ(e.backend, "elementwise") << op;
    const Tensor got = model->run(feeds)[0], want = load_graph(ref, std::move(g))->run(feeds)[0];
    ASSERT_EQ(got.shape(), want.shape()) << op;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float u = got.data<float>()[i], v = want.data<float>()[i];
      EXPECT_TRUE(std::isnan(v) ? std::isnan(u) : u == v) << op << ", element " << i << ": " << u << " vs " << v;
    }
  }
}
