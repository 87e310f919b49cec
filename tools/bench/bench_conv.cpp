// The conv plugin (oneDNN) against the aten plugin (LibTorch) on the zoo's convolution
// and pooling shapes: resnet18/50 layers, mobilenet_v3 depthwise and squeeze-excite
// convolutions, the ViT patch embedding (16x16, stride 16), and convolutions with the
// activation that follows them (fused into one kernel on conv; two nodes on aten). Each
// case is a small graph with constant weights, run through the embedding API with strict
// selection on one plugin; the time is the median of --runs model runs after warm-up,
// host overhead included for both. Results are checked against aten first (1e-4 of the
// largest reference value). Both libraries run on libgomp with --threads threads (and
// OpenBLAS, which ATen uses for some convolutions, with as many). The plugins' runs are
// interleaved; with one thread the table also gives this thread's CPU time, which a busy
// shared machine disturbs far less than the wall clock. Prints a markdown table on
// stdout. A benchmark, not a test.
//
//   bench_conv --runs 30 --threads 1 --batch 1 --batch 4 [--filter stem]
#include "api/internal.hpp"
#include "bench_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include <time.h>

using namespace sybench;
using switchyard::Tensor;
namespace ir = switchyard::ir;

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kF32{kDLFloat, 32, 1};

struct Case {
  std::string name, shape;
  ir::Graph graph;
  std::vector<Tensor> inputs;
};

