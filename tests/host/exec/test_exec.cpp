// Executor tests over the example plugin only (no LibTorch): numerics, early frees,
// node_io, callbacks, input checks, unsupported ops and strict mode.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

std::string example_only_config(const std::string& extra = "") {
  return write_config("example_only", "[plugins]\nload = [\"example\"]\n" + extra);
}

// x -> relu -> add(r, x) -> mul(a, a) -> out
ir::Graph small_graph() {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("block.relu", "aten::relu", {x}, {"r"}, {}, "block");
  g.add_node("block.add", "aten::add", {g.find_value("r"), x}, {"a"}, {}, "block");
  g.add_node("head.mul", "aten::mul", {g.find_value("a"), g.find_value("a")}, {"out"}, {}, "head");
  g.outputs = {g.find_value("out")};
  return g;
}

}  // namespace

TEST(Executor, ChainMatchesHandComputation) {
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, small_graph());
  auto out = model->run({f32({5}, {-2, -1, 0, 1.5f, 3})});
  ASSERT_EQ(out.size(), 1u);
  // relu(x) + x = {-2, -1, 0, 3, 6}; squared:
  EXPECT_EQ(values(out[0]), (std::vector<float>{4, 1, 0, 9, 36}));
  EXPECT_EQ(model->last_stats().nodes_run, 3u);
}

TEST(Executor, ReplansWhenTheInputShapeChanges) {
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, small_graph());
  EXPECT_EQ(values(model->run({f32({2}, {1, 2})})[0]), (std::vector<float>{4, 16}));
  EXPECT_EQ(values(model->run({f32({3}, {1, 2, -1})})[0]), (std::vector<float>{4, 16, 1}));
  EXPECT_EQ(values(model->run({f32({2}, {3, 0})})[0]), (std::vector<float>{36, 0}));
}

TEST(Executor, FreesTensorsAfterTheirLastConsumer) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", kF32, {64});
  const int kNodes = 40;
  for (int i = 0; i < kNodes; ++i) {
    std::string out = "v" + std::to_string(i);
    g.add_node("n" + std::to_string(i), i % 2 ? "aten::relu" : "aten::add",
               i % 2 ? std::vector<ir::ValueId>{v} : std::vector<ir::ValueId>{v, v}, {out});
    v = g.find_value(out);
  }
  g.outputs = {v};
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, std::move(g));
  std::vector<float> ones(64, 1.0f);
  auto out = model->run({f32({64}, ones)});
  EXPECT_FLOAT_EQ(values(out[0])[0], static_cast<float>(1 << (kNodes / 2)));
  const RunStats& s = model->last_stats();
  EXPECT_EQ(s.nodes_run, static_cast<size_t>(kNodes));
  EXPECT_LT(s.peak_live_tensors, static_cast<size_t>(kNodes));
  EXPECT_LE(s.peak_live_tensors, 3u);  // input, one producer's output, one consumer's output
}

TEST(Executor, CapturesNodeIoWithDlBacktraceFields) {
  Options o{example_only_config()};
  o.capture = "all";
  Runtime rt(o);
  auto model = load_graph(rt, small_graph());
  model->run({f32({3}, {-1, 2, 3})});
  const auto& io = model->node_io();
  ASSERT_EQ(io.size(), 3u);
  EXPECT_EQ(io[1].node, "block.add");
  EXPECT_EQ(io[1].op, "aten::add");
  EXPECT_EQ(io[1].backend, "example");
  EXPECT_EQ(io[1].module_path, "block");
  EXPECT_EQ(io[1].input_sources, (std::vector<std::string>{"r", "x"}));
  ASSERT_EQ(io[1].inputs.size(), 2u);
  EXPECT_EQ(values(io[1].inputs[0]), (std::vector<float>{0, 2, 3}));
  EXPECT_EQ(values(io[1].inputs[1]), (std::vector<float>{-1, 2, 3}));
  EXPECT_EQ(values(io[1].outputs[0]), (std::vector<float>{-1, 4, 6}));
  EXPECT_EQ(values(io[2].outputs[0]), (std::vector<float>{1, 16, 36}));
}

