// Endurance: one model run 1,000 times in one process must not grow. The resident set
// size (/proc/self/statm, after malloc_trim hands free heap pages back) and malloc's
// bytes in use, after run 100 and after the last run, each differ by less than 2%.
//   - SmallCnn: a zoo-like CNN built in memory (conv, residual add, max pool, adaptive
//     average pool, flatten view, linear) through aten + example in default.toml's
//     backend order; kernel-made outputs, adopted views and host buffers all recycle.
//   - ExampleGraph: a LibTorch-free graph of example-plugin nodes on [16, 4096] tensors,
//     with node_io capture "all" and a node callback, so that per-run records are
//     replaced, not accumulated.
//   - DemoMlp: tools/demo/mlp.json (skipped without aten).
//   - ZooResnet18: resnet18 from the model zoo at batch 1. It
//     takes minutes for 1,000 runs here, so it runs only when SWITCHYARD_ENDURANCE_ZOO=1
//     and $SWITCHYARD_ZOO_DIR/zoo.json lists it (cmake --build build --target zoo):
//       SWITCHYARD_ENDURANCE_ZOO=1 ctest --test-dir build -R test_endurance -V
// The aten models run on default.toml's backend order with one intra-op thread
// ($SWITCHYARD_ENDURANCE_THREADS to change it; see endurance_config below).
// $SWITCHYARD_ENDURANCE_RUNS overrides the run count (at least 200). Under ASan or TSan
// the runs are fewer (30, RSS compared from run 10) and RSS is printed but not checked:
// their allocators (quarantine, shadow memory) change RSS, and LeakSanitizer checks for
// leaks there instead.
#include "api/internal.hpp"
#include "exec/memory_plan.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>
#ifdef SWITCHYARD_TEST_HAVE_TORCHSCRIPT
#include <switchyard/torchscript.hpp>
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace switchyard;
using namespace sytest;

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
// resnet18 takes ~2 s a run under ASan here (fresh, poisoned memory for every large
// allocation): a few dozen runs, for LeakSanitizer and TSan to watch.
constexpr bool kSanitized = true;
constexpr int kDefaultRuns = 30;
constexpr int kWarmupRuns = 10;
#else
constexpr bool kSanitized = false;
constexpr int kDefaultRuns = 1000;
constexpr int kWarmupRuns = 100;  // RSS is compared from here on
#endif
constexpr double kMaxGrowth = 0.02;  // 2%

int runs() {
  const char* env = std::getenv("SWITCHYARD_ENDURANCE_RUNS");
  int n = env != nullptr ? std::atoi(env) : kDefaultRuns;
  return n < 2 * kWarmupRuns ? 2 * kWarmupRuns : n;
}

