// The attention plugin's softmax in a decomposed attention (bmm -> softmax -> bmm), as
// traced transformers have it: the weights are written over the scores, which die there,
// and the result equals the aten plugin running every node. (Single-node cases, strides,
// masked rows and NaNs: check-plugin's cases in host/conformance/cases_elementwise.cpp.)
#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace switchyard;
using namespace sytest;

namespace {

Tensor uniform(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  Tensor t = Tensor::empty(kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// q [B, L, E], k [B, E, L], v [B, L, E] -> bmm -> softmax(dim -1) -> bmm
ir::Graph decomposed_attention() {
  ir::Graph g;
  const ir::ValueId q = g.add_input("q", kF32), k = g.add_input("kt", kF32), v = g.add_input("v", kF32);
  g.add_node("scores", "aten::bmm", {q, k}, {"s"});
  g.add_node("softmax", "aten::softmax", {g.find_value("s")}, {"w"}, {{"dim", ir::Attribute::of_int(-1)}});
  g.add_node("mix", "aten::bmm", {g.find_value("w"), v}, {"out"});
  g.outputs = {g.find_value("out")};
  return g;
}

Runtime runtime_with(const std::string& backends) {
  return Runtime(Options{write_config("softmax_" + std::to_string(backends.size()),
                                      "[plugins]\nload = [\"attention\", \"aten\"]\n[selection]\ndefault = [" +
                                          backends + "]\n")});
}

}  // namespace

TEST(AttentionSoftmax, WritesTheWeightsOverTheScoresAndMatchesAten) {
  const std::vector<Tensor> feeds = {uniform({6, 37, 16}, 1), uniform({6, 16, 37}, 2), uniform({6, 37, 16}, 3)};
  Runtime ours = runtime_with("\"attention\", \"aten\""), ref = runtime_with("\"aten\"");
  auto model = load_graph(ours, decomposed_attention());
  const std::vector<PlanEntry> plan = model->plan(feeds);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].backend, "attention");
  bool in_place = false;
  for (const MemoryValue& v : model->memory_plan(feeds).values)
    in_place |= v.value == "w" && v.placement.rfind("view of s", 0) == 0;
  EXPECT_TRUE(in_place) << "the softmax output should take the scores' buffer";

  const Tensor expected = load_graph(ref, decomposed_attention())->run(feeds)[0];
  for (int run = 0; run < 3; ++run) {  // the first run plans; later ones write in place
    const Tensor got = model->run(feeds)[0];
    ASSERT_EQ(got.shape(), expected.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << "run " << run << ", element " << i;
  }
}
