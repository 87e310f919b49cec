// Parallel runs ([runtime] inter_op_threads > 1, oneTBB): the same results as a sequential
// run, node_io in graph order, every node profiled, errors reported; and deterministic
// mode: bit-identical outputs across runs and across the sequential and parallel
// schedules, on aten kernels that use threads inside (OpenMP, OpenBLAS).
#include "api/internal.hpp"
#include "config/config.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

using namespace switchyard;
using namespace sytest;

// Under TSan, the system's oneTBB (not built with TSan) hides its task hand-offs, so every
// parallel run reports races inside TBB's own code; those tests run in the other builds.
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() \
  GTEST_SKIP()            \
      << "missing resource: a TSan-instrumented oneTBB (Debian's libtbb is not, so its task hand-offs read as races)"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

namespace {

std::vector<float> pseudo_random(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
  }
  return v;
}

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  const std::vector<float> v = pseudo_random(static_cast<size_t>(t.numel()), seed);
  std::memcpy(t.raw_data(), v.data(), t.nbytes());
  return t;
}

bool bit_identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor x = a[i].contiguous(), y = b[i].contiguous();
    if (x.shape() != y.shape() || x.nbytes() != y.nbytes() || std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) != 0)
      return false;
  }
  return true;
}

// x -> `branches` independent chains of `depth` relu/add/mul nodes, summed at the end.
ir::Graph wide_graph(int branches, int depth) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {-1});
  std::vector<ir::ValueId> ends;
  for (int b = 0; b < branches; ++b) {
    ir::ValueId v = x;
    for (int d = 0; d < depth; ++d) {
      const std::string name = "b" + std::to_string(b) + ".n" + std::to_string(d);
      const int kind = (b + d) % 3;
      const std::vector<ir::ValueId> in = kind == 0 ? std::vector<ir::ValueId>{v} : std::vector<ir::ValueId>{v, x};
      v = g.nodes[g.add_node(name,
                             kind == 0   ? "aten::relu"
                             : kind == 1 ? "aten::add"
                                         : "aten::mul",
                             in, {name}, {}, "b" + std::to_string(b))]
              .outputs[0];
    }
    ends.push_back(v);
  }
  ir::ValueId sum = ends[0];
  for (size_t i = 1; i < ends.size(); ++i)
    sum = g.nodes[g.add_node("sum" + std::to_string(i), "aten::add", {sum, ends[i]}, {"sum" + std::to_string(i)})]
              .outputs[0];
  g.outputs = {sum, ends[0]};
  return g;
}

std::string example_config(int inter) {
  return write_config("parallel_example_" + std::to_string(inter),
                      "[plugins]\nload = [\"example\"]\n[runtime]\ninter_op_threads = " + std::to_string(inter) + "\n");
}

}  // namespace

TEST(Parallel, ConfigReadsDeterministic) {
  EXPECT_FALSE(config::parse_config("", "t.toml").deterministic);
  EXPECT_TRUE(config::parse_config("[runtime]\ndeterministic = true\ninter_op_threads = 4\n", "t.toml").deterministic);
  std::string msg = error_of([] { config::parse_config("[runtime]\ndeterministic = 1\n", "t.toml"); });
  EXPECT_NE(msg.find("t.toml:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deterministic"), std::string::npos) << msg;
}

TEST(Parallel, SameResultsAsSequentialNodeIoInGraphOrder) {
  SKIP_UNDER_TSAN();
  Options seq_opts{example_config(1)}, par_opts{example_config(4)};
  seq_opts.capture = par_opts.capture = "outputs";
  Runtime seq_rt(seq_opts), par_rt(par_opts);
  auto seq = load_graph(seq_rt, wide_graph(8, 6));
  auto par = load_graph(par_rt, wide_graph(8, 6));
  for (uint32_t seed = 0; seed < 20; ++seed) {  // the first run plans (sequentially), the rest are parallel
    const std::vector<Tensor> in{random_tensor({257}, seed)};
    const auto want = seq->run(in);
    const auto got = par->run(in);
    ASSERT_TRUE(bit_identical(want, got)) << "seed " << seed;
    EXPECT_EQ(par->last_stats().nodes_run, 8u * 6u + 7u);
    const auto& a = seq->node_io();
    const auto& b = par->node_io();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].node, b[i].node);
      EXPECT_TRUE(bit_identical(a[i].outputs, b[i].outputs)) << a[i].node;
    }
  }
  EXPECT_GT(par->last_stats().peak_live_tensors, 0u);
  EXPECT_LE(par->last_stats().peak_live_tensors, 8u * 2u + 2u);  // early frees still happen
}

TEST(Parallel, ProfilesEveryNodeWithItsWorker) {
  SKIP_UNDER_TSAN();
  Runtime rt(Options{example_config(3)});
  auto model = load_graph(rt, wide_graph(6, 4));
  RunContext ctx;
  ctx.set_profiling(true);
  const std::vector<Tensor> in{random_tensor({64}, 1)};
  model->run(in, ctx);  // planning run
  model->run(in, ctx);
  const auto& p = ctx.profile();
  ASSERT_EQ(p.size(), 6u * 4u + 5u);
  EXPECT_EQ(p[0].node, "b0.n0");  // graph order
  for (const auto& rec : p) {
    EXPECT_GE(rec.start_ms, 0.0) << rec.node;
    EXPECT_GE(rec.duration_ms, 0.0) << rec.node;
    EXPECT_GE(rec.lane, 0) << rec.node;
    EXPECT_LT(rec.lane, 3) << rec.node;
  }
}

