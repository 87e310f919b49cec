// Out of memory is always called that: every host allocation a run makes is failed in
// turn (util/host_alloc.hpp's test hook) and each gives a clean ErrorKind::OutOfMemory
// naming what asked and the bytes, after which the model still runs correctly; plugins
// that report SY_ERROR_OUT_OF_MEMORY or throw std::bad_alloc reach the user the same way.
// Under asan_core, LeakSanitizer checks that no failure leaks.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"
#include "util/host_alloc.hpp"
#include "util/memory_limit.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace switchyard;
using namespace sytest;

namespace {

// relu(x) * numel(x) + relu(x) + size(x, 0): a few nodes, arena reuse and sym values.
// `batch` -1: any batch; else the only one the model takes.
ir::Graph small_model(int64_t batch = -1) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {batch, 3});
  ir::ValueId n = g.add_sym("n", "sym::numel", {x});
  ir::ValueId b = g.add_sym("b", "sym::size", {x}, {{"dim", ir::Attribute::of_int(0)}});
  ir::ValueId bf = g.add_sym("bf", "sym::float", {b});
  g.add_node("act", "aten::relu", {x}, {"r"});
  g.add_node("scale", "aten::mul", {g.find_value("r")}, {"s"},
             {{"other", ir::Attribute::of_ref(n, ir::AttrKind::Float)}});
  g.add_node("sum", "aten::add", {g.find_value("s"), g.find_value("r")}, {"t"});
  g.add_node("shift", "aten::add", {g.find_value("t")}, {"out"},
             {{"other", ir::Attribute::of_ref(bf, ir::AttrKind::Float)}});
  g.outputs = {g.find_value("out")};
  return g;
}

Tensor rows_of(int64_t rows) {
  std::vector<float> v(static_cast<size_t>(rows * 3));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 2.0f;
  return f32({rows, 3}, v);
}

std::vector<float> expected(const Tensor& x) {
  std::vector<float> in = values(x), out;
  const float n = static_cast<float>(x.numel()), b = static_cast<float>(x.shape()[0]);
  for (float v : in) {
    const float r = v > 0 ? v : 0;
    out.push_back(r * n + r + b);
  }
  return out;
}

struct HookOff {
  ~HookOff() { test_hooks::fail_host_alloc_at(0); }
};

// Fails allocation 1, 2, ... of `run` until a run makes fewer allocations than N; every
// failed run must be OutOfMemory naming bytes, and `check` must pass right after it.
template <typename Run, typename Check>
int fail_each_allocation(Run&& run, Check&& check) {
  HookOff off;
  for (uint64_t n = 1; n < 10000; ++n) {
    test_hooks::fail_host_alloc_at(n);
    try {
      run();
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << "allocation " << n << ": " << msg;
      EXPECT_NE(msg.find("out of memory"), std::string::npos) << msg;
      EXPECT_NE(msg.find(" bytes"), std::string::npos) << msg;
      if (std::getenv("SY_TEST_SHOW_OOM") != nullptr)
        std::printf("allocation %llu: %s\n", static_cast<unsigned long long>(n), msg.c_str());
      test_hooks::fail_host_alloc_at(0);
      check();
      continue;
    }
    const uint64_t made = test_hooks::host_alloc_calls();
    test_hooks::fail_host_alloc_at(0);
    if (made < n) return static_cast<int>(n - 1);  // allocation n never happened: all were tried
    check();
  }
  ADD_FAILURE() << "a run made more than 10000 host allocations";
  return -1;
}

Options example_options(const std::string& runtime = "") {
  return Options{write_config("oom_example", "[plugins]\nload = [\"example\"]\n" + runtime)};
}

}  // namespace

TEST(OutOfMemory, EveryHostAllocationOfAPlanningRunFailsCleanly) {
  Runtime rt(example_options());
  const Tensor x = rows_of(5);
  // A fresh model each time, so every run is a planning run.
  const int tried =
      fail_each_allocation([&] { load_graph(rt, small_model())->run({x}); },
                           [&] { EXPECT_EQ(values(load_graph(rt, small_model())->run({x})[0]), expected(x)); });
  EXPECT_GT(tried, 3) << "the planning run should allocate several times";
}

TEST(OutOfMemory, EveryHostAllocationOfAPlannedRunFailsCleanlyAndTheModelStillWorks) {
  Runtime rt(example_options());
  auto model = load_graph(rt, small_model());
  const Tensor x = rows_of(4), y = rows_of(9);
  model->run({x});  // planned; the runs below reuse the plan
  const int tried = fail_each_allocation([&] { model->run({x}); },
                                         [&] {
                                           EXPECT_EQ(values(model->run({x})[0]), expected(x));
                                           EXPECT_EQ(values(model->run({y})[0]), expected(y));
                                         });
  EXPECT_GE(tried, 1) << "a planned run allocates at least its arena or its output";
}