// Resident set size in bytes: /proc/self/statm's second field, in pages. Free heap pages
// go back to the OS first (malloc_trim): which freed pages glibc keeps resident varies
// from run to run (by a few MiB, with node_io's fresh buffers), and a leak is not free.
size_t rss_bytes() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// One field of /proc/self/status in bytes, e.g. "RssAnon" (heap, stacks: where a leak
// shows) or "RssFile" (mapped library pages, which the kernel may drop and fault back).
size_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  return 0;
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// Runs `model` runs() times on `inputs`, printing RSS along the way; checks that every
// run gives the first run's outputs and that RSS after the last run is within 2% of RSS
// after run 100.
void endure(const char* name, Model& model, const std::vector<Tensor>& inputs) {
  const int n = runs();
  std::vector<float> first;
  size_t rss_warm = 0, heap_warm = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= n; ++i) {
    std::vector<Tensor> out = model.run(inputs);
    ASSERT_FALSE(out.empty());
    std::vector<float> v = values(out[0]);
    if (i == 1)
      first = v;
    else if (v != first)
      FAIL() << name << ": run " << i << " differs from run 1";
    if (i == kWarmupRuns) {
      rss_warm = rss_bytes();
      heap_warm = exec::heap_bytes_in_use();
      start = std::chrono::steady_clock::now();
    }
    if (i == kWarmupRuns || (!kSanitized && i % 250 == 0) || i == n) {
      const size_t rss = rss_bytes();  // trims first, so the breakdown after it matches
      std::printf(
          "  %-12s after run %5d: RSS %8.2f MiB (anonymous %8.2f MiB, file %8.2f MiB, malloc in use %8.2f MiB)\n", name,
          i, mib(rss), mib(status_bytes("RssAnon")), mib(status_bytes("RssFile")), mib(exec::heap_bytes_in_use()));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t rss_end = rss_bytes(), heap_end = exec::heap_bytes_in_use();
  const double growth = (static_cast<double>(rss_end) - static_cast<double>(rss_warm)) / static_cast<double>(rss_warm);
  const double heap_growth =
      (static_cast<double>(heap_end) - static_cast<double>(heap_warm)) / static_cast<double>(heap_warm);
  std::printf(
      "  %-12s %d runs; runs %d..%d: %.2f ms/run; RSS after run %d %.2f MiB, after run %d %.2f MiB "
      "(%+.3f%%)%s\n",
      name, n, kWarmupRuns + 1, n, 1000.0 * seconds / (n - kWarmupRuns), kWarmupRuns, mib(rss_warm), n, mib(rss_end),
      100.0 * growth, kSanitized ? " [sanitizer build: not checked]" : "");
  if (!kSanitized)
    EXPECT_LT(std::abs(growth), kMaxGrowth) << name << ": RSS went from " << rss_warm << " to " << rss_end
                                            << " bytes between run " << kWarmupRuns << " and run " << n;
  if (!kSanitized)  // malloc's own count: exact, so a leak shows here before RSS moves
    EXPECT_LT(std::abs(heap_growth), kMaxGrowth) << name << ": malloc'd bytes in use went from " << heap_warm << " to "
                                                 << heap_end << " between run " << kWarmupRuns << " and run " << n;
}

std::string source_dir() {
  const char* d = std::getenv("SWITCHYARD_SOURCE_DIR");
  return d != nullptr ? d : SWITCHYARD_TEST_SOURCE_DIR;
}

// configs/default.toml's backends (example, then aten) with $SWITCHYARD_ENDURANCE_THREADS
// intra-op threads (default 1): on a loaded 2-core machine, 2 OpenMP threads spend most
// of a small model's time waiting at barriers (LibTorch alone: resnet18 60 ms/run with 1
// thread, 860 ms with 2, measured side by side), which says nothing about endurance.
std::string endurance_config() {
  const char* env = std::getenv("SWITCHYARD_ENDURANCE_THREADS");
  const std::string threads = env != nullptr ? env : "1";
  return write_config(
      "endurance", "[selection]\ndefault = [\"example\", \"aten\"]\n[runtime]\nintra_op_threads = " + threads + "\n");
}

Tensor filled(std::vector<int64_t> shape, float base) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = base + static_cast<float>(i % 97) * 0.01f - 0.5f;
  return t;
}

}  // namespace

TEST(Endurance, ZooResnet18) {
#ifndef SWITCHYARD_TEST_HAVE_TORCHSCRIPT
  GTEST_SKIP() << "missing resource: built without the TorchScript importer";
#else
  const char* opt_in = std::getenv("SWITCHYARD_ENDURANCE_ZOO");
  if (opt_in == nullptr || std::string(opt_in) != "1")
    GTEST_SKIP()
        << "missing resource: SWITCHYARD_ENDURANCE_ZOO=1 (minutes of machine time for 1,000 resnet18 runs, granted by opting in)";
  const char* dir = std::getenv("SWITCHYARD_ZOO_DIR");
  std::ifstream index(std::string(dir != nullptr ? dir : "") + "/zoo.json");
  if (dir == nullptr || !index) GTEST_SKIP() << "missing resource: no $SWITCHYARD_ZOO_DIR/zoo.json (the zoo fixture)";
  std::string module, inputs_file;
  const nlohmann::json zoo = nlohmann::json::parse(index);
  // at(), not operator[]: on a const json a missing key is undefined behaviour.
  for (const auto& m : zoo.at("models"))
    if (m.at("stem") == "resnet18")
      for (const auto& b : m.at("batches"))
        if (b.at("batch") == 1) {
          module = b.at("module");
          inputs_file = b.at("inputs");
        }
  if (module.empty()) GTEST_SKIP() << "missing resource: the zoo has no resnet18 at batch 1";
  torchscript::register_loader();
  Runtime rt(Options{endurance_config()});
  auto model = rt.load(std::string(dir) + "/" + module);
  endure("resnet18", *model, torchscript::load_tensors(std::string(dir) + "/" + inputs_file));
#endif
}