TEST(Executor, OutputsCaptureModeKeepsNoInputs) {
  Options o{example_only_config()};
  o.capture = "outputs";
  Runtime rt(o);
  auto model = load_graph(rt, small_graph());
  model->run({f32({2}, {1, 2})});
  ASSERT_EQ(model->node_io().size(), 3u);
  EXPECT_TRUE(model->node_io()[0].inputs.empty());
  EXPECT_EQ(model->node_io()[0].outputs.size(), 1u);
  EXPECT_EQ(model->node_io()[0].input_sources, (std::vector<std::string>{"x"}));
}

TEST(Executor, NoCaptureRecordsNothing) {
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, small_graph());
  model->run({f32({2}, {1, 2})});
  EXPECT_TRUE(model->node_io().empty());
}

TEST(Executor, CallbackSeesEveryNodeInOrder) {
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, small_graph());
  std::vector<std::string> seen;
  model->set_node_callback([&](const NodeEvent& e) {
    seen.push_back(e.node + "@" + e.backend);
    EXPECT_EQ(e.outputs.size(), 1u);
  });
  model->run({f32({2}, {1, 2})});
  EXPECT_EQ(seen, (std::vector<std::string>{"block.relu@example", "block.add@example", "head.mul@example"}));
}

TEST(Executor, CallbackEventsCarryIndexAndInputSources) {
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, small_graph());
  std::vector<std::pair<size_t, std::vector<std::string>>> seen;
  model->set_node_callback([&](const NodeEvent& e) {
    ASSERT_NE(e.input_sources, nullptr) << e.node;
    EXPECT_EQ(e.input_sources->size(), e.inputs.size()) << e.node;
    seen.emplace_back(e.index, *e.input_sources);
  });
  model->run({f32({2}, {1, 2})});
  using Seen = std::vector<std::pair<size_t, std::vector<std::string>>>;
  EXPECT_EQ(seen, (Seen{{0, {"x"}}, {1, {"r", "x"}}, {2, {"a", "a"}}}));
}

// Capture "stream": no records kept; each node goes to the callback, which must be set.
TEST(Executor, StreamCaptureNeedsASinkAndKeepsNothing) {
  Options o{example_only_config()};
  o.capture = "stream";
  Runtime rt(o);
  auto model = load_graph(rt, small_graph());
  try {
    model->run({f32({2}, {1, 2})});
    ADD_FAILURE() << "a stream run without a sink ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node_io capture 'stream'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("set_node_callback"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--save-node-io"), std::string::npos) << msg;
  }
  std::vector<std::string> seen;
  model->set_node_callback([&](const NodeEvent& e) { seen.push_back(e.node + "#" + std::to_string(e.index)); });
  EXPECT_EQ(values(model->run({f32({2}, {1, 2})})[0]), (std::vector<float>{4, 16}));
  EXPECT_TRUE(model->node_io().empty());
  EXPECT_EQ(seen, (std::vector<std::string>{"block.relu#0", "block.add#1", "head.mul#2"}));
  RunContext bare;  // the model's own callback is not this context's
  EXPECT_NE(error_of([&] { model->run({f32({2}, {1, 2})}, bare); }).find("stream"), std::string::npos);

  o.capture = "inputs";
  EXPECT_NE(error_of([&] { Runtime bad(o); }).find("is not none, outputs, all or stream"), std::string::npos);
}