TEST(OutOfMemory, ParallelRunsFailCleanlyToo) {
  Runtime rt(example_options("[runtime]\ninter_op_threads = 2\n"));
  auto model = load_graph(rt, small_model());
  const Tensor x = rows_of(6);
  model->run({x});
  fail_each_allocation([&] { model->run({x}); }, [&] { EXPECT_EQ(values(model->run({x})[0]), expected(x)); });
}

TEST(OutOfMemory, TheMessageNamesNodeOpPluginAndBytes) {
  Runtime rt(
      Options{write_config("oom_noarena", "[plugins]\nload = [\"example\"]\n[runtime]\nmemory_planner = false\n")});
  auto model = load_graph(rt, small_model());
  const Tensor x = rows_of(8);
  model->run({x});
  HookOff off;
  // Without an arena each node's output is its own allocation: the first is node 'act'.
  test_hooks::fail_host_alloc_at(1);
  std::string msg;
  try {
    model->run({x});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    msg = e.what();
  }
  EXPECT_NE(msg.find("node 'act' (op aten::relu) on plugin 'example': out of memory: a float32 [8, 3] tensor asked "
                     "for 96 bytes"),
            std::string::npos)
      << msg;
}

TEST(OutOfMemory, AnImpossibleShapeIsOutOfMemoryNotACrash) {
  Runtime rt(example_options());
  auto model = load_graph(rt, small_model());
  Tensor x = rows_of(2);
  try {
    Tensor::empty(kF32, {int64_t{1} << 40, int64_t{1} << 40});
    ADD_FAILURE() << "a 2^80-element tensor was allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("more than 2^64 bytes"), std::string::npos) << e.what();
  }
  // A zero dimension empties it, however large the others (found by fuzz_shapes).
  EXPECT_EQ(Tensor::empty(kI64, {4, 1, int64_t{1} << 61, 0}).nbytes(), 0u);
  EXPECT_EQ(values(model->run({x})[0]), expected(x));
}

namespace {

std::pair<ErrorKind, std::string> run_misbehaving(const std::string& op) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {3});
  g.add_node("blk.big", op, {x}, {"y"}, {}, "blk");
  g.outputs = {g.find_value("y")};
  Runtime rt(Options{write_config("oom_bad", std::string("[plugins]\nload = [\"example\", \"") + SY_TEST_PLUGIN_DIR +
                                                 "/libswitchyard-misbehaving.so\"]\n[selection]\nstrict = true\n")});
  auto model = load_graph(rt, std::move(g));
  try {
    model->run({f32({3}, {1, 2, 3})});
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::Internal, "no error"};
}

}  // namespace

TEST(OutOfMemory, APluginReportingOutOfMemoryIsOutOfMemory) {
  auto [kind, msg] = run_misbehaving("bad::oom");
  EXPECT_EQ(kind, ErrorKind::OutOfMemory) << msg;
  EXPECT_NE(msg.find("node 'blk.big' (op bad::oom, module blk) on plugin 'misbehaving': out of memory (status 3): "
                     "could not allocate 1048576 bytes of scratch (its outputs take 12 bytes)"),
            std::string::npos)
      << msg;
}

