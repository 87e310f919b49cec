// GEMM-node throughput of the cuda plugin as a fraction of plain cuBLAS (tools/gpu_check.sh
// runs it on a GPU machine; it is built everywhere the plugin is, and not a CTest).
//
// For each shape a graph of linear nodes (weights [n, k] and [k, n] in turn) runs on the
// cuda plugin alone, at two chain lengths; the difference of the two medians divided by
// the difference of the node counts is the time of one node, free of the input and output
// copies and of per-run fixed costs. The baseline is cublasSgemm on the same shapes
// (float32, TF32 off), timed with CUDA events.
//
//   bench_cuda_gemm [--repeat N] [--markdown FILE]
#include "api/internal.hpp"
#include "cuda_test_util.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace cudatest;

struct Shape3 {
  int64_t m, n, k;
  const char* what;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds of one run of `pairs` (linear n<-k, linear k<-n) pairs.
double switchyard_ms(const Shape3& s, int pairs, bool bias, int repeat) {
  std::vector<Step> steps;
  std::vector<Arg> first = {in(random({s.m, s.k}, 1)), weight(random({s.n, s.k}, 2, kF32, -0.05, 0.05)),
                            bias ? weight(random({s.n}, 3)) : absent()};
  for (int p = 0; p < pairs; ++p) {
    if (p > 0)
      steps.push_back(
          {"aten::linear",
           {},
           {weight(random({s.n, s.k}, 4 + 2 * p, kF32, -0.05, 0.05)), bias ? weight(random({s.n}, 3)) : absent()}});
    else
      steps.push_back({"aten::linear", {}, {}});
    steps.push_back(
        {"aten::linear",
         {},
         {weight(random({s.k, s.n}, 5 + 2 * p, kF32, -0.05, 0.05)), bias ? weight(random({s.k}, 3)) : absent()}});
  }
  Built b = chain(steps, first);
  auto model = load_graph(cuda_runtime(), std::move(b.graph));
  for (const switchyard::PlanEntry& e : model->plan(b.feeds))
    if (e.backend != "cuda") throw std::runtime_error("node " + e.node + " ran on '" + e.backend + "', not cuda");
  for (int i = 0; i < 3; ++i) model->run(b.feeds);
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    model->run(b.feeds);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(times);
}

#define CHECK_CUDA(x)                                                                               \
  do {                                                                                              \
    cudaError_t e = (x);                                                                            \
    if (e != cudaSuccess) throw std::runtime_error(std::string(#x) + ": " + cudaGetErrorString(e)); \
  } while (0)

// Median milliseconds of the pair of cublasSgemm calls that one pair of linear nodes makes.
double cublas_ms(const Shape3& s, int repeat) {
  float *x = nullptr, *w1 = nullptr, *w2 = nullptr, *y = nullptr, *z = nullptr;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(float) * s.m * s.k));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&w1), sizeof(float) * s.n * s.k));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&w2), sizeof(float) * s.n * s.k));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&y), sizeof(float) * s.m * s.n));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&z), sizeof(float) * s.m * s.k));
  CHECK_CUDA(cudaMemset(x, 0, sizeof(float) * s.m * s.k));
  CHECK_CUDA(cudaMemset(w1, 0, sizeof(float) * s.n * s.k));
  CHECK_CUDA(cudaMemset(w2, 0, sizeof(float) * s.n * s.k));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);  // float32 as the plugin computes it: no TF32
  const float one = 1.f, zero = 0.f;
  auto pair = [&] {
    // Row-major y[m, n] = x[m, k] w1[n, k]^T, then z[m, k] = y w2[k, n]^T (column-major terms).
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m), static_cast<int>(s.k), &one,
                w1, static_cast<int>(s.k), x, static_cast<int>(s.k), &zero, y, static_cast<int>(s.n));
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.k), static_cast<int>(s.m), static_cast<int>(s.n), &one,
                w2, static_cast<int>(s.n), y, static_cast<int>(s.n), &zero, z, static_cast<int>(s.k));
  };
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) pair();
  std::vector<double> times;
  constexpr int kInner = 10;
  for (int r = 0; r < repeat; ++r) {
    CHECK_CUDA(cudaEventRecord(a));
    for (int i = 0; i < kInner; ++i) pair();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms / kInner);
  }
  cublasDestroy(h);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  for (float* p : {x, w1, w2, y, z}) cudaFree(p);
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 15;
  std::string markdown;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc)
      repeat = std::stoi(argv[++i]);
    else if (a == "--markdown" && i + 1 < argc)
      markdown = argv[++i];
    else {
      std::cerr << "usage: bench_cuda_gemm [--repeat N] [--markdown FILE]\n";
      return 2;
    }
  }
  if (!gpu().usable) {
    std::cerr << "bench_cuda_gemm: needs a CUDA GPU, and the cuda plugin says: " << gpu().reason << "\n";
    return 2;
  }
  const std::vector<Shape3> shapes = {
      {788, 2304, 768, "ViT-B/16 qkv, batch 4"}, {788, 3072, 768, "ViT-B/16 MLP, batch 4"},
      {256, 512, 128, "GPT-like MLP, batch 4"},  {2048, 2048, 2048, "square 2048"},
      {4096, 4096, 4096, "square 4096"},         {32, 1000, 2048, "classifier head, batch 32"},
  };
  std::ostringstream table;
  table
      << "| GEMM (m x n x k) | what | switchyard node (ms) | cuBLAS (ms) | switchyard GFLOP/s | cuBLAS GFLOP/s | fraction of cuBLAS |\n"
      << "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  try {
    for (const Shape3& s : shapes) {
      const int short_pairs = 1, long_pairs = 5;
      const double t_short = switchyard_ms(s, short_pairs, false, repeat),
                   t_long = switchyard_ms(s, long_pairs, false, repeat);
      const double node_pair = (t_long - t_short) / (long_pairs - short_pairs);
      const double cublas_pair = cublas_ms(s, repeat);
      const double flops_pair = 2.0 * 2.0 * static_cast<double>(s.m) * s.n * s.k;
      char row[512];
      std::snprintf(row, sizeof row, "| %lld x %lld x %lld | %s | %.4f | %.4f | %.0f | %.0f | %.2f |\n",
                    static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k), s.what,
                    node_pair / 2, cublas_pair / 2, flops_pair / node_pair / 1e6, flops_pair / cublas_pair / 1e6,
                    cublas_pair / node_pair);
      table << row;
      std::cout << row << std::flush;
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_cuda_gemm: " << e.what() << "\n";
    return 1;
  }
  if (!markdown.empty()) std::ofstream(markdown) << table.str();
  return 0;
}
