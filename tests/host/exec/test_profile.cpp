// Profiling through the embedding API (RunContext::set_profiling) and Chrome traces:
// every node timed when on, nothing recorded when off; the trace is valid JSON with one
// complete event per node. Example plugin only; no timing assertions.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace switchyard;
using namespace sytest;

namespace {

// x -> relu -> add(r, x) -> mul(a, a) -> out, then a chain of `extra` relu/add nodes.
ir::Graph graph_with(int extra) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("block.relu", "aten::relu", {x}, {"r"}, {}, "block");
  g.add_node("block.add", "aten::add", {g.find_value("r"), x}, {"a"}, {}, "block");
  g.add_node("head.mul", "aten::mul", {g.find_value("a"), g.find_value("a")}, {"m"}, {}, "head");
  ir::ValueId v = g.find_value("m");
  for (int i = 0; i < extra; ++i) {
    const std::string out = "t" + std::to_string(i);
    if (i % 2)
      g.add_node("tail.relu" + std::to_string(i), "aten::relu", {v}, {out}, {}, "tail");
    else
      g.add_node("tail.add" + std::to_string(i), "aten::add", {v, x}, {out}, {}, "tail");
    v = g.find_value(out);
  }
  g.outputs = {v};
  return g;
}

std::unique_ptr<Model> load(const Runtime& rt, int extra) { return load_graph(rt, graph_with(extra)); }

Runtime example_runtime() {
  return Runtime(Options{write_config("profile_example", "[plugins]\nload = [\"example\"]\n")});
}

}  // namespace

TEST(Profile, OffByDefaultRecordsNothing) {
  Runtime rt = example_runtime();
  auto model = load(rt, 0);
  RunContext ctx;
  EXPECT_FALSE(ctx.profiling());
  model->run({f32({3}, {-1, 2, 3})}, ctx);
  EXPECT_TRUE(ctx.profile().empty());
  model->run({f32({3}, {-1, 2, 3})});
  EXPECT_TRUE(model->profile().empty());
}

TEST(Profile, OnRecordsEveryNodeInOrder) {
  Runtime rt = example_runtime();
  auto model = load(rt, 37);  // 40 nodes
  RunContext ctx;
  ctx.set_profiling(true);
  for (int run = 0; run < 2; ++run) {  // the planning run and a planned one
    auto out = model->run({f32({4}, {-1, 0, 1, 2})}, ctx);
    ASSERT_EQ(out.size(), 1u);
    const auto& p = ctx.profile();
    ASSERT_EQ(p.size(), 40u) << "run " << run;
    EXPECT_EQ(p[0].node, "block.relu");
    EXPECT_EQ(p[1].node, "block.add");
    EXPECT_EQ(p[1].op, "aten::add");
    EXPECT_EQ(p[1].module_path, "block");
    EXPECT_EQ(p[2].node, "head.mul");
    EXPECT_EQ(p[39].node, "tail.add36");
    EXPECT_DOUBLE_EQ(p[0].start_ms, 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p[i].backend, "example") << p[i].node;
      EXPECT_GE(p[i].duration_ms, 0.0) << p[i].node;
      // Spans tile the run: each node starts where the one before it ended.
      if (i > 0) EXPECT_NEAR(p[i].start_ms, p[i - 1].start_ms + p[i - 1].duration_ms, 1e-9) << p[i].node;
    }
  }
}

TEST(Profile, TurningItOffClearsTheRecords) {
  Runtime rt = example_runtime();
  auto model = load(rt, 0);
  model->set_profiling(true);
  model->run({f32({2}, {1, 2})});
  EXPECT_EQ(model->profile().size(), 3u);
  model->set_profiling(false);
  model->run({f32({2}, {1, 2})});
  EXPECT_TRUE(model->profile().empty());
}

TEST(Profile, EachContextHasItsOwn) {
  Runtime rt = example_runtime();
  auto model = load(rt, 0);
  RunContext on, off;
  on.set_profiling(true);
  model->run({f32({2}, {1, 2})}, on);
  model->run({f32({2}, {1, 2})}, off);
  EXPECT_EQ(on.profile().size(), 3u);
  EXPECT_TRUE(off.profile().empty());
}

TEST(Profile, ChromeTraceHasOneCompleteEventPerNode) {
  Runtime rt = example_runtime();
  auto model = load(rt, 7);  // 10 nodes
  model->set_profiling(true);
  model->run({f32({3}, {-1, 2, 3})});
  const auto& p = model->profile();
  ASSERT_EQ(p.size(), 10u);
  const std::string path = testing::TempDir() + "/profile_trace.json";
  write_chrome_trace(path, p);

  nlohmann::json trace;
  ASSERT_NO_THROW(trace = nlohmann::json::parse(std::ifstream(path)));
  ASSERT_TRUE(trace.contains("traceEvents"));
  const auto& events = trace["traceEvents"];
  ASSERT_TRUE(events.is_array());
  ASSERT_EQ(events.size(), p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const auto& e = events[i];
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["name"], p[i].node);
    EXPECT_EQ(e["cat"], "example");
    EXPECT_EQ(e["args"]["op"], p[i].op);
    EXPECT_EQ(e["args"]["module_path"], p[i].module_path);
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number());
    EXPECT_NEAR(e["ts"].get<double>(), p[i].start_ms * 1e3, 1e-6);  // microseconds
    EXPECT_NEAR(e["dur"].get<double>(), p[i].duration_ms * 1e3, 1e-6);
    EXPECT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer());
  }
}

TEST(Profile, UnwritableTracePathIsAnIoError) {
  std::string msg = error_of([] {
    write_chrome_trace("/nonexistent-dir/x/trace.json", {NodeProfile{"n", "op", "b", "", 0, 1, 0}});
  });
  EXPECT_NE(msg.find("/nonexistent-dir/x/trace.json: cannot write the trace file"), std::string::npos) << msg;
}