TEST(OutOfMemory, APluginThrowingBadAllocIsOutOfMemory) {
  auto [kind, msg] = run_misbehaving("bad::bad_alloc");
  EXPECT_EQ(kind, ErrorKind::OutOfMemory) << msg;
  EXPECT_NE(msg.find("node 'blk.big' (op bad::bad_alloc, module blk) on plugin 'misbehaving': out of memory"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("std::bad_alloc"), std::string::npos) << msg;
}

TEST(OutOfMemory, APluginFailingToCreateForLackOfMemoryIsOutOfMemory) {
  auto [kind, msg] = run_misbehaving("bad::oom_create");
  EXPECT_EQ(kind, ErrorKind::OutOfMemory) << msg;
  EXPECT_NE(msg.find("failed to create its kernel: out of memory (status 3): no room to prepack"), std::string::npos)
      << msg;
}

// ---- the memory pre-flight ----------------------------------------------------------

namespace {

struct AvailableBytes {  // sets $SWITCHYARD_MEMORY_AVAILABLE for one test
  explicit AvailableBytes(const std::string& bytes) { setenv("SWITCHYARD_MEMORY_AVAILABLE", bytes.c_str(), 1); }
  ~AvailableBytes() { unsetenv("SWITCHYARD_MEMORY_AVAILABLE"); }
};

}  // namespace

TEST(Preflight, ANewSignatureThatCannotFitIsRefusedBeforeAnythingRuns) {
  AvailableBytes limit("65536");
  Runtime rt(example_options());
  auto model = load_graph(rt, small_model());
  const Tensor small = rows_of(4);
  EXPECT_EQ(values(model->run({small})[0]), expected(small));  // the first signature: nothing to scale from
  const size_t peak = model->memory_plan({small}).estimated_peak_bytes;
  ASSERT_GT(peak, 0u);

  int nodes_run = 0;
  RunContext ctx;
  ctx.set_node_callback([&](const NodeEvent&) { ++nodes_run; });
  const Tensor big = rows_of(100000);  // 1.2 MB of input: about 25,000 times the plan for 4 rows
  std::string msg;
  try {
    model->run({big}, ctx);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    msg = e.what();
  }
  if (std::getenv("SY_TEST_SHOW_OOM") != nullptr) std::printf("%s\n", msg.c_str());
  EXPECT_EQ(nodes_run, 0) << "the pre-flight runs nothing";
  EXPECT_NE(msg.find("memory pre-flight: inputs x float32 [100000, 3] need about "), std::string::npos) << msg;
  EXPECT_NE(msg.find("the plan for [4, 3] peaked at " + std::to_string(peak) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("this process may use only 64.0 KiB (65536 bytes) more (SWITCHYARD_MEMORY_AVAILABLE=65536)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("--no-preflight"), std::string::npos) << msg;

  // The batch it names passes the pre-flight; one more row does not.
  const std::string key = "the largest batch that fits is about ";
  const size_t at = msg.find(key);
  ASSERT_NE(at, std::string::npos) << msg;
  const int64_t fits = std::stoll(msg.substr(at + key.size()));
  EXPECT_EQ(fits, static_cast<int64_t>(65536.0 / (static_cast<double>(peak) / 4.0)));
  ASSERT_GT(fits, 4);
  const Tensor fitting = rows_of(fits);
  EXPECT_EQ(values(model->run({fitting})[0]), expected(fitting));
  EXPECT_NE(error_of([&] { model->run({rows_of(fits * 3)}); }).find("memory pre-flight"), std::string::npos);
}

TEST(Preflight, CanBeTurnedOff) {
  AvailableBytes limit("65536");
  const Tensor small = rows_of(4), big = rows_of(100000);
  Options off = example_options();
  off.no_preflight = true;
  Runtime rt(off);
  EXPECT_FALSE(rt.config().preflight);
  auto model = load_graph(rt, small_model());
  model->run({small});
  EXPECT_EQ(values(model->run({big})[0]), expected(big));

  Runtime rt2(
      Options{write_config("oom_no_preflight", "[plugins]\nload = [\"example\"]\n[runtime]\npreflight = false\n")});
  EXPECT_FALSE(rt2.config().preflight);
  auto model2 = load_graph(rt2, small_model());
  model2->run({small});
  EXPECT_EQ(values(model2->run({big})[0]), expected(big));
}

TEST(Preflight, SmallerOrKnownSignaturesAreNotChecked) {
  AvailableBytes limit("1");  // nothing fits, yet shapes no bigger than a planned one run
  Runtime rt(example_options());
  auto model = load_graph(rt, small_model());
  const Tensor a = rows_of(8), b = rows_of(3);
  model->run({a});
  EXPECT_EQ(values(model->run({a})[0]), expected(a));
  EXPECT_EQ(values(model->run({b})[0]), expected(b));
}

// A model's first signature: measured by planning runs at batch 1 and 8, extrapolated.
TEST(Preflight, AModelsFirstSignatureIsRefusedBeforeAnythingRuns) {
  uint64_t peak1 = 0, peak8 = 0;
  {
    Runtime rt(example_options());
    auto probe = load_graph(rt, small_model());
    peak1 = probe->memory_plan({rows_of(1)}).estimated_peak_bytes;
    peak8 = probe->memory_plan({rows_of(8)}).estimated_peak_bytes;
  }
  ASSERT_GT(peak8, peak1) << "the model's memory grows with the batch";
  const double per_row = static_cast<double>(peak8 - peak1) / 7;
  AvailableBytes limit("65536");
  Runtime rt(example_options());
  auto model = load_graph(rt, small_model());
  int nodes_run = 0;
  RunContext ctx;
  ctx.set_node_callback([&](const NodeEvent&) { ++nodes_run; });
  std::string msg;
  try {
    model->run({rows_of(100000)}, ctx);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    msg = e.what();
  }
  if (std::getenv("SY_TEST_SHOW_OOM") != nullptr) std::printf("%s\n", msg.c_str());
  EXPECT_EQ(nodes_run, 0) << "the pre-flight runs nothing at the asked batch";
  const auto need = static_cast<uint64_t>(static_cast<double>(peak1) + per_row * 99999);
  EXPECT_NE(msg.find("memory pre-flight: inputs x float32 [100000, 3] need about " + human_bytes(need) + " (" +
                     std::to_string(need) +
                     " bytes, extrapolated from planning runs on the inputs' first rows: "
                     "batch 1 peaked at " +
                     std::to_string(peak1) + " bytes, batch 8 at " + std::to_string(peak8) +
                     " bytes; memory taken as linear in the batch)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("this process may use only 64.0 KiB (65536 bytes) more (SWITCHYARD_MEMORY_AVAILABLE=65536)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Nothing ran at batch 100000; --no-preflight"), std::string::npos) << msg;
  const std::string key = "the largest batch that fits is about ";
  const size_t at = msg.find(key);
  ASSERT_NE(at, std::string::npos) << msg;
  const int64_t fits = std::stoll(msg.substr(at + key.size()));
  EXPECT_EQ(fits, static_cast<int64_t>(std::floor(static_cast<double>(65536 - peak1) / per_row)) + 1);
  ASSERT_GE(fits, 16) << "the limit is meant to leave room for a batch that is checked too";

  // On a fresh model, the batch it names passes the first-signature check and runs
  // correctly; three times that batch is refused.
  Runtime rt2(example_options());
  auto fresh = load_graph(rt2, small_model());
  const Tensor fitting = rows_of(fits);
  EXPECT_EQ(values(fresh->run({fitting})[0]), expected(fitting));
  Runtime rt3(example_options());
  auto fresh3 = load_graph(rt3, small_model());
  EXPECT_NE(error_of([&] { fresh3->run({rows_of(fits * 3)}); }).find("extrapolated from planning runs"),
            std::string::npos);
}

TEST(Preflight, AFirstSignatureThatCannotBeMeasuredRunsUnchecked) {
  AvailableBytes limit("1");  // nothing would fit: any refusal here would be a false one
  {                           // a batch under 16: not measured
    Runtime rt(example_options());
    auto model = load_graph(rt, small_model());
    const Tensor x = rows_of(15);
    EXPECT_EQ(values(model->run({x})[0]), expected(x));
  }
  {  // a model that takes only batch 32: no planning run at batch 1 can be made
    Runtime rt(example_options());
    auto model = load_graph(rt, small_model(32));
    const Tensor x = rows_of(32);
    EXPECT_EQ(values(model->run({x})[0]), expected(x));
  }
  {  // --no-preflight
    Options off = example_options();
    off.no_preflight = true;
    Runtime rt(off);
    auto model = load_graph(rt, small_model());
    const Tensor x = rows_of(100000);
    EXPECT_EQ(values(model->run({x})[0]), expected(x));
  }
}

TEST(Preflight, TheHeadroomComesFromTheProcessLimits) {
  unsetenv("SWITCHYARD_MEMORY_AVAILABLE");
  const MemoryHeadroom h = memory_headroom();
  EXPECT_GT(h.bytes, 0u);
  EXPECT_FALSE(h.source.empty()) << "MemAvailable at least is readable on Linux";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP()
      << "missing resource: a sanitizer's shadow memory counts in the address space: RLIMIT_AS is not for sanitized builds";
#endif
  // A lowered RLIMIT_AS, in a child so that this process keeps its own limit.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit rl {};
    getrlimit(RLIMIT_AS, &rl);
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    const uint64_t used = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    rl.rlim_cur = used + (uint64_t{32} << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(3);
    const MemoryHeadroom c = memory_headroom();
    // The headroom is the limit less what is mapped now (which may have shrunk since).
    const bool ok = c.source.find("RLIMIT_AS " + human_bytes(rl.rlim_cur) + ", ") == 0 && c.bytes < rl.rlim_cur &&
                    c.bytes >= (uint64_t{16} << 20);
    if (!ok)
      std::fprintf(stderr, "child headroom: %llu bytes from %s\n", static_cast<unsigned long long>(c.bytes),
                   c.source.c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's headroom did not follow its RLIMIT_AS";
}