Tensor random(Shape shape, uint32_t seed, float scale = 1.f) {
  Tensor t = Tensor::uninitialized(kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

std::string dims(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

ir::Attribute ints(Shape v) { return ir::Attribute::of_ints(std::move(v)); }

// aten::_convolution (as the zoo's traces record it) with constant weight and bias,
// optionally followed by an activation node.
Case conv(const std::string& name, Shape x, Shape w, int64_t stride, int64_t pad, int64_t groups = 1,
          const std::string& activation = "") {
  ir::Graph g;
  ir::ValueId in = g.add_input("x", kF32);
  const double fan_in = static_cast<double>(w[1] * w[2] * w[3]);
  ir::ValueId wt = g.add_constant("w", random(w, 2, static_cast<float>(1.0 / std::sqrt(fan_in))));
  ir::ValueId b = g.add_constant("b", random({w[0]}, 3, 0.1f));
  ir::Attributes a = {{"stride", ints({stride, stride})},
                      {"padding", ints({pad, pad})},
                      {"dilation", ints({1, 1})},
                      {"transposed", ir::Attribute::of_int(0)},
                      {"output_padding", ints({0, 0})},
                      {"groups", ir::Attribute::of_int(groups)},
                      {"benchmark", ir::Attribute::of_int(0)},
                      {"deterministic", ir::Attribute::of_int(0)},
                      {"cudnn_enabled", ir::Attribute::of_int(1)},
                      {"allow_tf32", ir::Attribute::of_int(1)}};
  g.add_node("conv", "aten::_convolution", {in, wt, b}, {"c"}, a);
  if (!activation.empty()) g.add_node("act", activation, {g.find_value("c")}, {"y"});
  g.outputs = {g.find_value(activation.empty() ? "c" : "y")};
  std::string shape = dims(x) + " * " + dims(w) + " s" + std::to_string(stride) + " p" + std::to_string(pad) +
                      (groups > 1 ? " g" + std::to_string(groups) : "");
  return {name, shape, std::move(g), {random(x, 1)}};
}

Case pool(const std::string& name, const std::string& op, Shape x, ir::Attributes attrs, const std::string& shape) {
  ir::Graph g;
  ir::ValueId in = g.add_input("x", kF32);
  g.add_node("pool", op, {in}, {"y"}, std::move(attrs));
  g.outputs = {g.find_value("y")};
  return {name, dims(x) + " " + shape, std::move(g), {random(x, 1)}};
}

std::vector<Case> cases(int64_t n) {
  std::vector<Case> out;
  out.push_back(conv("resnet stem 7x7", {n, 3, 224, 224}, {64, 3, 7, 7}, 2, 3));
  out.push_back(conv("resnet stem 7x7 + relu", {n, 3, 224, 224}, {64, 3, 7, 7}, 2, 3, 1, "aten::relu"));
  out.push_back(conv("resnet18 layer1 3x3", {n, 64, 56, 56}, {64, 64, 3, 3}, 1, 1));
  out.push_back(conv("resnet18 layer2.0 3x3 s2", {n, 64, 56, 56}, {128, 64, 3, 3}, 2, 1));
  out.push_back(conv("resnet18 layer3 3x3", {n, 256, 14, 14}, {256, 256, 3, 3}, 1, 1));
  out.push_back(conv("resnet18 layer4 3x3", {n, 512, 7, 7}, {512, 512, 3, 3}, 1, 1));
  out.push_back(conv("resnet50 layer1 1x1 reduce", {n, 256, 56, 56}, {64, 256, 1, 1}, 1, 0));
  out.push_back(conv("resnet50 layer1 1x1 expand", {n, 64, 56, 56}, {256, 64, 1, 1}, 1, 0));
  out.push_back(conv("resnet50 layer3 1x1 reduce", {n, 1024, 14, 14}, {256, 1024, 1, 1}, 1, 0));
  out.push_back(conv("resnet50 layer4 3x3 + relu", {n, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, 1, "aten::relu"));
  out.push_back(conv("mobilenet_v3 depthwise 3x3 s2", {n, 16, 112, 112}, {16, 1, 3, 3}, 2, 1, 16));
  out.push_back(conv("mobilenet_v3 depthwise 5x5", {n, 240, 14, 14}, {240, 1, 5, 5}, 1, 2, 240));
  out.push_back(
      conv("mobilenet_v3 depthwise 5x5 + hardswish", {n, 240, 14, 14}, {240, 1, 5, 5}, 1, 2, 240, "aten::hardswish"));
  out.push_back(conv("mobilenet_v3 1x1 + hardswish", {n, 96, 7, 7}, {576, 96, 1, 1}, 1, 0, 1, "aten::hardswish"));
  out.push_back(
      conv("mobilenet_v3 SE fc2 + hardsigmoid", {n, 144, 1, 1}, {576, 144, 1, 1}, 1, 0, 1, "aten::hardsigmoid"));
  out.push_back(conv("vit patch embedding 16x16 s16", {n, 3, 224, 224}, {768, 3, 16, 16}, 16, 0));
  out.push_back(pool("resnet max_pool2d 3x3 s2", "aten::max_pool2d", {n, 64, 112, 112},
                     {{"kernel_size", ints({3, 3})}, {"stride", ints({2, 2})}, {"padding", ints({1, 1})}}, "k3 s2 p1"));
  out.push_back(pool("resnet50 adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", {n, 2048, 7, 7},
                     {{"output_size", ints({1, 1})}}, "-> 1x1"));
  out.push_back(pool("mobilenet_v3 SE adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", {n, 576, 7, 7},
                     {{"output_size", ints({1, 1})}}, "-> 1x1"));
  return out;
}

std::string strict_config(const std::string& plugin) {
  const std::string path = (std::filesystem::temp_directory_path() / ("bench_conv_" + plugin + ".toml")).string();
  std::ofstream(path) << "[plugins]\nload = [\"" << plugin << "\"]\n[selection]\ndefault = [\"" << plugin
                      << "\"]\nstrict = true\n";
  return path;
}

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Largest |a - b| over the largest |b| (at least 1).
double relative_error(const Tensor& got, const Tensor& ref) {
  if (got.shape() != ref.shape()) return INFINITY;
  Tensor a = got.contiguous(), b = ref.contiguous();
  double worst = 0, scale = 1;
  for (int64_t i = 0; i < b.numel(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b.data<float>()[i])));
  }
  return worst / scale;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"conv plugin (oneDNN) vs the aten plugin (LibTorch), on the zoo's conv and pooling shapes"};
  int runs = 30, warmup = 5, threads = 1;
  std::vector<int64_t> batches = {1};
  app.add_option("--runs", runs, "timed runs per case and plugin (median reported)")->check(CLI::Range(20, 100000));
  app.add_option("--warmup", warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "OpenMP threads for both (libgomp)")->check(CLI::Range(1, 1024));
  app.add_option("--batch", batches, "batch sizes")->check(CLI::Range(1, 256));
  std::string filter;
  app.add_option("--filter", filter, "only the cases whose name contains this");
  CLI11_PARSE(app, argc, argv);

  const std::vector<std::string> plugins = {"aten", "conv"};
  std::vector<std::unique_ptr<switchyard::Runtime>> runtimes;
  for (const std::string& p : plugins)
    runtimes.push_back(std::make_unique<switchyard::Runtime>(with_config(strict_config(p))));
  at::set_num_threads(threads);   // omp_set_num_threads on this thread: oneDNN reads the same setting
  set_openblas_threads(threads);  // ATen's non-mkldnn convolutions run on OpenBLAS's own pool
  std::fprintf(stderr, "threads: OpenMP %d (LibTorch says %d), OpenBLAS %d\n", threads, at::get_num_threads(),
               openblas_threads());

  std::printf("| case | batch | shape | aten ms | conv ms | aten / conv |%s\n|---|---:|---|---:|---:|---:|%s\n",
              threads == 1 ? " aten CPU ms | conv CPU ms | aten / conv (CPU) |" : "",
              threads == 1 ? "---:|---:|---:|" : "");
  for (int64_t n : batches) {
    for (Case& c : cases(n)) {
      if (c.name.find(filter) == std::string::npos) continue;
      std::unique_ptr<switchyard::Model> models[2];
      Tensor results[2];
      for (size_t k = 0; k < plugins.size(); ++k) {
        models[k] = load_graph(*runtimes[k], c.graph);
        for (const auto& e : models[k]->plan(c.inputs))
          if (e.backend != plugins[k]) throw std::runtime_error(c.name + ": node " + e.node + " ran on " + e.backend);
        results[k] = models[k]->run(c.inputs)[0];
      }
      if (double err = relative_error(results[1], results[0]); !(err <= 1e-4))
        throw std::runtime_error(c.name + ": conv differs from aten by " + std::to_string(err));
      // Interleaved, so that both see the same load on a shared machine. With one thread
      // the work runs on this thread, so its CPU time leaves out time spent descheduled.
      std::vector<double> wall[2], cpu[2];
      for (int i = 0; i < warmup + runs; ++i)
        for (size_t k = 0; k < plugins.size(); ++k) {
          const double c0 = thread_cpu_ms();
          const double t = time_ms([&] { models[k]->run(c.inputs); });
          if (i >= warmup) {
            wall[k].push_back(t);
            cpu[k].push_back(thread_cpu_ms() - c0);
          }
        }
      const double w0 = median(wall[0]), w1 = median(wall[1]), c0 = median(cpu[0]), c1 = median(cpu[1]);
      std::printf("| %s | %lld | %s | %s | %s | %s |", c.name.c_str(), static_cast<long long>(n), c.shape.c_str(),
                  fmt(w0, 3).c_str(), fmt(w1, 3).c_str(), fmt(w0 / w1, 2).c_str());
      if (threads == 1) std::printf(" %s | %s | %s |", fmt(c0, 3).c_str(), fmt(c1, 3).c_str(), fmt(c0 / c1, 2).c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf(
      "\nmedian of %d runs (the two plugins interleaved) after %d warm-up runs; float32; %d OpenMP thread(s) for both; whole "
      "model->run() of the graph (host overhead included for both); ms = wall clock%s. \"+ act\" rows: one fused "
      "node on conv, two nodes on aten.\n",
      runs, warmup, threads, threads == 1 ? ", CPU ms = this thread's CPU time (robust to a busy machine)" : "");
  return 0;
}
