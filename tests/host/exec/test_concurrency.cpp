// One loaded Model run from 8 threads at once, each thread with its own RunContext and
// its own inputs, many iterations: every result must be bit-identical to a run of the
// same inputs on one thread, and each context must hold its own run's node_io, stats
// and callback calls. Two models: a pure example-plugin graph (no LibTorch anywhere) and
// the demo MLP on configs/example.toml (example + aten; skipped where aten is not built).
// Run it under TSan (cmake --preset tsan) to check the host for data races.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace switchyard;
using namespace sytest;

namespace {

constexpr int kThreads = 8;

// Fewer iterations under a sanitizer (TSan runs ~10x slower); still thousands of runs.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kIterations = 60;
#else
constexpr int kIterations = 300;
#endif

// Deterministic values in [-2, 2): a small LCG, so every input set is reproducible.
std::vector<float> pseudo_random(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
  }
  return v;
}

Tensor make_input(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = Tensor::empty(kF32, shape);
  std::vector<float> v = pseudo_random(static_cast<size_t>(t.numel()), seed);
  std::memcpy(t.raw_data(), v.data(), t.nbytes());
  return t;
}

// The bytes of every output, shapes included, for a bitwise comparison.
std::vector<std::vector<uint8_t>> bytes_of(const std::vector<Tensor>& outs) {
  std::vector<std::vector<uint8_t>> out;
  for (const Tensor& t : outs) {
    Tensor c = t.contiguous();
    std::vector<uint8_t> b(sizeof(int64_t) * c.shape().size() + c.nbytes());
    std::memcpy(b.data(), c.shape().data(), sizeof(int64_t) * c.shape().size());
    std::memcpy(b.data() + sizeof(int64_t) * c.shape().size(), c.raw_data(), c.nbytes());
    out.push_back(std::move(b));
  }
  return out;
}

// x[B, 64] through 24 example-plugin nodes with constants: relu, add, mul and broadcasts.
ir::Graph example_graph() {
  ir::Graph g;
  ir::ValueId h = g.add_input("x", kF32, {-1, 64});
  ir::ValueId x = h;
  for (int i = 0; i < 8; ++i) {
    const std::string s = std::to_string(i);
    ir::ValueId scale = g.add_constant("scale" + s, make_input({64}, 1000 + i));
    ir::ValueId shift = g.add_constant("shift" + s, make_input({1, 64}, 2000 + i));
    g.add_node("mul" + s, "aten::mul", {h, scale}, {"m" + s}, {}, "block" + s);
    g.add_node("add" + s, "aten::add", {g.find_value("m" + s), shift}, {"a" + s}, {}, "block" + s);
    // A residual from the input keeps x alive across the graph (lifetimes matter too).
    g.add_node("relu" + s, "aten::relu", {g.find_value("a" + s)}, {"r" + s}, {}, "block" + s);
    h = g.find_value("r" + s);
    if (i % 3 == 2) {
      g.add_node("res" + s, "aten::add", {h, x}, {"h" + s}, {}, "block" + s);
      h = g.find_value("h" + s);
    }
  }
  g.outputs = {h, g.find_value("a3")};
  return g;
}

struct Workload {
  std::vector<std::vector<Tensor>> inputs;                  // per input set
  std::vector<std::vector<std::vector<uint8_t>>> expected;  // per input set
};

