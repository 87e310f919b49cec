// float32 -> bfloat16, rounded to nearest even, NaN kept NaN: the per-run conversion of a
// bfloat16 kernel's input. oneDNN 2.6's reorder does it at about 1 element per ns on
// this machine's AVX512-BF16 CPU; this loop vectorises and splits over the OpenMP team.
#pragma once

#include "common/vector_clones.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sy_bf16 {

SY_VECTOR_CLONES inline void to_bf16_serial(const float* src, uint16_t* dst, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    dst[i] = static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : rounded);
  }
}

// `rows` rows of `cols` elements, `src_stride` and `dst_stride` elements apart.
inline void to_bf16(const float* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols) {
  constexpr int64_t kPerThread = 32 * 1024;  // elements below which a thread is not worth waking
  const int64_t total = rows * cols;
  const int threads =
      static_cast<int>(std::min<int64_t>(omp_get_max_threads(), std::max<int64_t>(1, total / kPerThread)));
  if (src_stride == cols && dst_stride == cols) {  // one flat run, cut in equal parts
    if (threads < 2) return to_bf16_serial(src, dst, static_cast<size_t>(total));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = total * t / threads, end = total * (t + 1) / threads;
      to_bf16_serial(src + begin, dst + begin, static_cast<size_t>(end - begin));
    }
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r)
    to_bf16_serial(src + r * src_stride, dst + r * dst_stride, static_cast<size_t>(cols));
}

// relu over bfloat16 bits, in place: negatives (-0 too) become +0 and NaN stays NaN, as
// ATen's relu; relu then rounding gives the same bits as rounding then relu.
SY_VECTOR_CLONES inline void relu_serial(uint16_t* x, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) x[i] = (x[i] & 0x8000u) != 0 && (x[i] & 0x7fffu) <= 0x7f80u ? uint16_t{0} : x[i];
}

inline void relu(uint16_t* x, int64_t n) {
  constexpr int64_t kPerThread = 32 * 1024;  // as to_bf16
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), std::max<int64_t>(1, n / kPerThread)));
  if (threads < 2) return relu_serial(x, static_cast<size_t>(n));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    relu_serial(x + begin, static_cast<size_t>(end - begin));
  }
}

}  // namespace sy_bf16
