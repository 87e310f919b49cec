// Latency on the model zoo, in one process with one thread setting: switchyard on
// configs/default.toml, switchyard on configs/reference.toml, and LibTorch's own
// TorchScript forward in its best configuration (frozen, with and without
// optimize_for_inference, OpenBLAS on 1 or 2 threads: the best median wins). Runs are
// interleaved round by round so that load from elsewhere hits every contender alike.
// Prints a markdown table on stdout (progress on stderr). A benchmark, not a test.
//
//   bench_models --zoo build/zoo --runs 10 [--models resnet18,bert_fast] [--batches 1,8]
#include "bench_util.hpp"

#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <torch/csrc/jit/api/module.h>
#include <torch/version.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

using namespace sybench;

namespace {

struct Args {
  std::string zoo, default_config, reference_config;
  int runs = 10, warmup = 3, threads = 2;
  double max_seconds = 0;  // > 0: skip a model and batch whose one forward takes longer
  std::vector<std::string> models;
  std::vector<int> batches;
};

// One way to run a model: a name, a forward, and the OpenBLAS threads it runs with.
struct Contender {
  std::string name;
  std::function<void()> forward;
  int blas_threads = 0;
  bool libtorch = false;
  std::vector<double> ms;
};

std::set<std::string> split_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// LibTorch's module variants: frozen, and frozen + optimize_for_inference where it loads.
std::vector<std::pair<std::string, torch::jit::Module>> libtorch_variants(const std::string& path) {
  std::vector<std::pair<std::string, torch::jit::Module>> out;
  torch::jit::Module m = torch::jit::load(path);
  m.eval();
  out.emplace_back("frozen", torch::jit::freeze(m));
  try {
    torch::jit::Module o = torch::jit::load(path);
    o.eval();
    out.emplace_back("frozen+ofi", torch::jit::optimize_for_inference(o));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "  optimize_for_inference failed on %s (skipped): %.200s\n", path.c_str(), e.what());
  }
  return out;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) return INFINITY;
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// One model at one batch size: every contender, interleaved; prints the table row.
void bench_batch(const Args& args, const std::string& stem, int batch, const std::vector<switchyard::Tensor>& inputs,
                 std::vector<std::pair<std::string, torch::jit::Module>>& variants,
                 const switchyard::Model& sy_reference, const switchyard::Model& sy_default, int sy_blas) {
  std::vector<c10::IValue> ivalues;
  for (const auto& t : inputs) ivalues.emplace_back(to_torch(t));

  std::vector<Contender> all;
  for (auto& [vname, module] : variants)
    for (int blas : {1, 2}) {
      torch::jit::Module* m = &module;
      all.push_back({vname + ", OpenBLAS " + std::to_string(blas),
                     [m, &ivalues] {
                       c10::InferenceMode inference;  // LibTorch's fastest eval mode
                       m->forward(ivalues);
                     },
                     blas,
                     true,
                     {}});
    }
  switchyard::RunContext ref_ctx, def_ctx;
  all.push_back({"reference", [&] { sy_reference.run(inputs, ref_ctx); }, sy_blas, false, {}});
  all.push_back({"default", [&] { sy_default.run(inputs, def_ctx); }, sy_blas, false, {}});

  if (args.max_seconds > 0) {  // one forward of the default config says how long this row would take
    const double first = time_ms(all.back().forward) / 1000.0;
    if (first > args.max_seconds) {
      std::fprintf(stderr, "%s batch %d: skipped, one forward took %.1f s\n", stem.c_str(), batch, first);
      std::printf("| %s | %d | skipped: one default forward took %.1f s (over --max-seconds %.0f) | | | | | | |\n",
                  stem.c_str(), batch, first, args.max_seconds);
      std::fflush(stdout);
      return;
    }
  }
  std::fprintf(stderr, "%s batch %d: %d warm-up and %d timed runs of %zu contenders\n", stem.c_str(), batch,
               args.warmup, args.runs, all.size());
  for (auto& c : all) {
    set_openblas_threads(c.blas_threads);
    for (int i = 0; i < args.warmup; ++i) c.forward();
  }
  for (int r = 0; r < args.runs; ++r)
    for (auto& c : all) {
      set_openblas_threads(c.blas_threads);
      c.ms.push_back(time_ms(c.forward));
    }
  set_openblas_threads(sy_blas);

  const Contender* best = nullptr;
  for (const auto& c : all)
    if (c.libtorch && (best == nullptr || median(c.ms) < median(best->ms))) best = &c;
  const double lt = median(best->ms), ref = median(all[all.size() - 2].ms), def = median(all.back().ms);
  for (const auto& c : all) std::fprintf(stderr, "  %-28s median %10.3f ms\n", c.name.c_str(), median(c.ms));

  // Is the default configuration right? Its first output against LibTorch's.
  at::Tensor want;
  {
    c10::InferenceMode inference;
    want = first_tensor(variants.front().second.forward(ivalues));
  }
  const std::vector<switchyard::Tensor> got = sy_default.run(inputs, def_ctx);
  const double diff = got.empty() ? INFINITY : max_abs_diff(to_torch(got[0]), want);

  std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %.2g |\n", stem.c_str(), batch, fmt(lt).c_str(),
              fmt(ref).c_str(), fmt(def).c_str(), fmt(ref / lt).c_str(), fmt(def / lt).c_str(), best->name.c_str(),
              diff);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"switchyard vs LibTorch latency on the model zoo (markdown on stdout)"};
  const char* zoo_env = std::getenv("SWITCHYARD_ZOO_DIR");
  args.zoo = zoo_env != nullptr ? zoo_env : SWITCHYARD_BENCH_ZOO_DIR;
  args.default_config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/default.toml";
  args.reference_config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/reference.toml";
  app.add_option("--zoo", args.zoo, "model zoo directory (zoo.json)")->capture_default_str();
  app.add_option("--default-config", args.default_config)->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--reference-config", args.reference_config)->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--runs", args.runs, "timed runs per contender (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", args.warmup, "untimed runs first")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--threads", args.threads, "ATen (intra-op) threads for LibTorch; switchyard's come from its configs")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--models", args.models, "zoo stems to run (default: all)")->delimiter(',');
  app.add_option("--max-seconds", args.max_seconds,
                 "skip a model and batch whose one forward (default config) takes "
                 "longer than this; 0: no limit")
      ->capture_default_str();
  args.batches = {1, 8};
  app.add_option("--batches", args.batches, "batch sizes to run; one the zoo lacks repeats a smaller one's inputs")
      ->delimiter(',')
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::ifstream zoo_file(args.zoo + "/zoo.json");
  if (!zoo_file) {
    std::fprintf(stderr, "error: %s/zoo.json not found (build the zoo: cmake --build BUILD --target zoo)\n",
                 args.zoo.c_str());
    return 1;
  }
  const nlohmann::json zoo = nlohmann::json::parse(zoo_file);
  switchyard::torchscript::register_loader();
  at::set_num_threads(args.threads);

  switchyard::Runtime reference(with_config(args.reference_config));
  switchyard::Runtime fast(with_config(args.default_config));
  const int sy_blas = openblas_threads();  // as the configs set it
  std::printf(
      "LibTorch %s; ATen intra-op threads %d; OpenBLAS threads for switchyard %d (from its configs), for "
      "LibTorch the better of 1 and 2; %s. Median of %d timed runs after %d warm-ups, interleaved.\n\n",
      TORCH_VERSION, at::get_num_threads(), sy_blas, openblas_config().c_str(), args.runs, args.warmup);

  std::printf(
      "| model | batch | LibTorch ms | reference ms | default ms | reference / LibTorch | "
      "default / LibTorch | LibTorch's best variant | default max abs diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  const auto wanted_models = split_set(args.models);
  for (const auto& entry : zoo["models"]) {
    const std::string stem = entry["stem"];
    if (!wanted_models.empty() && !wanted_models.count(stem)) continue;
    const std::string path = args.zoo + "/" + stem + ".pt";
    std::fprintf(stderr, "%s: loading\n", stem.c_str());
    std::vector<std::pair<std::string, torch::jit::Module>> variants;
    std::unique_ptr<switchyard::Model> sy_reference, sy_default;
    try {
      variants = libtorch_variants(path);
      sy_reference = reference.load(path);
      sy_default = fast.load(path);
    } catch (const std::exception& e) {
      std::printf("| %s | | failed to load: %.300s | | | | | | |\n", stem.c_str(), e.what());
      continue;
    }

    for (const int batch : args.batches) {
      try {
        bench_batch(args, stem, batch, zoo_inputs(args.zoo, entry, batch), variants, *sy_reference, *sy_default,
                    sy_blas);
      } catch (const std::exception& e) {  // one model failing does not end the benchmark
        std::printf("| %s | %d | failed: %.300s | | | | | | |\n", stem.c_str(), batch, e.what());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
