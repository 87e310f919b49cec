// The attention plugin's fused kernel against the aten plugin (LibTorch 1.13's math path,
// which materialises the [L, L] scores and their softmax) on one
// aten::scaled_dot_product_attention node, q, k, v [batch, heads, L, dim], at each
// sequence length: time, and the run's extra memory.
//
// Memory: each (plugin, L) runs in a fresh process of this program. It loads the graph,
// plans it, and warms up with a small L (BLAS buffers, thread pools, LibTorch's lazy
// state), then reads VmRSS, resets the high-water mark (/proc/self/clear_refs), runs once
// and reads VmHWM: "peak extra" = VmHWM - VmRSS before, the run's output included (listed
// apart). malloc's mmap threshold is fixed at 64 KiB so that freed large blocks go back to
// the system and cannot hide a later run's allocations. The fused kernel's own scratch
// (threads x tiles, from its tiling) is listed too: it does not depend on L.
// Outputs are checked against aten's (1e-4 of the largest reference value).
// Prints a markdown table on stdout. A benchmark, not a test.
//
//   bench_attention --sizes 512,2048,8192 --heads 4 --dim 64 --runs 5 --threads 2
#include "api/internal.hpp"
#include "bench_util.hpp"
#include "ir/graph.hpp"

#include "../../plugins/attention/flash_attention.hpp"

#include <switchyard/runtime.hpp>

#include <malloc.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

using namespace sybench;
using switchyard::Tensor;
namespace ir = switchyard::ir;

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr double kMiB = 1024.0 * 1024.0;

struct Params {
  int64_t batch = 1, heads = 4, dim = 64;
  int runs = 5, threads = 2;
  bool causal = false;
};

Tensor random(Shape shape, uint32_t seed) {
  Tensor t = Tensor::uninitialized(kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

ir::Graph sdpa_graph(bool causal) {
  ir::Graph g;
  std::vector<ir::ValueId> in{g.add_input("q", kF32), g.add_input("k", kF32), g.add_input("v", kF32)};
  g.add_node("sdpa", "aten::scaled_dot_product_attention", in, {"y"},
             {{"dropout_p", ir::Attribute::of_float(0.0)}, {"is_causal", ir::Attribute::of_int(causal)}});
  g.outputs = {g.find_value("y")};
  return g;
}

std::vector<Tensor> qkv(const Params& p, int64_t l) {
  Shape s{p.batch, p.heads, l, p.dim};
  return {random(s, 1), random(s, 2), random(s, 3)};
}

std::string config(const std::string& plugin, int threads) {
  const std::string path = (std::filesystem::temp_directory_path() / ("bench_attention_" + plugin + ".toml")).string();
  std::ofstream(path) << "[plugins]\nload = [\"" << plugin << "\"]\n[selection]\ndefault = [\"" << plugin
                      << "\"]\nstrict = true\n[runtime]\nintra_op_threads = " << threads << "\n";
  return path;
}

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM").
double status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) * 1024.0;
  throw std::runtime_error("bench: no " + field + " in /proc/self/status");
}

