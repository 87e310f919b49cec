// Peak activation memory on the model zoo: switchyard on configs/default.toml (its memory
// plan's estimate, and what a run measures) against LibTorch's frozen TorchScript forward,
// both measured the same way: malloc's bytes in use (glibc mallinfo2, every thread) as each
// op returns, less those in use before the forward. For switchyard "op" is a graph node;
// for LibTorch every ATen op the interpreter runs (a RecordFunction callback), nested ones
// included, so LibTorch's count also sees the temporaries inside its composite ops.
// Markdown on stdout, progress on stderr. A benchmark, not a test.
//
//   bench_memory --zoo build/zoo [--models resnet50] [--batches 1,8]
#include "bench_util.hpp"

#include <ATen/record_function.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/version.h>
#include <CLI/CLI.hpp>

#include <malloc.h>

#include <atomic>
#include <fstream>
#include <set>

using namespace sybench;

namespace {

size_t heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// The most bytes in use seen at any op's end while a LibTorch forward runs.
std::atomic<size_t> peak_in_use{0};

void note_peak() {
  const size_t now = heap_in_use();
  size_t seen = peak_in_use.load();
  while (now > seen && !peak_in_use.compare_exchange_weak(seen, now)) {}
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction&) { return nullptr; }
void on_op_end(const at::RecordFunction&, at::ObserverContext*) { note_peak(); }

// LibTorch's peak activation bytes for one forward (after a warm-up forward).
size_t libtorch_peak(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) {
  c10::InferenceMode inference;
  module.forward(inputs);  // warm-up: one-time allocations (e.g. prepacked weights) happen here
  const size_t base = heap_in_use();
  peak_in_use = base;
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&on_op_start, &on_op_end).scopes({at::RecordScope::FUNCTION}));
  c10::IValue out = module.forward(inputs);
  note_peak();  // the outputs, held here
  at::removeCallback(handle);
  return peak_in_use.load() - base;
}

std::string mib(size_t bytes) { return fmt(static_cast<double>(bytes) / (1024.0 * 1024.0)); }

}  // namespace

int main(int argc, char** argv) {
  std::string zoo, config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/default.toml";
  const char* zoo_env = std::getenv("SWITCHYARD_ZOO_DIR");
  zoo = zoo_env != nullptr ? zoo_env : SWITCHYARD_BENCH_ZOO_DIR;
  std::vector<std::string> models;
  std::vector<int> batches = {1, 8};
  int threads = 2;
  CLI::App app{"peak activation memory on the model zoo: switchyard vs LibTorch (markdown on stdout)"};
  app.add_option("--zoo", zoo, "model zoo directory (zoo.json)")->capture_default_str();
  app.add_option("--config", config, "switchyard's config")->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--models", models, "zoo stems to run (default: all)")->delimiter(',');
  app.add_option("--batches", batches, "batch sizes; one the zoo lacks repeats a smaller one's inputs")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threads", threads, "ATen intra-op threads for LibTorch")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::ifstream zoo_file(zoo + "/zoo.json");
  if (!zoo_file) {
    std::fprintf(stderr, "error: %s/zoo.json not found (build the zoo: cmake --build BUILD --target zoo)\n",
                 zoo.c_str());
    return 1;
  }
  const nlohmann::json index = nlohmann::json::parse(zoo_file);
  switchyard::torchscript::register_loader();
  at::set_num_threads(threads);
  switchyard::Runtime runtime(with_config(config));

  std::printf(
      "LibTorch %s, frozen, %d ATen threads. Peak activation memory in MiB: malloc's bytes in use as each "
      "op returns, less those before the forward (switchyard: each graph node, after a planning run and a warm-up run; "
      "LibTorch: each ATen op, nested ones included, after a warm-up forward).\n\n",
      TORCH_VERSION, at::get_num_threads());
  std::printf(
      "| model | batch | no reuse (sum of activations) | switchyard planned | switchyard measured | "
      "LibTorch measured | switchyard / LibTorch | arena |\n|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  const std::set<std::string> wanted(models.begin(), models.end());
  for (const auto& entry : index["models"]) {
    const std::string stem = entry["stem"];
    if (!wanted.empty() && !wanted.count(stem)) continue;
    for (const int batch : batches) {
      std::fprintf(stderr, "%s batch %d\n", stem.c_str(), batch);
      try {
        const std::vector<switchyard::Tensor> inputs = zoo_inputs(zoo, entry, batch);
        auto model = runtime.load(zoo + "/" + stem + ".pt");
        model->run(inputs);  // plans
        model->run(inputs);  // warm-up, as LibTorch's: kernels build their primitives for the planned storages
        switchyard::RunContext ctx;
        ctx.set_memory_measurement(true);
        model->run(inputs, ctx);
        const switchyard::MemoryReport plan = model->memory_plan(inputs);
        const size_t measured = ctx.last_stats().measured_peak_bytes;
        model.reset();

        torch::jit::Module module = torch::jit::load(zoo + "/" + stem + ".pt");
        module.eval();
        module = torch::jit::freeze(module);
        std::vector<c10::IValue> ivalues;
        for (const auto& t : inputs) ivalues.emplace_back(to_torch(t));
        const size_t libtorch = libtorch_peak(module, ivalues);

        std::printf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", stem.c_str(), batch,
                    mib(plan.total_activation_bytes).c_str(), mib(plan.estimated_peak_bytes).c_str(),
                    mib(measured).c_str(), mib(libtorch).c_str(),
                    fmt(static_cast<double>(measured) / static_cast<double>(libtorch), 3).c_str(),
                    (mib(plan.arena_bytes) + " MiB for " + mib(plan.arena_values_bytes) + " MiB").c_str());
      } catch (const std::exception& e) {
        std::printf("| %s | %d | failed: %.300s | | | | | |\n", stem.c_str(), batch, e.what());
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
