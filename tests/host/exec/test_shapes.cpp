// Run-time shapes in the executor (example plugin only, no LibTorch): sym:: nodes are
// evaluated from the actual input shapes, bound attributes are resolved per signature,
// and plans are cached per signature in a bounded cache.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

std::string example_config(const std::string& extra = "") {
  return write_config("shapes_example", "[plugins]\nload = [\"example\"]\n" + extra);
}

// out = x * numel(x) + size(x, 0): the multiplier and the addend follow the input's shape.
ir::Graph scaled_by_size() {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, 3});
  ir::ValueId n = g.add_sym("n", "sym::numel", {x});
  ir::ValueId b = g.add_sym("b", "sym::size", {x}, {{"dim", ir::Attribute::of_int(0)}});
  ir::ValueId bf = g.add_sym("bf", "sym::float", {b});
  g.add_node("scale", "aten::mul", {x}, {"y"}, {{"other", ir::Attribute::of_ref(n, ir::AttrKind::Float)}});
  g.add_node("shift", "aten::add", {g.find_value("y")}, {"out"},
             {{"other", ir::Attribute::of_ref(bf, ir::AttrKind::Float)}});
  g.outputs = {g.find_value("out")};
  return g;
}

Tensor filled(int64_t rows, float start) {
  std::vector<float> v(static_cast<size_t>(rows * 3));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return f32({rows, 3}, v);
}

}  // namespace

TEST(RunTimeShapes, SizesAreComputedFromEachRunsInputs) {
  Runtime rt(Options{example_config()});
  auto model = load_graph(rt, scaled_by_size());
  for (int64_t rows : {1, 4, 2, 7}) {
    Tensor x = filled(rows, 0.5f);
    std::vector<float> got = values(model->run({x})[0]), in = values(x);
    ASSERT_EQ(got.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_FLOAT_EQ(got[i], in[i] * static_cast<float>(rows * 3) + static_cast<float>(rows)) << rows << " rows";
  }
}

TEST(RunTimeShapes, ANewSignaturePlansOnceAndARepeatedOneReusesItsPlan) {
  Runtime rt(Options{example_config()});
  auto model = load_graph(rt, scaled_by_size());
  model->run({filled(2, 0)});
  EXPECT_TRUE(model->last_stats().planned);
  model->run({filled(2, 1)});
  EXPECT_FALSE(model->last_stats().planned) << "the same shapes reuse the plan";
  model->run({filled(5, 0)});
  EXPECT_TRUE(model->last_stats().planned) << "new shapes plan again";
  model->run({filled(2, 0)});
  EXPECT_FALSE(model->last_stats().planned) << "the first plan is still cached";
  EXPECT_EQ(values(model->run({filled(5, 0)})[0])[1], 1.0f * 15 + 5);
  EXPECT_FALSE(model->last_stats().planned);
}

TEST(RunTimeShapes, ThePlanCacheIsBoundedAndDropsTheLeastRecentlyUsed) {
  Runtime rt(Options{example_config("[runtime]\nplan_cache = 2\n")});
  auto model = load_graph(rt, scaled_by_size());
  auto planned = [&](int64_t rows) {
    model->run({filled(rows, 0)});
    return model->last_stats().planned;
  };
  EXPECT_TRUE(planned(1));
  EXPECT_TRUE(planned(2));
  EXPECT_FALSE(planned(1));  // 1 is now the most recently used
  EXPECT_TRUE(planned(3));   // evicts 2, the least recently used
  EXPECT_FALSE(planned(1));
  EXPECT_FALSE(planned(3));
  EXPECT_TRUE(planned(2)) << "2 was evicted";
}

TEST(RunTimeShapes, ASizeErrorNamesTheSymNodeAndTheShape) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  ir::ValueId d = g.add_sym("tail", "sym::size", {x}, {{"dim", ir::Attribute::of_int(1)}});  // x has rank 1
  g.add_node("scale", "aten::mul", {x}, {"out"}, {{"other", ir::Attribute::of_ref(d, ir::AttrKind::Float)}});
  g.outputs = {g.find_value("out")};
  Runtime rt(Options{example_config()});
  auto model = load_graph(rt, std::move(g));
  const std::string error = error_of([&] { model->run({f32({2}, {1, 2})}); });
  EXPECT_NE(error.find("node 'tail' (sym::size)"), std::string::npos) << error;
  EXPECT_NE(error.find("out of range for a tensor of shape [2]"), std::string::npos) << error;
}

TEST(RunTimeShapes, PlanShowsSymNodesOnTheHost) {
  Runtime rt(Options{example_config()});
  auto model = load_graph(rt, scaled_by_size());
  auto plan = model->plan({filled(3, 0)});
  ASSERT_EQ(plan.size(), 5u);
  size_t host = 0;
  for (const auto& e : plan) host += e.backend == "host";
  EXPECT_EQ(host, 3u);
  EXPECT_EQ(plan.back().backend, "example");
}
