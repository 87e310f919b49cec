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
#include <limits>
#include <random>
#include <string>

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

// fuse = false keeps bmm -> softmax -> bmm three nodes (else the attention plugin runs
// the chain as one fused kernel, below).
// `rules`: TOML appended to the config.
Runtime runtime_with(const std::string& backends, bool fuse = false, const std::string& rules = "") {
  return Runtime(Options{
      write_config("softmax_" + std::to_string(backends.size()) + (fuse ? "_fused" : "") + std::to_string(rules.size()),
                   "[plugins]\nload = [\"attention\", \"aten\"]\n[selection]\ndefault = [" + backends +
                       "]\nfuse = " + (fuse ? "true" : "false") + "\n" + rules)});
}

// The fused chain's threshold down to 0 MiB, so that these small scores take it.
const std::string kFuseAnyScores =
    "[[rules]]\nop = \"aten::bmm\"\nbackends = [\"aten\", \"attention\"]\noptions = { min_scores_mib = 0 }\n";

}  // namespace

TEST(AttentionSoftmax, TheFusedChainMakesNoScoresAndMatchesAten) {
  // bmm -> softmax -> bmm as one attention kernel: one plan entry, no [B, L, L] value.
  const std::vector<Tensor> feeds = {uniform({6, 37, 16}, 4), uniform({6, 16, 37}, 5), uniform({6, 37, 16}, 6)};
  Runtime ours = runtime_with("\"aten\", \"attention\"", /*fuse=*/true, kFuseAnyScores), ref = runtime_with("\"aten\"");
  auto model = load_graph(ours, decomposed_attention());
  const std::vector<PlanEntry> plan = model->plan(feeds);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].backend, "attention") << "the fused chain, though aten comes first for bmm";
  EXPECT_EQ(plan[0].op, "aten::bmm+aten::softmax+aten::bmm");
  for (const MemoryValue& v : model->memory_plan(feeds).values)
    EXPECT_TRUE(v.value != "s" && v.value != "w") << v.value << " should not be made";
  const Tensor expected = load_graph(ref, decomposed_attention())->run(feeds)[0];
  const Tensor got = model->run(feeds)[0];
  ASSERT_EQ(got.shape(), expected.shape());
  for (int64_t i = 0; i < got.numel(); ++i) ASSERT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
}

TEST(AttentionSoftmax, SmallScoresStayThreeOpsByDefault) {
  // 6 x 37 x 37 floats of scores are far under @min_scores_mib's default (8 MiB).
  const std::vector<Tensor> feeds = {uniform({6, 37, 16}, 4), uniform({6, 16, 37}, 5), uniform({6, 37, 16}, 6)};
  Runtime ours = runtime_with("\"aten\", \"attention\"", /*fuse=*/true);
  const std::vector<PlanEntry> plan = load_graph(ours, decomposed_attention())->plan(feeds);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].op, "aten::bmm");
  EXPECT_EQ(plan[0].backend, "aten");
  EXPECT_TRUE(plan[0].fused_from.empty());
}

TEST(AttentionSoftmax, ARuleKeepingBmmOnAtenKeepsTheChainApart) {
  // The fused chain may come from another backend than the head's only where the head's
  // own routing names it.
  const std::vector<Tensor> feeds = {uniform({6, 37, 16}, 4), uniform({6, 16, 37}, 5), uniform({6, 37, 16}, 6)};
  Runtime ours =
      runtime_with("\"aten\", \"attention\"", /*fuse=*/true,
                   "[[rules]]\nop = \"aten::bmm\"\nbackends = [\"aten\"]\noptions = { min_scores_mib = 0 }\n");
  const std::vector<PlanEntry> plan = load_graph(ours, decomposed_attention())->plan(feeds);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].op, "aten::bmm");
  EXPECT_EQ(plan[0].backend, "aten");
}

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

