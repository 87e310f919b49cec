// Host overhead: a chain of N tiny element-wise ops (v = add(v, y) on [1] float tensors),
// where a kernel does almost nothing and the time is the runtime's own. Per node, in µs:
// switchyard (example plugin: host-allocated outputs; aten plugin: kernel-produced;
// profiling on), LibTorch's TorchScript interpreter on the same chain (fusion off, so it
// runs every op), and LibTorch eager calls from C++ (no interpreter) as a floor.
// Prints a markdown table on stdout. A benchmark, not a test.
//
//   bench_overhead --nodes 10000 --runs 20
#include "api/internal.hpp"
#include "bench_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <sstream>

using namespace sybench;
using switchyard::Tensor;

namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};

switchyard::ir::Graph chain_graph(int nodes) {
  switchyard::ir::Graph g;
  switchyard::ir::ValueId v = g.add_input("x", kF32, {1});
  const switchyard::ir::ValueId y = g.add_input("y", kF32, {1});
  for (int i = 0; i < nodes; ++i) {
    const std::string out = "v" + std::to_string(i);
    const int32_t n = g.add_node("add" + std::to_string(i), "aten::add", {v, y}, {out});
    v = g.nodes[n].outputs[0];  // (find_value is a linear search)
  }
  g.outputs = {v};
  return g;
}

std::string chain_script(int nodes) {
  std::ostringstream s;
  s << "def forward(self, x: Tensor, y: Tensor) -> Tensor:\n";
  for (int i = 0; i < nodes; ++i) s << "    x = torch.add(x, y)\n";
  s << "    return x\n";
  return s.str();
}

Tensor scalar_tensor(float v) {
  Tensor t = Tensor::empty(kF32, {1});
  *t.data<float>() = v;
  return t;
}

struct Contender {
  std::string name;
  std::function<float()> run;  // returns the chain's result (x + nodes * y)
  std::vector<double> ms;
};

struct Args {
  int nodes = 10000, runs = 20, warmup = 3, threads = 2;
  std::string example_config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/example.toml";
  std::string default_config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/default.toml";
  std::string reference_config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/reference.toml";
};

int bench(const Args& args) {
  const int nodes = args.nodes, runs = args.runs, warmup = args.warmup;
  at::set_num_threads(args.threads);
  torch::jit::setTensorExprFuserEnabled(false);  // measure the interpreter, not one fused kernel

  switchyard::Runtime example_rt(with_config(args.example_config));  // example plugin takes aten::add
  switchyard::Runtime aten_rt(with_config(args.reference_config));
  switchyard::Runtime default_rt(with_config(args.default_config));
  auto sy_example = load_graph(example_rt, chain_graph(nodes));
  auto sy_aten = load_graph(aten_rt, chain_graph(nodes));
  auto sy_default = load_graph(default_rt, chain_graph(nodes));
  const std::vector<Tensor> inputs{scalar_tensor(0.0f), scalar_tensor(1.0f)};
  const std::string default_backend = sy_default->plan(inputs).at(0).backend;
  switchyard::RunContext plain, profiled;
  profiled.set_profiling(true);

  std::fprintf(stderr, "compiling a %d-op TorchScript function\n", nodes);
  torch::jit::Module chain("chain");
  chain.define(chain_script(nodes));
  chain.eval();
  const std::vector<c10::IValue> ivalues{to_torch(inputs[0]), to_torch(inputs[1])};
  const at::Tensor tx = to_torch(inputs[0]), ty = to_torch(inputs[1]);

  auto sy_result = [](const std::vector<Tensor>& out) { return *out.at(0).data<float>(); };
  std::vector<Contender> all{
      {"switchyard, example plugin (host-allocated outputs)",
       [&] { return sy_result(sy_example->run(inputs, plain)); },
       {}},
      {"switchyard, example plugin, profiling on", [&] { return sy_result(sy_example->run(inputs, profiled)); }, {}},
      {"switchyard, aten plugin (kernel-produced outputs)", [&] { return sy_result(sy_aten->run(inputs, plain)); }, {}},
      {"switchyard, default.toml (add runs on " + default_backend + ")",
       [&] { return sy_result(sy_default->run(inputs, plain)); },
       {}},
      {"LibTorch TorchScript interpreter",
       [&] {
         c10::InferenceMode inference;
         return chain.forward(ivalues).toTensor().item<float>();
       },
       {}},
      {"LibTorch eager, C++ loop of at::add (no interpreter)",
       [&] {
         c10::InferenceMode inference;
         at::Tensor v = tx;
         for (int i = 0; i < nodes; ++i) v = at::add(v, ty);
         return v.item<float>();
       },
       {}},
  };
  for (auto& c : all) {
    for (int i = 0; i < warmup; ++i) c.run();
    const float got = c.run();
    if (got != static_cast<float>(nodes)) {
      std::fprintf(stderr, "error: %s computed %g, expected %d\n", c.name.c_str(), got, nodes);
      return 1;
    }
  }
  for (int r = 0; r < runs; ++r)
    for (auto& c : all) c.ms.push_back(time_ms(c.run));

  std::printf("| contender | µs per node | ms per %d-node run |\n|---|---|---|\n", nodes);
  for (const auto& c : all) {
    const double ms = median(c.ms);
    std::printf("| %s | %s | %s |\n", c.name.c_str(), fmt(ms * 1e3 / nodes, 3).c_str(), fmt(ms, 2).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"per-node host overhead: switchyard vs LibTorch's interpreter (markdown on stdout)"};
  app.add_option("--nodes", args.nodes, "chain length")->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("--runs", args.runs, "timed runs per contender (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", args.warmup, "untimed runs first")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--threads", args.threads, "ATen threads")->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--example-config", args.example_config)->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--default-config", args.default_config)->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--reference-config", args.reference_config)->capture_default_str()->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  return run_with_stack(size_t{1} << 30, [&] { return bench(args); });
}