TEST(Parallel, AKernelErrorNamesTheNode) {
  SKIP_UNDER_TSAN();
  Options o{example_config(4)};
  o.check_finite = true;
  Runtime rt(o);
  auto model = load_graph(rt, wide_graph(4, 3));
  model->run({random_tensor({8}, 2)});  // plan
  Tensor bad = random_tensor({8}, 3);
  bad.data<float>()[5] = std::numeric_limits<float>::infinity();
  const std::string msg = error_of([&] { model->run({bad}); });
  EXPECT_NE(msg.find("check-finite: node '"), std::string::npos) << msg;
  EXPECT_NO_THROW(model->run({random_tensor({8}, 4)}));  // the model still runs
}

TEST(Parallel, ManyCallersAtOnce) {
  SKIP_UNDER_TSAN();
  Runtime rt(Options{example_config(2)});
  auto model = load_graph(rt, wide_graph(4, 5));
  Runtime seq_rt(Options{example_config(1)});
  auto seq = load_graph(seq_rt, wide_graph(4, 5));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      RunContext ctx;
      for (uint32_t i = 0; i < 50; ++i) {
        const std::vector<Tensor> in{random_tensor({33}, t * 100 + i)};
        if (!bit_identical(model->run(in, ctx), seq->run(in, ctx))) ++mismatches[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

#ifdef SY_TEST_HAVE_ATEN
namespace {

// Branches of aten kernels that split their work across threads: linear (OpenBLAS sgemm),
// softmax and layer_norm (ATen's OpenMP loops), element-wise ops on 64k elements, a sum.
ir::Graph aten_graph() {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {128, 512});
  const ir::ValueId w1 = g.add_constant("w1", random_tensor({512, 512}, 11));
  const ir::ValueId b1 = g.add_constant("b1", random_tensor({512}, 12));
  const ir::ValueId w2 = g.add_constant("w2", random_tensor({256, 512}, 13));
  const ir::ValueId lw = g.add_constant("ln.w", random_tensor({512}, 14));
  const ir::ValueId lb = g.add_constant("ln.b", random_tensor({512}, 15));
  auto out = [&](int32_t node) { return g.nodes[node].outputs[0]; };
  ir::ValueId a = out(g.add_node("a.fc", "aten::linear", {x, w1, b1}, {"a.fc"}));
  a = out(g.add_node("a.tanh", "aten::tanh", {a}, {"a.tanh"}));
  a = out(g.add_node("a.softmax", "aten::softmax", {a}, {"a.softmax"},
                     {{"dim", ir::Attribute::of_int(-1)}, {"dtype", ir::Attribute::none()}}));
  const ir::ValueId b = out(g.add_node("b.ln", "aten::layer_norm", {x, lw, lb}, {"b.ln"},
                                       {{"normalized_shape", ir::Attribute::of_ints({512})},
                                        {"eps", ir::Attribute::of_float(1e-5)},
                                        {"cudnn_enable", ir::Attribute::of_int(0)}}));
  ir::ValueId c = out(g.add_node("c.fc", "aten::linear", {x, w2, ir::kNoValue}, {"c.fc"}));
  c = out(g.add_node("c.relu", "aten::relu", {c}, {"c.relu"}));
  const ir::ValueId d = out(g.add_node("d.mul", "aten::mul", {x, x}, {"d.mul"}));
  ir::ValueId ab = out(g.add_node("ab.add", "aten::add", {a, b}, {"ab.add"}, {{"alpha", ir::Attribute::of_int(1)}}));
  ab = out(g.add_node("abd.add", "aten::add", {ab, d}, {"abd.add"}, {{"alpha", ir::Attribute::of_int(1)}}));
  // A full sum: its partial sums follow the thread count, so its bits do too.
  const ir::ValueId e = out(g.add_node(
      "e.sum", "aten::sum", {d}, {"e.sum"},
      {{"dim", ir::Attribute::none()}, {"keepdim", ir::Attribute::of_int(0)}, {"dtype", ir::Attribute::none()}}));
  g.outputs = {ab, c, e};
  return g;
}

std::string aten_config(int inter) {
  return write_config("parallel_aten_" + std::to_string(inter),
                      "[plugins]\nload = [\"aten\"]\n[runtime]\nintra_op_threads = 2\ndeterministic = true\n"
                      "inter_op_threads = " +
                          std::to_string(inter) + "\n");
}

}  // namespace

TEST(Parallel, DeterministicModeIsBitIdenticalSequentialVsParallel) {
  SKIP_UNDER_TSAN();
  Runtime seq_rt(Options{aten_config(1)});
  Runtime par_rt(Options{aten_config(4)});
  auto seq = load_graph(seq_rt, aten_graph());
  auto par = load_graph(par_rt, aten_graph());
  for (uint32_t seed = 0; seed < 3; ++seed) {
    const std::vector<Tensor> in{random_tensor({128, 512}, 100 + seed)};
    const auto first = seq->run(in);
    ASSERT_EQ(first.size(), 3u);
    ASSERT_EQ(first[0].shape(), (std::vector<int64_t>{128, 512}));
    ASSERT_EQ(first[1].shape(), (std::vector<int64_t>{128, 256}));
    for (int run = 0; run < 8; ++run) {
      EXPECT_TRUE(bit_identical(first, seq->run(in))) << "sequential run " << run << ", seed " << seed;
      EXPECT_TRUE(bit_identical(first, par->run(in))) << "parallel run " << run << ", seed " << seed;
    }
  }
}
#endif
