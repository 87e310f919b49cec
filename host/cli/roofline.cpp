// Roofline: op cost formulas, the verdict, and `switchyard calibrate` (see roofline.hpp).
#include "roofline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

namespace switchyard::cli {
namespace {

std::string cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/switchyard";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/switchyard";
}

double best_of(int reps, const std::function<void()>& body) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

Roofline judge(const Cost& cost, double ms, const Peaks& peaks) {
  Roofline r;
  const double s = ms / 1e3;
  if (s <= 0) return r;
  r.gflops = cost.flops / s / 1e9;
  r.gbs = cost.bytes / s / 1e9;
  const double compute_s = cost.flops / std::max(peaks.gemm_gflops * 1e9, 1.0);
  const double memory_s = cost.bytes / std::max(peaks.copy_gbs * 1e9, 1.0);
  const double roof_s = std::max(compute_s, memory_s);  // the least time the roofs allow
  r.roof_share = roof_s / s;
  // A small node far from both roofs: fixed costs (dispatch, threading, checks) dominate.
  if (roof_s < 0.2 * s && roof_s < 50e-6)
    r.verdict = "overhead";
  else
    r.verdict = compute_s >= memory_s ? "compute" : "bandwidth";
  return r;
}

Peaks measure_peaks(const Runtime& runtime) {
  Peaks p;
  p.threads = runtime.config().intra_op_threads;
  // GEMM: y = x W^T with 1024^3 multiply-adds, through whichever backend the config picks.
  const int64_t n = 1024;
  Graph g;
  const auto x = g.add_input("x", DLDataType{kDLFloat, 32, 1}, {n, n});
  Tensor w = Tensor::empty(DLDataType{kDLFloat, 32, 1}, {n, n});
  for (int64_t i = 0; i < n * n; ++i) w.data<float>()[i] = static_cast<float>((i % 7) - 3) * 0.01f;
  const auto wv = g.add_constant("w", w);
  const auto y = g.add_node("gemm", "aten::linear", {x, wv, Graph::kNoValue}, {"y"});
  g.add_output(y[0]);
  auto model = runtime.load(std::move(g));
  Tensor in = Tensor::empty(DLDataType{kDLFloat, 32, 1}, {n, n});
  for (int64_t i = 0; i < n * n; ++i) in.data<float>()[i] = static_cast<float>((i % 5) - 2) * 0.01f;
  RunContext ctx;
  model->run({in}, ctx);  // plans; warms caches and the pool
  p.gemm_backend = model->plan({in})[0].backend;
  p.gemm_gflops = 2.0 * n * n * n / best_of(5, [&] { model->run({in}, ctx); }) / 1e9;
  // Copy: 64 MiB, split over the threads (0 = every core, as the library default).
  const unsigned threads =
      p.threads > 0 ? static_cast<unsigned>(p.threads) : std::max(1u, std::thread::hardware_concurrency());
  const size_t bytes = size_t{64} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  auto copy = [&] {
    std::vector<std::thread> workers;
    const size_t chunk = bytes / threads;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        const size_t b = t * chunk, e = t + 1 == threads ? bytes : b + chunk;
        std::memcpy(dst.data() + b, src.data() + b, e - b);
      });
    for (auto& w2 : workers) w2.join();
  };
  copy();
  p.copy_gbs = 2.0 * bytes / best_of(5, copy) / 1e9;  // each byte read once and written once
  return p;
}

std::string calibration_path() { return cache_dir() + "/calibration.json"; }

bool load_peaks(int threads, Peaks* out) {
  std::ifstream in(calibration_path());
  if (!in) return false;
  try {
    const auto doc = nlohmann::json::parse(in);
    const auto& e = doc.at("threads").at(std::to_string(threads));
    out->threads = threads;
    out->gemm_gflops = e.at("gemm_gflops").get<double>();
    out->copy_gbs = e.at("copy_gbs").get<double>();
    out->gemm_backend = e.value("gemm_backend", "");
    return out->gemm_gflops > 0 && out->copy_gbs > 0;
  } catch (const std::exception&) {
    return false;  // absent or unreadable: measured again and rewritten
  }
}

void save_peaks(const Peaks& p) {
  nlohmann::json doc = nlohmann::json::object();
  {
    std::ifstream in(calibration_path());
    if (in) try {
        doc = nlohmann::json::parse(in);
      } catch (const std::exception&) {}
  }
  if (!doc.is_object()) doc = nlohmann::json::object();
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  doc["threads"][std::to_string(p.threads)] = {
      {"gemm_gflops", p.gemm_gflops}, {"copy_gbs", p.copy_gbs}, {"gemm_backend", p.gemm_backend}, {"measured", when}};
  std::error_code ec;
  std::filesystem::create_directories(cache_dir(), ec);
  const std::string tmp = calibration_path() + ".tmp";
  std::ofstream(tmp) << doc.dump(2) << "\n";
  std::filesystem::rename(tmp, calibration_path(), ec);
  if (ec) throw Error(ErrorKind::Io, calibration_path() + ": cannot be written: " + ec.message());
}

int cmd_calibrate(const CommonFlags& common, bool force) {
  Runtime runtime(to_options(common));
  const int threads = runtime.config().intra_op_threads;
  Peaks p;
  const bool cached = !force && load_peaks(threads, &p);
  if (!cached) {
    p = measure_peaks(runtime);
    save_peaks(p);
  }
  std::printf("%s for intra_op_threads = %d%s:\n", cached ? "cached peaks" : "measured peaks", threads,
              threads == 0 ? " (the library default)" : "");
  std::printf("  gemm_gflops: %.1f  (fp32 1024x1024x1024 aten::linear on %s)\n", p.gemm_gflops, p.gemm_backend.c_str());
  std::printf("  copy_gbs: %.1f  (64 MiB memcpy, read + write)\n", p.copy_gbs);
  std::printf("%s %s%s\n", cached ? "from" : "saved to", calibration_path().c_str(),
              cached ? " (--force measures again)" : "");
  return 0;
}

}  // namespace switchyard::cli
