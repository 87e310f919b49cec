// Endurance: one model run 1,000 times in one process must not grow. The resident set
// size (/proc/self/statm) after run 100 and after the last run differ by less than 2%.
//   - ZooResnet18: resnet18 from the model zoo at batch 1 on configs/default.toml
//     (example + aten), where $SWITCHYARD_ZOO_DIR/zoo.json lists it and the TorchScript
//     importer is built; skipped otherwise.
//   - ExampleGraph: a LibTorch-free graph of example-plugin nodes on [16, 4096] tensors,
//     with node_io capture "all" and a node callback, so that per-run records are
//     replaced, not accumulated.
//   - DemoMlp: tools/demo/mlp.json on configs/default.toml (skipped without aten).
// $SWITCHYARD_ENDURANCE_RUNS overrides the run count (at least 200). Under ASan or TSan
// the runs are fewer and RSS is printed but not checked: their allocators (quarantine,
// shadow memory) change RSS, and LeakSanitizer checks for leaks there instead.
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>
#ifdef SWITCHYARD_TEST_HAVE_TORCHSCRIPT
#include <switchyard/torchscript.hpp>
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
constexpr bool kSanitized = true;
constexpr int kDefaultRuns = 200;
#else
constexpr bool kSanitized = false;
constexpr int kDefaultRuns = 1000;
#endif
constexpr int kWarmupRuns = 100;      // RSS is compared from here on
constexpr double kMaxGrowth = 0.02;   // 2%

int runs() {
  const char* env = std::getenv("SWITCHYARD_ENDURANCE_RUNS");
  int n = env != nullptr ? std::atoi(env) : kDefaultRuns;
  return n < 2 * kWarmupRuns ? 2 * kWarmupRuns : n;
}

// Resident set size in bytes: /proc/self/statm's second field, in pages.
size_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// Runs `model` runs() times on `inputs`, printing RSS along the way; checks that every
// run gives the first run's outputs and that RSS after the last run is within 2% of RSS
// after run 100.
void endure(const char* name, Model& model, const std::vector<Tensor>& inputs) {
  const int n = runs();
  std::vector<float> first;
  size_t rss_warm = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= n; ++i) {
    std::vector<Tensor> out = model.run(inputs);
    ASSERT_FALSE(out.empty());
    std::vector<float> v = values(out[0]);
    if (i == 1) first = v;
    else if (v != first) FAIL() << name << ": run " << i << " differs from run 1";
    if (i == kWarmupRuns) {
      rss_warm = rss_bytes();
      start = std::chrono::steady_clock::now();
    }
    if (i == kWarmupRuns || i % 250 == 0 || i == n)
      std::printf("  %-12s after run %5d: RSS %8.2f MiB\n", name, i, mib(rss_bytes()));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t rss_end = rss_bytes();
  const double growth = (static_cast<double>(rss_end) - static_cast<double>(rss_warm)) / static_cast<double>(rss_warm);
  std::printf("  %-12s %d runs; runs %d..%d: %.2f ms/run; RSS after run %d %.2f MiB, after run %d %.2f MiB "
              "(%+.3f%%)%s\n",
              name, n, kWarmupRuns + 1, n, 1000.0 * seconds / (n - kWarmupRuns), kWarmupRuns, mib(rss_warm), n,
              mib(rss_end), 100.0 * growth, kSanitized ? " [sanitizer build: not checked]" : "");
  if (!kSanitized)
    EXPECT_LT(std::abs(growth), kMaxGrowth)
        << name << ": RSS went from " << rss_warm << " to " << rss_end << " bytes between run " << kWarmupRuns
        << " and run " << n;
}

std::string source_dir() {
  const char* d = std::getenv("SWITCHYARD_SOURCE_DIR");
  return d != nullptr ? d : SWITCHYARD_TEST_SOURCE_DIR;
}

bool has_plugin(const Runtime& rt, const std::string& name) {
  for (const auto& p : rt.plugins())
    if (p.name == name) return true;
  return false;
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
  GTEST_SKIP() << "built without the TorchScript importer";
#else
  const char* dir = std::getenv("SWITCHYARD_ZOO_DIR");
  std::ifstream index(std::string(dir != nullptr ? dir : "") + "/zoo.json");
  if (dir == nullptr || !index) GTEST_SKIP() << "no $SWITCHYARD_ZOO_DIR/zoo.json (the zoo fixture)";
  std::string module, inputs_file;
  const nlohmann::json zoo = nlohmann::json::parse(index);
  for (const auto& m : zoo["models"])
    if (m["stem"] == "resnet18")
      for (const auto& b : m["batches"])
        if (b["batch"] == 1) {
          module = b["module"];
          inputs_file = b["inputs"];
        }
  if (module.empty()) GTEST_SKIP() << "the zoo has no resnet18 at batch 1";
  torchscript::register_loader();
  Runtime rt(Options{source_dir() + "/configs/default.toml"});
  auto model = rt.load(std::string(dir) + "/" + module);
  endure("resnet18", *model, torchscript::load_tensors(std::string(dir) + "/" + inputs_file));
#endif
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
  auto model = rt.load_graph(std::move(g));
  size_t events = 0;
  model->set_node_callback([&](const NodeEvent& e) { events += e.outputs.size(); });
  endure("example", *model, {filled({16, 4096}, 0.0f)});
  EXPECT_EQ(model->node_io().size(), 24u);  // the last run's records only
  EXPECT_EQ(events, 24u * static_cast<size_t>(runs()));
}

TEST(Endurance, DemoMlp) {
  Runtime rt(Options{source_dir() + "/configs/default.toml"});
  if (!has_plugin(rt, "aten")) GTEST_SKIP() << "the aten plugin is not built";
  auto model = rt.load(source_dir() + "/tools/demo/mlp.json");
  endure("demo_mlp", *model, {filled({2, 8}, 0.25f)});
}
