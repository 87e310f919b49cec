// How far apart this host's first two CPUs are: the round trip of a cache line between
// two threads pinned to them, in nanoseconds (median of --samples). A benchmark aid, not
// a test: on the 2-vCPU AMD EPYC host of docs/benchmarks.md it reads about 80 ns most of
// the time and about 400 ns while the hypervisor runs the two vCPUs on different dies,
// and small models then take up to 1.6x (switchyard) and 1.7x (ONNX Runtime) as long.
// tools/bench/compare_ort.py runs it before every round and reports the range per row.
//
//   host_probe [--samples 5] [--trips 100000]
#include <CLI/CLI.hpp>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Nanoseconds per round trip, per sample: `trips` hand-overs of one cache line between
// a thread on `a` (this one) and one on `b`, after one untimed sample (both threads
// running, lines in place).
std::vector<double> round_trips_ns(int a, int b, int samples, int trips) {
  alignas(64) std::atomic<int64_t> turn{0};
  const int64_t total = int64_t{samples + 1} * trips;
  std::thread other([&] {
    pin(b);
    for (int64_t i = 0; i < total; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i + 1) {}
      turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  pin(a);
  std::vector<double> ns;
  int64_t i = 0;
  for (int s = 0; s <= samples; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < trips; ++k, ++i) {
      turn.store(2 * i + 1, std::memory_order_release);
      while (turn.load(std::memory_order_acquire) != 2 * i + 2) {}
    }
    const double elapsed = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) ns.push_back(elapsed / trips);
  }
  other.join();
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 5, trips = 20000;
  CLI::App app{"the cross-core round trip between this process's first two CPUs, in ns (prints 'cross_core_ns: N')"};
  app.add_option("--samples", samples, "measurements; the median is printed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--trips", trips, "round trips per measurement")
      ->capture_default_str()
      ->check(CLI::Range(100, 100000000));
  CLI11_PARSE(app, argc, argv);

  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    std::perror("host_probe: sched_getaffinity");
    return 1;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.size() < 2) {
    std::fprintf(stderr, "host_probe: this process may run on one CPU only; no round trip to measure\n");
    return 1;
  }
  std::vector<double> ns = round_trips_ns(cpus[0], cpus[1], samples, trips);
  std::sort(ns.begin(), ns.end());
  std::printf("cross_core_ns: %.0f (CPUs %d and %d, median of %d x %d round trips; min %.0f, max %.0f)\n",
              ns[ns.size() / 2], cpus[0], cpus[1], samples, trips, ns.front(), ns.back());
  return 0;
}
