// `run --repeat N`, `--profile` and `--trace`: latency statistics and time tables over
// the embedding API's profiling (RunContext::set_profiling).
#include "commands.hpp"
#include "roofline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

namespace switchyard::cli {
namespace {

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string percent(double part, double total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", total > 0 ? 100.0 * part / total : 0.0);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Per-node and per-backend tables; `sum` holds each node's time summed over `runs` runs.
std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Per-node and per-backend tables; `sum` holds each node's time summed over `runs` runs;
// `costs` (by node) and `peaks` add the roofline columns.
void print_profile(const std::vector<NodeProfile>& sum, int runs, int top, const std::map<std::string, Cost>& costs,
                   const Peaks& peaks) {
  double total = 0;
  for (const auto& p : sum) total += p.duration_ms;
  std::vector<size_t> order(sum.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sum[a].duration_ms > sum[b].duration_ms; });
  const size_t shown = std::min(order.size(), static_cast<size_t>(top));
  std::printf("\nprofile: mean of %d run(s), %s ms in %zu nodes; top %zu nodes by time:\n", runs,
              ms(total / runs).c_str(), sum.size(), shown);
  std::vector<std::vector<std::string>> rows{
      {"node", "op", "backend", "ms", "share", "MFLOP", "MB", "cost by", "GFLOP/s", "GB/s", "of roof", "bound"}};
  std::map<std::string, double> bound_ms;
  size_t by_plugin = 0, by_host = 0;
  for (const auto& p : sum) {
    auto c = costs.find(p.node);
    if (c == costs.end()) continue;
    bound_ms[judge(c->second, p.duration_ms / runs, peaks).verdict] += p.duration_ms;
    ++(c->second.from_plugin ? by_plugin : by_host);
  }
  for (size_t i = 0; i < shown; ++i) {
    const NodeProfile& p = sum[order[i]];
    std::vector<std::string> row{p.node, p.op, p.backend, ms(p.duration_ms / runs), percent(p.duration_ms, total)};
    auto c = costs.find(p.node);
    if (c != costs.end()) {
      const Roofline r = judge(c->second, p.duration_ms / runs, peaks);
      row.insert(row.end(), {fixed(c->second.flops / 1e6, 2), fixed(c->second.bytes / 1e6, 2), c->second.source(),
                             fixed(r.gflops, 1), fixed(r.gbs, 2), percent(r.roof_share, 1), r.verdict});
    }
    rows.push_back(std::move(row));
  }
  print_table(rows);
  std::printf(
      "roofline against gemm_gflops %.1f, copy_gbs %.1f (switchyard calibrate; intra_op_threads = %d): "
      "bound by time:",
      peaks.gemm_gflops, peaks.copy_gbs, peaks.threads);
  for (const auto& [verdict, t] : bound_ms) std::printf(" %s %s", verdict.c_str(), percent(t, total).c_str());
  std::printf("\ncost by: plugin %zu node(s) (their kernels' own cost, SDK 1.1), host %zu (the host's formulas)\n",
              by_plugin, by_host);

  struct Backend {
    double ms = 0;
    size_t nodes = 0;
  };
  std::map<std::string, Backend> backends;
  for (const auto& p : sum) {
    backends[p.backend].ms += p.duration_ms;
    backends[p.backend].nodes++;
  }
  std::printf("\nper backend:\n");
  rows = {{"backend", "ms", "share", "nodes"}};
  for (const auto& [name, b] : backends)
    rows.push_back({name, ms(b.ms / runs), percent(b.ms, total), std::to_string(b.nodes)});
  print_table(rows);
}

}  // namespace

// A Chrome trace like write_chrome_trace's, with the roofline numbers as each event's args.
void write_roofline_trace(const std::string& path, const std::vector<NodeProfile>& profile,
                          const std::map<std::string, Cost>& costs, const Peaks& peaks) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& p : profile) {
    nlohmann::json args = {{"op", p.op}, {"module_path", p.module_path}};
    auto c = costs.find(p.node);
    if (c != costs.end()) {
      const Roofline r = judge(c->second, p.duration_ms, peaks);
      args.update({{"flops", c->second.flops},
                   {"bytes", c->second.bytes},
                   {"cost_source", c->second.source()},
                   {"gflop_per_s", r.gflops},
                   {"gb_per_s", r.gbs},
                   {"of_roof", r.roof_share},
                   {"bound", r.verdict}});
    }
    events.push_back({{"name", p.node},
                      {"cat", p.backend},
                      {"ph", "X"},
                      {"ts", p.start_ms * 1e3},
                      {"dur", p.duration_ms * 1e3},
                      {"pid", 1},
                      {"tid", p.lane + 1},
                      {"args", std::move(args)}});
  }
  nlohmann::json trace = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ms"},
      {"metadata",
       {{"gemm_gflops", peaks.gemm_gflops}, {"copy_gbs", peaks.copy_gbs}, {"intra_op_threads", peaks.threads}}}};
  std::ofstream out(path);
  if (out) out << trace.dump() << "\n";
  if (!out) throw Error(ErrorKind::Io, path + ": cannot write the trace file (" + std::strerror(errno) + ")");
}

