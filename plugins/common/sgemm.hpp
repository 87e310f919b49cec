// Float32 GEMM for the plugins (linalg, attention): oneDNN's sgemm, which picks its
// kernels for the CPU it runs on (AVX-512, AMX, ...) at run time, where Debian's OpenBLAS
// 0.3.21 falls back to Haswell kernels on CPUs newer than it knows. oneDNN runs on its
// OpenMP team, sized from the host's thread budget (openmp_threads.hpp), so no BLAS pool
// of its own competes with the host's threads.
#pragma once

#include "common/library_attributes.hpp"
#include "common/openmp_threads.hpp"

#include <oneapi/dnnl/dnnl.h>
#include <switchyard/plugin.hpp>

#include <cstdint>
#include <string>

namespace sy_gemm {

// Row-major C = alpha * op(A) * op(B) + beta * C, as CBLAS's sgemm with CblasRowMajor.
inline void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  sy_omp::Threads threads(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  const dnnl_status_t s =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (s == dnnl_success) return;
  const std::string what = "oneDNN sgemm [" + std::to_string(m) + ", " + std::to_string(k) + "] x [" +
                           std::to_string(k) + ", " + std::to_string(n) + "] failed (oneDNN status " +
                           std::to_string(static_cast<int>(s)) + ")";
  throw sy::Error(s == dnnl_out_of_memory ? what + ": out of memory" : what,
                  s == dnnl_out_of_memory ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL);
}

// "oneDNN 3.0.0 sgemm, avx512_core": what the plugins report as their GEMM.
inline std::string describe() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " sgemm, " + sy_attributes::onednn_isa();
}

}  // namespace sy_gemm