// Runs `model` from kThreads threads at once; thread t cycles through its own input sets
// (workloads[t]) for kIterations runs and compares every output with the expected bytes.
// Checks that the RunContext of each thread sees only its own runs.
void run_concurrently(const Model& model, const std::vector<Workload>& workloads, size_t num_nodes, bool captured) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<int> mismatches{0}, errors{0}, context_mixups{0};
  std::vector<std::string> first_error(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RunContext ctx;
      size_t callback_calls = 0;
      bool callback_wrong_thread = false;
      const std::thread::id me = std::this_thread::get_id();
      ctx.set_node_callback([&](const NodeEvent&) {
        ++callback_calls;
        callback_wrong_thread |= std::this_thread::get_id() != me;
      });
      const Workload& w = workloads[t];
      ++ready;
      while (!go.load()) std::this_thread::yield();  // start together: first runs race to plan
      for (int i = 0; i < kIterations; ++i) {
        const size_t k = static_cast<size_t>(i) % w.inputs.size();
        callback_calls = 0;
        try {
          std::vector<Tensor> out = model.run(w.inputs[k], ctx);
          if (bytes_of(out) != w.expected[k]) ++mismatches;
          // This context holds this run's records, not another thread's.
          if (ctx.last_stats().nodes_run != num_nodes || callback_calls != num_nodes || callback_wrong_thread)
            ++context_mixups;
          if (captured) {
            if (ctx.node_io().size() != num_nodes) {
              ++context_mixups;
            } else {
              // The record of the node producing output 0 holds exactly that tensor.
              bool found = false;
              for (const NodeIO& io : ctx.node_io())
                for (const Tensor& o : io.outputs) found |= o.raw_data() == out[0].raw_data();
              if (!found) ++context_mixups;
            }
          }
        } catch (const std::exception& e) {
          if (errors++ == 0) first_error[t] = e.what();
        }
      }
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  go = true;
  for (auto& th : threads) th.join();
  std::string err;
  for (const auto& e : first_error) err += e;
  EXPECT_EQ(errors.load(), 0) << err;
  EXPECT_EQ(mismatches.load(), 0) << "outputs differ from the single-threaded run";
  EXPECT_EQ(context_mixups.load(), 0) << "a RunContext saw another thread's run";
}

// Input sets per thread, and their outputs from `reference` run on this thread alone.
std::vector<Workload> make_workloads(Model& reference, const std::vector<std::vector<int64_t>>& shapes,
                                     int sets_per_thread) {
  std::vector<Workload> out(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int s = 0; s < sets_per_thread; ++s) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < shapes.size(); ++i) {
        std::vector<int64_t> shape = shapes[i];
        if (shape[0] < 0) shape[0] = 1 + (t + s) % 4;  // several batch sizes: several plans
        in.push_back(make_input(shape, static_cast<uint32_t>(100 * t + 10 * s + i)));
      }
      out[t].expected.push_back(bytes_of(reference.run(in)));
      out[t].inputs.push_back(std::move(in));
    }
  }
  return out;
}

std::string source_dir() {
  const char* d = std::getenv("SWITCHYARD_SOURCE_DIR");
  return d != nullptr ? d : SWITCHYARD_TEST_SOURCE_DIR;
}

}  // namespace

TEST(Concurrency, ExampleGraphFromEightThreadsMatchesOneThread) {
  for (const char* capture : {"none", "all"}) {
    SCOPED_TRACE(capture);
    Runtime rt(Options{write_config("example_only", "[plugins]\nload = [\"example\"]\n"), {}, capture});
    const ir::Graph graph = example_graph();
    const size_t num_nodes = graph.nodes.size();
    auto reference = load_graph(rt, graph);
    std::vector<Workload> w = make_workloads(*reference, {{-1, 64}}, 3);
    // A fresh model: the threads' first runs plan concurrently (four signatures).
    auto model = load_graph(rt, graph);
    run_concurrently(*model, w, num_nodes, std::string(capture) != "none");
    // The shared model still works the single-caller way afterwards.
    EXPECT_EQ(bytes_of(model->run(w[0].inputs[0])), w[0].expected[0]);
    EXPECT_EQ(model->last_stats().nodes_run, num_nodes);
  }
}

