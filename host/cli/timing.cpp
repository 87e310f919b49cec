// `run --repeat N`, `--profile` and `--trace`: latency statistics and time tables over
// the embedding API's profiling (RunContext::set_profiling).
#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
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
void print_profile(const std::vector<NodeProfile>& sum, int runs, int top) {
  double total = 0;
  for (const auto& p : sum) total += p.duration_ms;
  std::vector<size_t> order(sum.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sum[a].duration_ms > sum[b].duration_ms; });
  const size_t shown = std::min(order.size(), static_cast<size_t>(top));
  std::printf("\nprofile: mean of %d run(s), %s ms in %zu nodes; top %zu nodes by time:\n", runs,
              ms(total / runs).c_str(), sum.size(), shown);
  std::vector<std::vector<std::string>> rows{{"node", "op", "backend", "ms", "share"}};
  for (size_t i = 0; i < shown; ++i) {
    const NodeProfile& p = sum[order[i]];
    rows.push_back({p.node, p.op, p.backend, ms(p.duration_ms / runs), percent(p.duration_ms, total)});
  }
  print_table(rows);

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

void report_timing(Model& model, const std::vector<Tensor>& inputs, const RunFlags& flags) {
  const bool profiling = flags.profile || !flags.trace.empty();
  const int runs = std::max(flags.repeat, 1);
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
    std::printf("\ntiming: 1 warm-up run (the run above), %d timed run(s)\n", runs);
    std::printf("median_ms: %s\n", ms(median(times)).c_str());
    std::printf("min_ms: %s max_ms: %s\n", ms(*std::min_element(times.begin(), times.end())).c_str(),
                ms(*std::max_element(times.begin(), times.end())).c_str());
  }
  if (flags.profile) print_profile(sum, runs, flags.profile_top);
  if (!flags.trace.empty()) {
    write_chrome_trace(flags.trace, model.profile());
    std::printf("trace of the last run (%zu events) written to %s (open it in https://ui.perfetto.dev)\n",
                model.profile().size(), flags.trace.c_str());
  }
}

}  // namespace switchyard::cli