TEST(Executor, InputErrorsNameTheInputAndWhatWasExpected) {
  ir::Graph g = small_graph();
  g.values[g.inputs[0]].shape = {4};
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, std::move(g));
  EXPECT_NE(error_of([&] { model->run({}); }).find("takes 1 input(s), got 0"), std::string::npos);
  auto wrong_dtype = Tensor::empty(kI64, {4});
  std::string msg = error_of([&] { model->run({wrong_dtype}); });
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected dtype float32, got int64"), std::string::npos) << msg;
  msg = error_of([&] { model->run({f32({3}, {1, 2, 3})}); });
  EXPECT_NE(msg.find("input 'x' expects [4] (dim 0 is fixed to 4 by the model's declared shape)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("got [3]"), std::string::npos) << msg;
}

// An input declared kAnyDtype (no op of the model pins it: an int64 mask in `1.0 - mask`)
// is never refused for its dtype; what runs it decides (here the float32-only example plugin).
TEST(Executor, InputOfAnyDtypeTakesWhatItIsGiven) {
  ir::Graph g = small_graph();
  g.values[g.inputs[0]].dtype = kAnyDtype;
  Runtime rt(Options{example_only_config()});
  auto model = load_graph(rt, std::move(g));
  EXPECT_EQ(dtype_name(model->input_dtypes().at(0)), "any");
  auto out = model->run({f32({2}, {-1, 2})});  // (relu(x) + x)^2
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 1.0f);
  EXPECT_EQ(out[0].data<float>()[1], 16.0f);
  std::string msg = error_of([&] { model->run({Tensor::empty(kI64, {2})}); });
  EXPECT_EQ(msg.find("expected dtype"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64"), std::string::npos) << msg;  // what runs it refuses it, naming it
}

TEST(Executor, UnsupportedOpNamesOpNodeModuleAndBackendsAsked) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {2});
  g.add_node("encoder.mystery", "aten::frobnicate", {x}, {"y"}, {}, "encoder.layers.0");
  g.outputs = {g.find_value("y")};
  Runtime rt(Options{example_only_config("[selection]\ndefault = [\"example\"]\n")});
  auto model = load_graph(rt, std::move(g));
  std::string msg = error_of([&] { model->run({f32({2}, {1, 2})}); });
  EXPECT_NE(msg.find("aten::frobnicate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("encoder.mystery"), std::string::npos) << msg;
  EXPECT_NE(msg.find("encoder.layers.0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("example: no kernel for aten::frobnicate"), std::string::npos) << msg;
}

TEST(Executor, StrictModeTurnsARejectionIntoAnError) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kI64, {2});
  g.add_node("idx.relu", "aten::relu", {x}, {"y"});
  g.outputs = {g.find_value("y")};
  Options o{example_only_config("[selection]\ndefault = [\"example\"]\nstrict = true\n")};
  Runtime rt(o);
  auto model = load_graph(rt, std::move(g));
  auto ints = Tensor::empty(kI64, {2});
  std::string msg = error_of([&] { model->run({ints}); });
  EXPECT_NE(msg.find("strict mode"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dtype int64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("idx.relu"), std::string::npos) << msg;
}

TEST(Executor, PlanReportsWinnerAndReason) {
  Runtime rt(Options{example_only_config("[selection]\ndefault = [\"example\"]\n")});
  auto model = load_graph(rt, small_graph());
  auto plan = model->plan({f32({2}, {1, 2})});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].backend, "example");
  EXPECT_EQ(plan[0].module_path, "block");
  EXPECT_NE(plan[0].reason.find("default list"), std::string::npos) << plan[0].reason;
}

TEST(Executor, ModelAndOutputsOutliveTheRuntime) {
  std::unique_ptr<Model> model;
  {
    Runtime rt(Options{example_only_config()});
    model = load_graph(rt, small_graph());
  }  // the Runtime is gone; the model keeps its plugins loaded
  std::vector<Tensor> out = model->run({f32({2}, {1, 2})});
  model.reset();
  EXPECT_EQ(values(out[0]), (std::vector<float>{4, 16}));
}

// A tensor placed in another's memory (an in-place write, a view) keeps the memory's owner,
// not the tensor it was placed over: views of views do not chain.
TEST(Tensor, ViewsOfViewsKeepTheMemoryOwnerNotTheChain) {
  const DLDataType f32{kDLFloat, 32, 1};
  Tensor base = Tensor::uninitialized(f32, {4});
  auto view_of = [&](const Tensor& t) {
    Tensor v = Tensor::from_blob(t.raw_data(), f32, {4}, {}, nullptr);
    v.keep_alive(t.memory_owner());
    return v;
  };
  Tensor first = view_of(base);
  Tensor second = view_of(first);
  EXPECT_EQ(second.memory_owner(), base.owner());
  EXPECT_EQ(first.use_count(), 1) << "the second view does not hold the first";
  const void* bytes = base.raw_data();
  base = Tensor();
  first = Tensor();
  EXPECT_EQ(second.raw_data(), bytes);
  // The second view's reference, and the copy memory_owner() returned.
  EXPECT_EQ(second.memory_owner().use_count(), 2) << "the second view alone keeps the memory";
}
