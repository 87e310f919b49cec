// The shape plugin's copies against the aten plugin on the zoo's shapes: cat (ViT's class
// token + patches), contiguous (a chunk of a fused QKV projection, a transposed bmm
// output) and permute + contiguous (ViT's patch permute, an attention head split). Each
// case is a small graph run through the embedding API with strict selection on one
// plugin; the time is the median of --runs model runs (after warm-up; the plugins take
// turns run by run, so both see the same machine load), host overhead
// included for both. Results are checked byte for byte against aten first. Prints a
// markdown table on stdout. A benchmark, not a test.
//
//   bench_shape --runs 50
#include "api/internal.hpp"
#include "bench_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

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

Tensor random(Shape shape, float seed) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((i * 2654435761u) % 1000) * 0.001f + seed;
  return t;
}

// A strided view over a fresh buffer of `buffer` elements (kept alive by the view).
Tensor strided(Shape buffer, Shape shape, Shape strides, int64_t offset = 0) {
  Tensor b = random(std::move(buffer), 0.5f);
  return Tensor::from_blob(b.data<float>() + offset, kF32, std::move(shape), std::move(strides), [b] {});
}

// A chain of single-input nodes (op, attrs) over one graph input.
ir::Graph chain(const std::vector<std::pair<std::string, ir::Attributes>>& ops) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", kF32);
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string out = "v" + std::to_string(i);
    g.add_node("n" + std::to_string(i), ops[i].first, {v}, {out}, ops[i].second);
    v = g.find_value(out);
  }
  g.outputs = {v};
  return g;
}

ir::Graph cat_graph(int64_t dim) {
  ir::Graph g;
  ir::ValueId a = g.add_input("a", kF32), b = g.add_input("b", kF32);
  g.add_node("cat", "aten::cat", {a, b}, {"y"}, {{"dim", ir::Attribute::of_int(dim)}});
  g.outputs = {g.find_value("y")};
  return g;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const ir::Attributes contiguous;
  auto add_contiguous = [&](std::string name, std::string shape, Tensor input) {
    out.push_back({std::move(name), std::move(shape), chain({{"aten::contiguous", contiguous}}), {std::move(input)}});
  };
  for (int64_t b : {1, 4}) {
    const std::string bs = std::to_string(b);
    // ViT: cat([class_token.expand(B, 1, 768), patches [B, 196, 768]], dim=1)
    out.push_back({"cat (ViT class token + patches)",
                   "[" + bs + ",1,768] + [" + bs + ",196,768], dim 1",
                   cat_graph(1),
                   {strided({1, 1, 768}, {b, 1, 768}, {0, 768, 1}), random({b, 196, 768}, 0.25f)}});
    // ViT: q = linear(x).chunk(3, -1)[0].contiguous(): [197, B, 768] of [197, B, 2304]
    add_contiguous("contiguous (QKV chunk)", "[197," + bs + ",768] of [197," + bs + ",2304]",
                   strided({197, b, 2304}, {197, b, 768}, {b * 2304, 2304, 1}, 768));
    // ViT: bmm output [B*12, 197, 64] transposed(0, 1) -> contiguous
    add_contiguous("contiguous (transposed bmm)", "[197," + std::to_string(12 * b) + ",64]",
                   strided({12 * b, 197, 64}, {197, 12 * b, 64}, {64, 197 * 64, 1}));
    // ViT: conv output [B, 768, 14*14] permute(0, 2, 1) -> [B, 196, 768] contiguous
    out.push_back(
        {"permute + contiguous (ViT patches)",
         "[" + bs + ",768,196] -> (0,2,1)",
         chain({{"aten::permute", {{"dims", ir::Attribute::of_ints({0, 2, 1})}}}, {"aten::contiguous", contiguous}}),
         {random({b, 768, 196}, 0.75f)}});
    // attention heads: [B, 197, 12, 64] permute(0, 2, 1, 3) -> contiguous
    out.push_back(
        {"permute + contiguous (heads)",
         "[" + bs + ",197,12,64] -> (0,2,1,3)",
         chain({{"aten::permute", {{"dims", ir::Attribute::of_ints({0, 2, 1, 3})}}}, {"aten::contiguous", contiguous}}),
         {random({b, 197, 12, 64}, 1.0f)}});
    // the zoo's small encoder: a QKV chunk [48, B, 128] of [48, B, 384] and the heads'
    // bmm output [4B, 48, 32] transposed(0, 1) -> contiguous
    add_contiguous("contiguous (small QKV chunk)", "[48," + bs + ",128] of [48," + bs + ",384]",
                   strided({48, b, 384}, {48, b, 128}, {b * 384, 384, 1}, 128));
    add_contiguous("contiguous (small transposed bmm)", "[48," + std::to_string(4 * b) + ",32]",
                   strided({4 * b, 48, 32}, {48, 4 * b, 32}, {32, 48 * 32, 1}));
  }
  return out;
}

