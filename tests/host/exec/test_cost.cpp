// Kernel cost (SDK 1.1 SY_KernelDef.cost): asked once per plan (input-shape signature),
// never per run; carried on PlanEntry; a failing or nonsensical cost is a warning naming
// node, op and plugin, and the entry then has none (the host's formula applies).
// The `costing` test plugin reports 4242 FLOPs and 777 bytes per element for test::costed.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"
#include "util/log.hpp"

#include <switchyard/runtime.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace switchyard;
using namespace sytest;

namespace {

std::string config() {
  return write_config("cost", std::string("[plugins]\nload = [\"example\", \"") + SY_TEST_PLUGIN_DIR +
                                  "/libswitchyard-costing.so\"]\n");
}

// x -> OP -> "a" -> SECOND -> "y"
ir::Graph chain(const std::string& op, const std::string& second = "test::uncosted") {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("first", op, {x}, {"a"}, {}, "block.first");
  g.add_node("second", second, {g.find_value("a")}, {"y"});
  g.outputs = {g.find_value("y")};
  return g;
}

// How many times the costing plugin's cost functions have run, in this process.
int cost_calls(const Runtime& rt) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("calls", "test::cost_calls", {x}, {"n"});
  g.outputs = {g.find_value("n")};
  return static_cast<int>(values(load_graph(rt, std::move(g))->run({f32({1}, {0})})[0])[0]);
}

Tensor ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) - 1.5f;
  return f32({n}, v);
}

// Collects what the host logs while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) { log::get().sinks().push_back(sink_); }
  ~LogCapture() {
    auto& sinks = log::get().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace

TEST(KernelCost, ReachesThePlanEntry) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain("test::costed"));
  const Tensor x = ramp(3);
  EXPECT_EQ(values(model->run({x})[0]), (std::vector<float>{-6, -2, 2}));  // doubled twice
  const std::vector<PlanEntry> plan = model->plan({x});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].backend, "costing");
  ASSERT_TRUE(plan[0].has_kernel_cost);
  EXPECT_EQ(plan[0].kernel_flops, 4242.0 * 3);
  EXPECT_EQ(plan[0].kernel_bytes, 777.0 * 3);
  EXPECT_EQ(plan[0].kernel_scratch_bytes, 99u);
  EXPECT_EQ(plan[0].flops, 4242.0 * 3) << "the kernel's own cost is the node's cost";
  // A kernel without `cost`: nothing reported; the host estimates from the op and shapes,
  // one FLOP per output element and each float32 input and output's bytes.
  EXPECT_FALSE(plan[1].has_kernel_cost);
  EXPECT_EQ(plan[1].kernel_flops, 0.0);
  EXPECT_EQ(plan[1].flops, 3.0);
  EXPECT_EQ(plan[1].bytes, 4.0 * (3 + 3));
}

TEST(KernelCost, AskedOncePerSignatureNeverPerRun) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain("test::costed"));
  const int before = cost_calls(rt);
  for (int r = 0; r < 5; ++r) model->run({ramp(3)});
  model->plan({ramp(3)});
  EXPECT_EQ(cost_calls(rt), before + 1) << "five runs and a plan() of one signature";
  for (int r = 0; r < 3; ++r) model->run({ramp(5)});
  EXPECT_EQ(cost_calls(rt), before + 2) << "a second signature is asked once more";
  model->run({ramp(3)});
  EXPECT_EQ(cost_calls(rt), before + 2) << "the first signature's plan is cached";
  // Each signature's plan carries the cost at its own shapes.
  EXPECT_EQ(model->plan({ramp(5)})[0].kernel_flops, 4242.0 * 5);
  EXPECT_EQ(model->plan({ramp(3)})[0].kernel_flops, 4242.0 * 3);
}

// Fusion decides first; only the kernel that runs is asked, not the ones it replaces.
TEST(KernelCost, AFusedNodeReportsTheFusedKernelsCostOnly) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain("test::costed", "test::tail"));
  const int before = cost_calls(rt);
  EXPECT_EQ(values(model->run({ramp(2)})[0]), (std::vector<float>{-6, -2}));
  EXPECT_EQ(cost_calls(rt), before + 1) << "the unfused test::costed was asked too";
  const std::vector<PlanEntry> plan = model->plan({ramp(2)});
  ASSERT_EQ(plan[0].op, "test::costed+test::tail");
  ASSERT_TRUE(plan[0].has_kernel_cost);
  EXPECT_EQ(plan[0].kernel_flops, 31337.0 * 2);
  EXPECT_EQ(plan[0].kernel_bytes, 0.0) << "a field the kernel left alone stays 0";
  EXPECT_FALSE(plan[1].has_kernel_cost) << "the consumer runs inside the fused kernel";
}