TEST(Endurance, SmallCnn) {
  // [1, 3, 32, 32] -> conv+relu -> residual block -> max pool -> strided conv+relu ->
  // adaptive average pool -> flatten -> linear -> [1, 10]. Conv and linear run on aten;
  // relu and add on example (default.toml's order), so tensors cross between plugins.
  uint32_t seed = 1;
  auto weight = [&](std::vector<int64_t> shape, float scale) {
    Tensor t = Tensor::empty(kF32, std::move(shape));
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = scale * (static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f);
    }
    return t;
  };
  auto ints = [](std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); };
  ir::Graph g;
  auto conv = [&](const std::string& name, ir::ValueId in, int64_t cin, int64_t cout, int64_t stride) {
    ir::ValueId w = g.add_constant(name + ".weight", weight({cout, cin, 3, 3}, 0.5f));
    ir::ValueId b = g.add_constant(name + ".bias", weight({cout}, 0.1f));
    g.add_node(name, "aten::conv2d", {in, w, b}, {name},
               {{"stride", ints({stride, stride})},
                {"padding", ints({1, 1})},
                {"dilation", ints({1, 1})},
                {"groups", ir::Attribute::of_int(1)}},
               name);
    return g.find_value(name);
  };
  auto relu = [&](const std::string& name, ir::ValueId in) {
    g.add_node(name, "aten::relu", {in}, {name}, {}, name);
    return g.find_value(name);
  };
  ir::ValueId x = g.add_input("x", kF32, {-1, 3, 32, 32});
  ir::ValueId h = relu("relu1", conv("conv1", x, 3, 16, 1));
  ir::ValueId r = conv("block.conv2", relu("block.relu1", conv("block.conv1", h, 16, 16, 1)), 16, 16, 1);
  g.add_node("block.add", "aten::add", {r, h}, {"block.add"}, {{"alpha", ir::Attribute::of_int(1)}}, "block");
  h = relu("block.relu2", g.find_value("block.add"));
  g.add_node("pool", "aten::max_pool2d", {h}, {"pool"},
             {{"kernel_size", ints({2, 2})},
              {"stride", ints({2, 2})},
              {"padding", ints({0, 0})},
              {"dilation", ints({1, 1})},
              {"ceil_mode", ir::Attribute::of_int(0)}},
             "pool");
  h = relu("relu3", conv("conv3", g.find_value("pool"), 16, 32, 2));
  g.add_node("avgpool", "aten::adaptive_avg_pool2d", {h}, {"avgpool"}, {{"output_size", ints({1, 1})}}, "avgpool");
  g.add_node("flatten", "aten::flatten", {g.find_value("avgpool")}, {"flat"},
             {{"start_dim", ir::Attribute::of_int(1)}, {"end_dim", ir::Attribute::of_int(-1)}});
  ir::ValueId fw = g.add_constant("fc.weight", weight({10, 32}, 0.5f));
  ir::ValueId fb = g.add_constant("fc.bias", weight({10}, 0.1f));
  g.add_node("fc", "aten::linear", {g.find_value("flat"), fw, fb}, {"logits"}, {}, "fc");
  g.outputs = {g.find_value("logits")};

  if (!aten_plugin_built()) GTEST_SKIP() << "missing resource: the aten plugin (not built: SWITCHYARD_WITH_TORCH=OFF)";
  Runtime rt(Options{endurance_config()});
  auto model = load_graph(rt, std::move(g));
  const std::vector<Tensor> inputs = {weight({1, 3, 32, 32}, 4.0f)};
  bool aten = false, example = false;
  for (const PlanEntry& e : model->plan(inputs)) {
    aten |= e.backend == "aten";
    example |= e.backend == "example";
  }
  EXPECT_TRUE(aten && example) << "both plugins should run nodes";
  endure("small_cnn", *model, inputs);
}

TEST(Endurance, ExampleGraph) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, 4096});
  ir::ValueId h = x;
  for (int i = 0; i < 8; ++i) {
    const std::string s = std::to_string(i);
    ir::ValueId scale = g.add_constant("scale" + s, filled({4096}, 1.0f));
    g.add_node("mul" + s, "aten::mul", {h, scale}, {"m" + s});
    g.add_node("add" + s, "aten::add", {g.find_value("m" + s), x}, {"a" + s});
    g.add_node("relu" + s, "aten::relu", {g.find_value("a" + s)}, {"r" + s});
    h = g.find_value("r" + s);
  }
  g.outputs = {h};
  Runtime rt(Options{write_config("example_only", "[plugins]\nload = [\"example\"]\n"), {}, "all"});
  auto model = load_graph(rt, std::move(g));
  size_t events = 0;
  model->set_node_callback([&](const NodeEvent& e) { events += e.outputs.size(); });
  endure("example", *model, {filled({16, 4096}, 0.0f)});
  EXPECT_EQ(model->node_io().size(), 24u);  // the last run's records only
  EXPECT_EQ(events, 24u * static_cast<size_t>(runs()));
}

