// The linalg plugin's kernels against the aten plugin (LibTorch 1.13) on zoo shapes: one
// node (or linear -> gelu, which the host fuses onto linalg's fused kernel and aten runs as
// two nodes), weights as graph constants, as in the imported models. Both run through the
// embedding API with the same thread count (intra-op threads and OpenBLAS's), alternating
// run by run; the median of --runs timed runs after --warmup. Outputs are checked against
// aten's (1e-4 of the largest reference value). Prints a markdown table on stdout.
// A benchmark, not a test.
//
//   bench_linalg --runs 30 --warmup 5 --threads 2 [--filter ViT]
#include "api/internal.hpp"
#include "bench_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

using namespace sybench;
using switchyard::Tensor;
namespace ir = switchyard::ir;

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kF32{kDLFloat, 32, 1};

Tensor random(Shape shape, uint32_t seed) {
  Tensor t = Tensor::uninitialized(kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// [rows, cols] seen through memory that holds its transpose (k^T in attention).
Tensor transposed(Shape shape, uint32_t seed) {
  const size_t n = shape.size();
  Shape swapped = shape;
  std::swap(swapped[n - 1], swapped[n - 2]);
  Tensor storage = random(swapped, seed);
  Shape strides = storage.strides();
  std::swap(strides[n - 1], strides[n - 2]);
  Tensor view = Tensor::from_blob(storage.raw_data(), kF32, shape, strides);
  view.keep_alive(storage.owner());
  return view;
}

std::string config(const std::string& plugin, int threads) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("bench-linalg-" + plugin + "-" + std::to_string(::getpid()) + ".toml"))
          .string();
  std::ofstream(path) << "[plugins]\nload = [\"linalg\", \"aten\"]\n[selection]\ndefault = [\"" << plugin
                      << "\"]\nstrict = true\n[runtime]\nintra_op_threads = " << threads << "\n";
  return path;
}

struct Bench {
  std::string label;
  std::vector<std::string> ops;  // a chain: ops[1] (if any) consumes ops[0]'s output
  std::vector<Tensor> args;
  std::vector<bool> constant;
  ir::Attributes attrs;
};

ir::Graph graph_of(const Bench& b, std::vector<Tensor>* feeds) {
  ir::Graph g;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < b.args.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (b.constant[i]) {
      ids.push_back(g.add_constant(name, b.args[i]));
    } else {
      ids.push_back(g.add_input(name, kF32, b.args[i].shape()));
      feeds->push_back(b.args[i]);
    }
  }
  g.add_node("n", b.ops[0], ids, {b.ops.size() > 1 ? "mid" : "y"}, b.attrs);
  if (b.ops.size() > 1) g.add_node("post", b.ops[1], {g.find_value("mid")}, {"y"});
  g.outputs = {g.find_value("y")};
  return g;
}