TEST(Concurrency, PlanFromSeveralThreads) {
  Runtime rt(Options{write_config("example_only", "[plugins]\nload = [\"example\"]\n")});
  auto model = load_graph(rt, example_graph());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto plan = model->plan({make_input({1 + t % 2, 64}, t)});
      for (const PlanEntry& e : plan)
        if (e.backend != "example") ++bad;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Concurrency, DemoMlpOnExampleConfigFromEightThreadsMatchesOneThread) {
  const std::string src = source_dir();
  for (const char* capture : {"none", "outputs"}) {
    SCOPED_TRACE(capture);
    if (!aten_plugin_built())
      GTEST_SKIP() << "missing resource: the aten plugin (not built: SWITCHYARD_WITH_TORCH=OFF)";
    Runtime rt(Options{src + "/configs/example.toml", {}, capture});
    auto reference = rt.load(src + "/tools/demo/mlp.json");
    std::vector<Workload> w = make_workloads(*reference, reference->input_shapes(), 4);
    const size_t num_nodes = reference->plan(w[0].inputs[0]).size();
    // Both backends really run: linear on aten, the element-wise nodes on example.
    bool aten = false, example = false;
    for (const PlanEntry& e : reference->plan(w[0].inputs[0])) {
      aten |= e.backend == "aten";
      example |= e.backend == "example";
    }
    EXPECT_TRUE(aten && example);
    auto model = rt.load(src + "/tools/demo/mlp.json");
    run_concurrently(*model, w, num_nodes, std::string(capture) != "none");
  }
}

TEST(Concurrency, LoadFromSeveralThreadsOnOneRuntime) {
  // Loading (graph file reading, validation, executor set-up) from several threads at
  // once on one Runtime; each thread then runs its own model.
  const std::string src = source_dir();
  Runtime rt(Options{write_config("example_only", "[plugins]\nload = [\"example\"]\n")});
  auto reference = load_graph(rt, example_graph());
  const std::vector<Tensor> in = {make_input({2, 64}, 7)};
  const auto expected = bytes_of(reference->run(in));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        std::unique_ptr<Model> m = t % 2 ? load_graph(rt, example_graph()) : rt.load(src + "/tools/demo/mlp.json");
        if (t % 2) {
          if (bytes_of(m->run(in)) != expected) ++bad;
        } else if (m->input_names() != std::vector<std::string>{"x"}) {
          ++bad;
        }
      } catch (const std::exception&) {
        ++bad;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// Run-time shapes from 8 threads: sym nodes and bound attributes evaluated per signature,
// batch and length different per thread and per run, a plan cache smaller than the number
// of signatures (plans are evicted and re-made while other threads run); every output is
// bit-identical to the same inputs run on one thread.
TEST(Concurrency, RunTimeShapesFromEightThreadsMatchOneThread) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, -1, 16});
  ir::ValueId n = g.add_sym("n", "sym::numel", {x});
  ir::ValueId len = g.add_sym("len", "sym::size", {x}, {{"dim", ir::Attribute::of_int(1)}});
  ir::ValueId lenf = g.add_sym("lenf", "sym::float", {len});
  g.add_node("act", "aten::relu", {x}, {"r"});
  g.add_node("scale", "aten::mul", {g.find_value("r")}, {"m"},
             {{"other", ir::Attribute::of_ref(n, ir::AttrKind::Float)}});
  g.add_node("sum", "aten::add", {g.find_value("m"), x}, {"t"});
  g.add_node("shift", "aten::add", {g.find_value("t")}, {"out"},
             {{"other", ir::Attribute::of_ref(lenf, ir::AttrKind::Float)}});
  g.outputs = {g.find_value("out")};
  Runtime rt(Options{write_config("shapes_threads", "[plugins]\nload = [\"example\"]\n[runtime]\nplan_cache = 4\n")});
  auto reference = load_graph(rt, g);
  std::vector<Workload> w(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int s = 0; s < 3; ++s) {
      const int64_t batch = 1 + (t + s) % 4, length = 8 * (1 + (3 * t + s) % 3);
      std::vector<Tensor> in{make_input({batch, length, 16}, static_cast<uint32_t>(100 * t + s))};
      w[t].expected.push_back(bytes_of(reference->run(in)));
      w[t].inputs.push_back(std::move(in));
    }
  // Sym nodes are evaluated by the host and are not reported as nodes run: count as a run does.
  const size_t num_nodes = reference->last_stats().nodes_run;
  EXPECT_EQ(num_nodes, 4u);
  auto model = load_graph(rt, g);  // fresh: the threads' first runs plan concurrently
  run_concurrently(*model, w, num_nodes, false);
}