void report_timing(Model& model, const std::vector<Tensor>& inputs, const RunFlags& flags, const Runtime& runtime,
                   bool streaming) {
  const bool profiling = flags.profile || !flags.trace.empty();
  // Roofline: each node's cost from the plan (its kernel's own where the plugin reports
  // one, else the host's estimate at the planned shapes); the machine's peaks.
  std::map<std::string, Cost> costs;
  Peaks peaks;
  if (profiling) {
    if (!load_peaks(runtime.config().intra_op_threads, &peaks)) {
      std::printf(
          "\ncalibrating this machine's peaks for the roofline (once per thread count; "
          "`switchyard calibrate`) ...\n");
      std::fflush(stdout);
      peaks = measure_peaks(runtime);
      save_peaks(peaks);
    }
    for (const PlanEntry& e : model.plan(inputs)) costs[e.node] = Cost{e.flops, e.bytes, e.has_kernel_cost};
    // No callback for the timed runs unless node_io streaming needs a sink: a callback makes
    // every node hand over its tensors, converted to plain host memory (profiles of models
    // whose values stay in plugin storages took twice as long as the runs they describe).
    model.set_node_callback(streaming ? NodeCallback([](const NodeEvent&) {}) : NodeCallback());
  }
  const int runs = std::max(flags.repeat, 1);
  for (int w = 0; w < flags.warmup; ++w) model.run(inputs);
  model.set_profiling(profiling);
  std::vector<double> times;
  std::vector<NodeProfile> sum;  // per node, durations summed over the runs
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    model.run(inputs);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (!profiling) continue;
    const auto& profile = model.profile();
    if (sum.empty()) {
      sum = profile;
    } else {
      for (size_t i = 0; i < sum.size() && i < profile.size(); ++i) sum[i].duration_ms += profile[i].duration_ms;
    }
  }
  model.set_profiling(false);

  if (flags.repeat > 0) {
    std::printf("\ntiming: %d warm-up run(s) (the run above and --warmup), %d timed run(s)\n", 1 + flags.warmup, runs);
    std::printf("median_ms: %s\n", ms(median(times)).c_str());
    std::printf("min_ms: %s max_ms: %s\n", ms(*std::min_element(times.begin(), times.end())).c_str(),
                ms(*std::max_element(times.begin(), times.end())).c_str());
  }
  if (flags.profile) print_profile(sum, runs, flags.profile_top, costs, peaks);
  if (!flags.trace.empty()) {
    write_roofline_trace(flags.trace, model.profile(), costs, peaks);
    std::printf("trace of the last run (%zu events) written to %s (open it in https://ui.perfetto.dev)\n",
                model.profile().size(), flags.trace.c_str());
  }
}

}  // namespace switchyard::cli