// The child: one plugin, one length. Prints "ms extra_bytes" and writes the output to `dump`.
int child(const Params& p, const std::string& plugin, int64_t l, const std::string& dump) {
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  switchyard::Runtime rt(with_config(config(plugin, p.threads)));
  at::set_num_threads(p.threads);
  set_openblas_threads(p.threads);
  auto warm = load_graph(rt, sdpa_graph(p.causal));
  warm->run(qkv(p, 16));
  auto model = load_graph(rt, sdpa_graph(p.causal));
  const std::vector<Tensor> inputs = qkv(p, l);
  for (const auto& e : model->plan(inputs))
    if (e.backend != plugin) throw std::runtime_error("node " + e.node + " ran on " + e.backend);

  const double before = status_bytes("VmRSS");
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  Tensor out = model->run(inputs)[0];
  const double extra = status_bytes("VmHWM") - before;
  std::ofstream(dump, std::ios::binary)
      .write(static_cast<const char*>(out.contiguous().raw_data()), static_cast<std::streamsize>(out.nbytes()));
  out = Tensor();
  std::vector<double> ms;
  for (int i = 0; i < p.runs; ++i) ms.push_back(time_ms([&] { model->run(inputs); }));
  std::printf("%.3f %.0f\n", median(ms), extra);
  return 0;
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<float> v(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

struct Measured {
  double ms = 0, extra = 0;
  std::string dump;
};

Measured spawn(const Params& p, const std::string& self, const std::string& plugin, int64_t l) {
  Measured m;
  m.dump = (std::filesystem::temp_directory_path() /
            ("bench_attention_" + plugin + "_" + std::to_string(l) + "_" + std::to_string(getpid()) + ".bin"))
               .string();
  std::ostringstream cmd;
  cmd << self << " --child " << plugin << " --length " << l << " --dump " << m.dump << " --batch " << p.batch
      << " --heads " << p.heads << " --dim " << p.dim << " --runs " << p.runs << " --threads " << p.threads
      << (p.causal ? " --causal" : "");
  FILE* f = popen(cmd.str().c_str(), "r");
  if (f == nullptr || std::fscanf(f, "%lf %lf", &m.ms, &m.extra) != 2 || pclose(f) != 0)
    throw std::runtime_error("bench: child failed: " + cmd.str());
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attention plugin (fused, streaming softmax) vs the aten plugin: time and extra memory by length"};
  Params p;
  std::vector<int64_t> sizes = {512, 2048, 8192};
  std::string child_plugin, dump;
  int64_t length = 0;
  app.add_option("--sizes", sizes, "sequence lengths L")->delimiter(',')->check(CLI::Range(1, 1 << 20));
  app.add_option("--batch", p.batch, "batch")->check(CLI::Range(1, 1024));
  app.add_option("--heads", p.heads, "heads")->check(CLI::Range(1, 1024));
  app.add_option("--dim", p.dim, "head dim")->check(CLI::Range(1, 4096));
  app.add_option("--runs", p.runs, "timed runs (median reported)")->check(CLI::Range(1, 10000));
  app.add_option("--threads", p.threads, "threads for both plugins (intra-op, OpenBLAS)")->check(CLI::Range(1, 1024));
  app.add_flag("--causal", p.causal, "causal attention");
  app.add_option("--child", child_plugin, "(internal) measure one plugin in this process");
  app.add_option("--length", length, "(internal) the child's L");
  app.add_option("--dump", dump, "(internal) where the child writes its output");
  CLI11_PARSE(app, argc, argv);
  if (!child_plugin.empty()) return run_with_stack(64 << 20, [&] { return child(p, child_plugin, length, dump); });

  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::printf(
      "| L | aten ms | attention ms | aten / attention | aten peak extra MiB | attention peak extra MiB "
      "| output MiB | aten [L, L] scores MiB | attention kernel scratch KiB | max diff |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int64_t l : sizes) {
    Measured aten = spawn(p, self, "aten", l), ours = spawn(p, self, "attention", l);
    const std::vector<float> ref = read_floats(aten.dump), got = read_floats(ours.dump);
    std::filesystem::remove(aten.dump);
    std::filesystem::remove(ours.dump);
    double worst = got.size() == ref.size() ? 0 : INFINITY, scale = 1;
    for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(got[i] - ref[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
    }
    if (!(worst <= 1e-4 * scale)) throw std::runtime_error("attention differs from aten by " + std::to_string(worst));

    sy_attention::Problem prob;  // only the sizes: what the kernel's tiling makes of them
    prob.lead_shape = {p.batch, p.heads};
    prob.lq = prob.lk = l;
    prob.e = prob.ev = p.dim;
    prob.k.row = prob.v.row = p.dim;
    const double scratch =
        static_cast<double>(sy_attention::scratch_bytes_per_thread(prob)) * sy_attention::threads_for(prob);
    const double out_bytes = static_cast<double>(p.batch * p.heads * l * p.dim) * sizeof(float);
    const double scores = static_cast<double>(p.batch * p.heads) * static_cast<double>(l) * l * sizeof(float);
    std::printf("| %lld | %s | %s | %s | %s | %s | %s | %s | %s | %.1e |\n", static_cast<long long>(l),
                fmt(aten.ms, 1).c_str(), fmt(ours.ms, 1).c_str(), fmt(aten.ms / ours.ms, 2).c_str(),
                fmt(aten.extra / kMiB, 2).c_str(), fmt(ours.extra / kMiB, 2).c_str(), fmt(out_bytes / kMiB, 2).c_str(),
                fmt(scores / kMiB, 1).c_str(), fmt(scratch / 1024.0, 1).c_str(), worst);
    std::fflush(stdout);
  }
  std::printf(
      "\naten::scaled_dot_product_attention, q/k/v [%lld, %lld, L, %lld] float32%s; median of %d runs "
      "(whole model->run(), host overhead included); %d thread(s) for both. Peak extra = VmHWM - VmRSS "
      "around the first run at L in a fresh process (after a warm-up at L=16), output included; Linux counts RSS per "
      "thread in batches, so it does not resolve the kernel's ~100 KiB of scratch (its size comes from the "
      "kernel's tiling).\n",
      static_cast<long long>(p.batch), static_cast<long long>(p.heads), static_cast<long long>(p.dim),
      p.causal ? ", causal" : "", p.runs, p.threads);
  return 0;
}
