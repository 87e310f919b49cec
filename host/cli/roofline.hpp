// The roofline verdict of `run --profile`: per node FLOPs and bytes from the op and its
// shapes, achieved GFLOP/s and GB/s, and whether it is compute-, bandwidth- or
// overhead-bound against this machine's peaks, which `switchyard calibrate` measures and
// caches in ~/.cache/switchyard/calibration.json (one entry per intra-op thread count).
#pragma once

#include "commands.hpp"

#include <switchyard/runtime.hpp>

#include <map>
#include <string>
#include <vector>

namespace switchyard::cli {

struct Peaks {
  int threads = 0;           // the config's intra_op_threads (0: the library default)
  double gemm_gflops = 0;    // best fp32 GEMM (aten::linear, 1024^3) through the chosen backend
  double copy_gbs = 0;       // memcpy, bytes read + written per second, `threads` threads
  std::string gemm_backend;  // which backend ran that GEMM
};

struct Cost {
  double flops = 0, bytes = 0;
  bool from_plugin = false;  // the kernel's own numbers (SDK 1.1 cost), not the host's formula
  const char* source() const { return from_plugin ? "plugin" : "host"; }
};

struct Roofline {
  double gflops = 0, gbs = 0;  // achieved
  // "overhead": the roofs allow under 50 us and under 20% of the time taken (fixed costs
  // dominate); else "compute" or "bandwidth", whichever roof takes longer at peak.
  std::string verdict;
  double roof_share = 0;  // the least time the roofs allow / the time taken
};
Roofline judge(const Cost& cost, double ms, const Peaks& peaks);

// Measures the peaks with `runtime`'s config (its threads and GEMM backend).
Peaks measure_peaks(const Runtime& runtime);
std::string calibration_path();
// The cached peaks for `threads`; false when none are cached.
bool load_peaks(int threads, Peaks* out);
void save_peaks(const Peaks& peaks);

int cmd_calibrate(const CommonFlags& common, bool force);

}  // namespace switchyard::cli