// Masked scores sit far below a row's max; exp of them underflows. The kernel (oneDNN's
// softmax, whose exp clamps its argument) must still give exact zeros for -inf, and the
// true weight for anything at float's normal range or above.
TEST(AttentionSoftmax, ScoresFarBelowTheMaxGiveTheirTrueWeightOrExactZero) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> row = {0.0f, -1.0f, -20.0f, -86.0f, -87.0f, -87.5f, -88.0f, -100.0f, -1e30f, -kInf,
                                  3.0f, -kInf, -kInf,  -kInf,  -kInf,  -kInf,  -kInf,  -kInf,   -kInf,  -kInf};
  ir::Graph g;
  const ir::ValueId s = g.add_input("s", kF32);
  g.add_node("softmax", "aten::softmax", {s}, {"w"}, {{"dim", ir::Attribute::of_int(-1)}});
  g.outputs = {g.find_value("w")};
  Runtime ours = runtime_with("\"attention\"");
  Tensor scores = Tensor::empty(kF32, {2, 20});
  for (int j = 0; j < 20; ++j) {
    scores.data<float>()[j] = row[j];
    scores.data<float>()[20 + j] = j == 10 ? -kInf : row[j];  // row 0's max is 3, row 1's is 0
  }
  const Tensor got = load_graph(ours, std::move(g))->run({scores})[0];
  for (int r = 0; r < 2; ++r) {
    double max = -kInf, sum = 0.0;
    for (int j = 0; j < 20; ++j) max = std::max<double>(max, scores.data<float>()[r * 20 + j]);
    for (int j = 0; j < 20; ++j) sum += std::exp(scores.data<float>()[r * 20 + j] - max);
    for (int j = 0; j < 20; ++j) {
      const double want = std::exp(scores.data<float>()[r * 20 + j] - max) / sum;
      const float w = got.data<float>()[r * 20 + j];
      const std::string where =
          "row " + std::to_string(r) + ", score " + std::to_string(scores.data<float>()[r * 20 + j]);
      if (want == 0.0) {  // -inf, or so far down that exp underflows in double too
        EXPECT_EQ(w, 0.0f) << where;
      } else if (want < 2e-38) {  // near float's smallest normal number: its value or 0
        EXPECT_GE(w, 0.0f) << where;
        EXPECT_LE(w, 2e-38f) << where;
      } else {
        EXPECT_NEAR(w, want, 1e-5 * want) << where;
      }
    }
  }
}

// Scores large enough that the threads scan their own shares for NaN and +inf before
// oneDNN's softmax (whose exp turns a NaN score into a weight of 0): a NaN score in the
// last thread's share, or a +inf in the first's, makes its row NaN, as in ATen; the
// other rows match.
TEST(AttentionSoftmax, ANaNOrInfinityInAnyThreadsShareOfLargeScoresGivesANaNRow) {
  constexpr int64_t kRows = 20000, kCols = 8;  // 160000 scores: past the serial scan's limit
  struct Case {
    const char* what;
    int64_t row;
    float value;
  };
  for (const Case& c : {Case{"NaN in the last share", kRows - 10, std::numeric_limits<float>::quiet_NaN()},
                        Case{"+inf in the first share", 5, std::numeric_limits<float>::infinity()}}) {
    SCOPED_TRACE(c.what);
    auto softmax = [] {
      ir::Graph g;
      const ir::ValueId s = g.add_input("s", kF32);
      g.add_node("softmax", "aten::softmax", {s}, {"w"}, {{"dim", ir::Attribute::of_int(-1)}});
      g.outputs = {g.find_value("w")};
      return g;
    };
    Tensor scores = uniform({kRows, kCols}, 11);
    scores.data<float>()[c.row * kCols + 3] = c.value;
    Runtime ours = runtime_with("\"attention\""), ref = runtime_with("\"aten\"");
    const Tensor expected = load_graph(ref, softmax())->run({scores})[0];
    const Tensor got = load_graph(ours, softmax())->run({scores})[0];
    ASSERT_EQ(got.shape(), expected.shape());
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t j = 0; j < kCols; ++j) {
        const float g = got.data<float>()[r * kCols + j], e = expected.data<float>()[r * kCols + j];
        ASSERT_EQ(std::isnan(e), r == c.row) << "row " << r << ": aten's NaN rows";
        if (std::isnan(e))
          ASSERT_TRUE(std::isnan(g)) << "row " << r << ", column " << j << ": " << g << " where aten has NaN";
        else
          ASSERT_NEAR(g, e, 1e-6f) << "row " << r << ", column " << j;
      }
  }
}