std::string strict_config(const std::string& plugin) {
  const std::string path = (std::filesystem::temp_directory_path() / ("bench_shape_" + plugin + ".toml")).string();
  std::ofstream(path) << "[plugins]\nload = [\"" << plugin << "\"]\n[selection]\ndefault = [\"" << plugin
                      << "\"]\nstrict = true\n";
  return path;
}

std::vector<uint8_t> bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  const uint8_t* p = static_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"shape plugin copies vs the aten plugin, on the zoo's shapes"};
  int runs = 50, warmup = 5;
  app.add_option("--runs", runs, "timed runs per case and plugin (median reported)")->check(CLI::Range(20, 100000));
  app.add_option("--warmup", warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  std::string only;
  app.add_option("--only", only, "run only the cases whose name or shape contains this");
  bool shape_only = false;
  app.add_flag("--shape-only", shape_only, "time the shape plugin alone (for profiling it)");
  CLI11_PARSE(app, argc, argv);

  const std::vector<std::string> plugins =
      shape_only ? std::vector<std::string>{"shape"} : std::vector<std::string>{"aten", "shape"};
  std::vector<std::unique_ptr<switchyard::Runtime>> runtimes;
  for (const std::string& p : plugins) {
    switchyard::Options options;
    options.config_path = strict_config(p);
    runtimes.push_back(std::make_unique<switchyard::Runtime>(options));
  }

  std::printf("| case | shape | aten µs | shape µs | aten / shape |\n|---|---|---:|---:|---:|\n");
  for (Case& c : cases()) {
    if (!only.empty() && (c.name + " " + c.shape).find(only) == std::string::npos) continue;
    std::vector<std::unique_ptr<switchyard::Model>> models;
    std::vector<uint8_t> reference;
    for (size_t k = 0; k < plugins.size(); ++k) {
      models.push_back(load_graph(*runtimes[k], c.graph));
      for (const auto& e : models[k]->plan(c.inputs))
        if (e.backend != plugins[k]) throw std::runtime_error(c.name + ": node " + e.node + " ran on " + e.backend);
      std::vector<uint8_t> got = bytes(models[k]->run(c.inputs)[0]);
      if (k == 0)
        reference = got;
      else if (got != reference)
        throw std::runtime_error(c.name + ": shape's result differs from aten's");
      for (int i = 0; i < warmup; ++i) models[k]->run(c.inputs);
    }
    // Alternate the contenders run by run, so that both see the same machine load.
    std::vector<std::vector<double>> ms(plugins.size());
    for (int i = 0; i < runs; ++i)
      for (size_t k = 0; k < plugins.size(); ++k) ms[k].push_back(time_ms([&] { models[k]->run(c.inputs); }));
    double median_us[2] = {0, 0};  // aten, shape
    for (size_t k = 0; k < plugins.size(); ++k) median_us[shape_only ? 1 : k] = median(ms[k]) * 1000.0;
    std::printf("| %s | %s | %s | %s | %s |\n", c.name.c_str(), c.shape.c_str(),
                shape_only ? "-" : fmt(median_us[0], 1).c_str(), fmt(median_us[1], 1).c_str(),
                shape_only ? "-" : fmt(median_us[0] / median_us[1], 2).c_str());
  }
  std::printf(
      "\nmedian of %d runs (the two plugins alternating) after %d warm-up runs; float32; whole "
      "model->run() of the graph, host overhead included for both.\n",
      runs, warmup);
  return 0;
}