TEST(Endurance, DemoMlp) {
  if (!aten_plugin_built()) GTEST_SKIP() << "missing resource: the aten plugin (not built: SWITCHYARD_WITH_TORCH=OFF)";
  Runtime rt(Options{endurance_config()});
  auto model = rt.load(source_dir() + "/tools/demo/mlp.json");
  endure("demo_mlp", *model, {filled({2, 8}, 0.25f)});
}

// Batch and sequence length change on every run: 8 batch sizes x 8 lengths = 64
// signatures against a plan cache of 16, so plans (kernel instances, arenas) are made
// and evicted all the time. Each output is checked against its signature's first result,
// and RSS after the last run must be within 2% of RSS after the warm-up.
TEST(Endurance, ChangingBatchAndSequenceLength) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, -1, 64});
  ir::ValueId n = g.add_sym("n", "sym::numel", {x});
  ir::ValueId s = g.add_sym("s", "sym::size", {x}, {{"dim", ir::Attribute::of_int(1)}});
  ir::ValueId sf = g.add_sym("sf", "sym::float", {s});
  g.add_node("act", "aten::relu", {x}, {"r"});
  g.add_node("scale", "aten::mul", {g.find_value("r")}, {"m"},
             {{"other", ir::Attribute::of_ref(n, ir::AttrKind::Float)}});
  g.add_node("sum", "aten::add", {g.find_value("m"), x}, {"t"});
  g.add_node("shift", "aten::add", {g.find_value("t")}, {"out"},
             {{"other", ir::Attribute::of_ref(sf, ir::AttrKind::Float)}});
  g.outputs = {g.find_value("out")};
  Runtime rt(
      Options{write_config("endurance_shapes", "[plugins]\nload = [\"example\"]\n[runtime]\nplan_cache = 16\n")});
  auto model = load_graph(rt, std::move(g));

  const int total = runs();
  std::vector<double> first(64, 0.0);  // per signature: the sum of its first output
  std::vector<char> seen(64, 0);
  uint32_t seed = 7;
  size_t rss_warm = 0;
  unsigned long long plans = 0;
  for (int i = 1; i <= total; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const int b = static_cast<int>((seed >> 8) % 8), l = static_cast<int>((seed >> 16) % 8);
    const Tensor in = filled({b + 1, 16 * (l + 1), 64}, 0.01f * static_cast<float>(b));
    const Tensor out = model->run({in})[0];
    plans += model->last_stats().planned ? 1 : 0;
    ASSERT_EQ(out.shape(), in.shape());
    double sum = 0;
    for (float v : values(out)) sum += v;
    const int sig = b * 8 + l;
    if (!seen[sig])
      first[sig] = sum, seen[sig] = 1;
    else
      ASSERT_EQ(sum, first[sig]) << "run " << i << ": batch " << b + 1 << ", length " << 16 * (l + 1);
    if (i == kWarmupRuns) rss_warm = rss_bytes();
    if (i == kWarmupRuns || (!kSanitized && i % 250 == 0) || i == total)
      std::printf(
          "  %-12s after run %5d: RSS %8.2f MiB (anonymous %8.2f MiB, malloc in use %8.2f MiB), plans made %llu\n",
          "shapes", i, mib(rss_bytes()), mib(status_bytes("RssAnon")), mib(exec::heap_bytes_in_use()), plans);
  }
  const size_t rss_end = rss_bytes();
  const double growth = (static_cast<double>(rss_end) - static_cast<double>(rss_warm)) / static_cast<double>(rss_warm);
  std::printf("  %-12s %d runs: RSS after run %d %.2f MiB, after run %d %.2f MiB (%+.3f%%)%s\n", "shapes", total,
              kWarmupRuns, mib(rss_warm), total, mib(rss_end), 100.0 * growth,
              kSanitized ? " [sanitizer build: not checked]" : "");
  if (!kSanitized) EXPECT_LT(std::abs(growth), kMaxGrowth);
  size_t distinct = 0;
  for (char v : seen) distinct += v ? 1 : 0;
  EXPECT_GT(plans, 16u) << "more signatures than the 16-plan cache holds, so plans were evicted";
  EXPECT_GE(plans, distinct) << "every signature is planned at least once";
  // Re-planning after eviction shows once the 64 signatures come round again (the
  // sanitizer builds make only a few dozen runs).
  if (total >= 200) EXPECT_GT(plans, 64u) << "the 16-plan cache should have evicted and re-planned signatures";
}