std::vector<Bench> benches() {
  std::vector<Bench> list;
  uint32_t seed = 1;
  auto linear = [&](std::string label, Shape x, int64_t n, bool gelu) {
    int64_t k = x.back();
    list.push_back(
        {std::move(label),
         gelu ? std::vector<std::string>{"aten::linear", "aten::gelu"} : std::vector<std::string>{"aten::linear"},
         {random(x, seed++), random({n, k}, seed++), random({n}, seed++)},
         {false, true, true},
         {}});
  };
  linear("BERT linear [96, 256] x [256, 1024] + bias", {96, 256}, 1024, false);
  linear("BERT linear+gelu [96, 256] x [256, 1024] (fused)", {96, 256}, 1024, true);
  linear("BERT linear [2, 48, 1024] x [1024, 256] + bias", {2, 48, 1024}, 256, false);
  linear("ViT qkv [197, 768] x [768, 2304] + bias", {197, 768}, 2304, false);
  linear("ViT linear [197, 768] x [768, 3072] + bias", {197, 768}, 3072, false);
  linear("ViT linear+gelu [197, 768] x [768, 3072] (fused)", {197, 768}, 3072, true);
  linear("ViT linear [197, 3072] x [3072, 768] + bias", {197, 3072}, 768, false);
  linear("ViT b4 linear+gelu [4, 197, 768] x [768, 3072] (fused)", {4, 197, 768}, 3072, true);
  linear("resnet50 fc [1, 2048] x [2048, 1000] + bias", {1, 2048}, 1000, false);
  linear("resnet50 fc [4, 2048] x [2048, 1000] + bias", {4, 2048}, 1000, false);
  linear("resnet18 fc [1, 512] x [512, 1000] + bias", {1, 512}, 1000, false);
  list.push_back({"ViT bmm q @ k^T [12, 197, 64] x [12, 64, 197]",
                  {"aten::bmm"},
                  {random({12, 197, 64}, seed++), transposed({12, 64, 197}, seed++)},
                  {false, false},
                  {}});
  list.push_back({"ViT bmm attn @ v [12, 197, 197] x [12, 197, 64]",
                  {"aten::bmm"},
                  {random({12, 197, 197}, seed++), random({12, 197, 64}, seed++)},
                  {false, false},
                  {}});
  list.push_back({"BERT baddbmm [8, 48, 64] x [8, 64, 48] + mask [8, 1, 48]",
                  {"aten::baddbmm"},
                  {random({8, 1, 48}, seed++), random({8, 48, 64}, seed++), transposed({8, 64, 48}, seed++)},
                  {false, false, false},
                  {{"alpha", ir::Attribute::of_float(0.125)}}});
  list.push_back({"matmul [2, 48, 256] x [256, 768]",
                  {"aten::matmul"},
                  {random({2, 48, 256}, seed++), random({256, 768}, seed++)},
                  {false, true},
                  {}});
  list.push_back({"einsum bhqd,bhkd->bhqk [1, 12, 197, 64]",
                  {"aten::einsum"},
                  {random({1, 12, 197, 64}, seed++), random({1, 12, 197, 64}, seed++)},
                  {false, false},
                  {{"equation", ir::Attribute::of_string("bhqd,bhkd->bhqk")}}});
  return list;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(double(t.data<float>()[i])));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 30, warmup = 5, threads = 2;
  std::string filter;
  CLI::App app{"bench_linalg: the linalg plugin vs the aten plugin on zoo shapes"};
  app.add_option("--runs", runs, "timed runs per contender (median)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "untimed runs first")->check(CLI::Range(0, 100000));
  app.add_option("--threads", threads, "threads for both plugins (intra-op, OpenBLAS)")->check(CLI::Range(1, 1024));
  app.add_option("--filter", filter, "only the shapes whose label contains this text");
  CLI11_PARSE(app, argc, argv);

  const std::string linalg_cfg = config("linalg", threads), aten_cfg = config("aten", threads);
  switchyard::Runtime linalg_rt(with_config(linalg_cfg)), aten_rt(with_config(aten_cfg));
  std::filesystem::remove(linalg_cfg), std::filesystem::remove(aten_cfg);
  set_openblas_threads(threads);  // one OpenBLAS under both plugins: the same count for each
  at::set_num_threads(threads);

  std::printf("linalg vs aten, %d thread(s) (OpenBLAS: %d, %s), median of %d runs after %d warm-up\n\n", threads,
              openblas_threads(), openblas_config().c_str(), runs, warmup);
  std::printf("| shape | aten ms | linalg ms | aten / linalg |\n|---|---:|---:|---:|\n");
  int failures = 0;
  for (const Bench& b : benches()) {
    if (b.label.find(filter) == std::string::npos) continue;
    std::vector<Tensor> feeds, aten_feeds;
    auto mine = load_graph(linalg_rt, graph_of(b, &feeds));
    auto ref = load_graph(aten_rt, graph_of(b, &aten_feeds));
    for (const switchyard::PlanEntry& e : mine->plan(feeds))
      if (e.backend != "linalg") throw std::runtime_error(b.label + ": node " + e.node + " not on linalg");
    Tensor got = mine->run(feeds)[0].contiguous(), want = ref->run(aten_feeds)[0].contiguous();
    double err = 0;
    for (int64_t i = 0; i < want.numel(); ++i)
      err = std::max(err, std::fabs(double(got.data<float>()[i]) - double(want.data<float>()[i])));
    if (got.shape() != want.shape() || err > 1e-4 * std::max(1.0, max_abs(want))) {
      std::fprintf(stderr, "%s: linalg differs from aten (max abs %g)\n", b.label.c_str(), err);
      ++failures;
    }
    for (int i = 0; i < warmup; ++i) mine->run(feeds), ref->run(aten_feeds);
    std::vector<double> t_linalg, t_aten;
    for (int i = 0; i < runs; ++i) {  // alternate, so drift and neighbours hit both alike
      t_aten.push_back(time_ms([&] { ref->run(aten_feeds); }));
      t_linalg.push_back(time_ms([&] { mine->run(feeds); }));
    }
    const double a = median(t_aten), l = median(t_linalg);
    std::printf("| %s | %s | %s | %s |\n", b.label.c_str(), fmt(a, 3).c_str(), fmt(l, 3).c_str(),
                fmt(a / l, 2).c_str());
    std::fflush(stdout);
  }
  return failures > 0 ? 1 : 0;
}