TEST(KernelCost, FailingCostWarnsNamingNodeOpAndPluginAndRunGoesOn) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain("test::cost_fails"));
  LogCapture log;
  EXPECT_EQ(values(model->run({ramp(2)})[0]), (std::vector<float>{-6, -2}));
  const std::string text = log.text();
  EXPECT_NE(text.find("[warning]"), std::string::npos) << text;
  EXPECT_NE(text.find("node 'first' (op test::cost_fails, module block.first)"), std::string::npos) << text;
  EXPECT_NE(text.find("plugin 'costing'"), std::string::npos) << text;
  EXPECT_NE(text.find("deliberate failure from test::cost_fails's cost"), std::string::npos) << text;
  EXPECT_NE(text.find("host's formula"), std::string::npos) << text;
  EXPECT_FALSE(model->plan({ramp(2)})[0].has_kernel_cost);
}

TEST(KernelCost, NonsensicalCostWarnsAndIsNotUsed) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain("test::cost_nan"));
  LogCapture log;
  model->run({ramp(4)});
  const std::string text = log.text();
  EXPECT_NE(text.find("node 'first' (op test::cost_nan"), std::string::npos) << text;
  EXPECT_NE(text.find("plugin 'costing'"), std::string::npos) << text;
  EXPECT_NE(text.find("not counts"), std::string::npos) << text;
  EXPECT_FALSE(model->plan({ramp(4)})[0].has_kernel_cost);
}

// The example plugin reports its own cost: add counts a multiply and an add per element
// (the host's estimate counts one), reading both inputs and writing the output once.
TEST(KernelCost, ExamplePluginReportsItsAdd) {
  Runtime rt(Options{config()});
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, -1});
  ir::ValueId b = g.add_input("b", kF32, {-1});
  g.add_node("sum", "aten::add", {x, b}, {"y"}, {{"alpha", ir::Attribute::of_int(1)}});
  g.outputs = {g.find_value("y")};
  auto model = load_graph(rt, std::move(g));
  const Tensor xs = f32({2, 3}, {1, 2, 3, 4, 5, 6}), bs = f32({3}, {1, 1, 1});
  EXPECT_EQ(values(model->run({xs, bs})[0]), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  const PlanEntry e = model->plan({xs, bs})[0];
  EXPECT_EQ(e.backend, "example");
  ASSERT_TRUE(e.has_kernel_cost);
  EXPECT_EQ(e.kernel_flops, 2.0 * 6);
  EXPECT_EQ(e.kernel_bytes, 4.0 * (6 + 3 + 6));
}

// The memory pre-flight counts the scratch a kernel declares: a first run at batch 64 whose
// activations fit in 100000 bytes but whose kernel asks 1000 scratch bytes per element
// (256000) is refused before anything runs; the same model without that kernel runs.
TEST(KernelCost, PreflightCountsDeclaredScratch) {
  Runtime rt(Options{config()});
  auto model_with = [&](const std::string& op) {
    ir::Graph g;
    ir::ValueId x = g.add_input("x", kF32, {-1, 4});
    g.add_node("big", op, {x}, {"y"});
    g.outputs = {g.find_value("y")};
    return load_graph(rt, std::move(g));
  };
  const Tensor x = f32({64, 4}, std::vector<float>(256, 1.0f));
  setenv("SWITCHYARD_MEMORY_AVAILABLE", "100000", 1);
  std::string error;
  try {
    model_with("test::scratchy")->run({x});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    error = e.what();
  }
  EXPECT_NE(error.find("memory pre-flight"), std::string::npos) << error;
  EXPECT_NE(error.find("the largest batch that fits is about 24"), std::string::npos) << error;
  EXPECT_NO_THROW(model_with("test::uncosted")->run({x}));
  unsetenv("SWITCHYARD_MEMORY_AVAILABLE");
}
