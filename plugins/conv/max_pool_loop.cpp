// conv plugin: max pooling from the storages (nChw16c or nhwc) into nhwc by a loop of its
// own, where a window holding a NaN gives NaN as in ATen.
//
// Why: for ResNet's stem pool oneDNN 2.6's jit pooling wrote nChw16c, which then took a
// reorder to nhwc, and it skips NaN, so every run first scanned its input for one. At
// batch 1 the node took 0.24 ms against ONNX Runtime's 0.05 (docs/benchmarks-history.md,
// max pooling by the plugin's own loop). This loop reads either layout, writes nhwc and
// keeps NaN in one pass.
#include "pool_kernel.hpp"

#include "common/vector_clones.hpp"
#include "formats.hpp"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SY_POOL_AVX512 1
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace syconv {

namespace {

// ATen's max: NaN wins, and stays once taken.
inline float max_keeping_nan(float m, float v) { return v > m || v != v ? v : m; }

struct Window {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;  // dh, dw: the distance between taps
};

// One dimension of output position `out`'s window: it starts at input index `start`, and
// its taps [lo, hi) fall inside the input.
struct Span {
  int64_t start, lo, hi;
};
// By steps, not a division: two divisions per output pixel took half the loop's time.
inline Span span(int64_t out, int64_t stride, int64_t pad, int64_t step, int64_t count, int64_t size) {
  Span s{out * stride - pad, 0, count};
  while (s.lo < count && s.start + s.lo * step < 0) ++s.lo;
  while (s.hi > s.lo && s.start + (s.hi - 1) * step >= size) --s.hi;
  return s;
}

// Output row `oh` of one 16-channel block, in two passes: the max over the window's rows
// for every input column into `columns` ([W, 16]), then the max over each window's
// columns from there. The first pass is long vector loops over whole input rows, with no
// window arithmetic per tap (a 3x3, stride-2 window: 6 loads from the input per output
// pixel instead of 9). `x` is the block's [H, W, 16] plane, `y` the row's first
// pixel at this block's channels, `step` floats apart; `lanes` (1-16) of the block are
// channels (the last block may be short).
SY_VECTOR_CLONES void blocked_row(const float* x, int64_t H, int64_t W, const Window& k, int64_t oh, int64_t OW,
                                  float* y, int64_t step, int64_t lanes, float* columns) {
  const Span r = span(oh, k.sh, k.ph, k.dh, k.kh, H);
  const float* top = x + (r.start + r.lo * k.dh) * W * 16;
  const int64_t row_step = k.dh * W * 16, n = W * 16;
  // Row by row over the whole input row: long vector loops, `columns` staying in L1.
  std::fill(columns, columns + n, -std::numeric_limits<float>::infinity());
  for (int64_t i = r.lo; i < r.hi; ++i) {
    const float* p = top + (i - r.lo) * row_step;
#pragma omp simd
    for (int64_t e = 0; e < n; ++e) columns[e] = max_keeping_nan(columns[e], p[e]);
  }
  for (int64_t ow = 0; ow < OW; ++ow) {
    const Span c = span(ow, k.sw, k.pw, k.dw, k.kw, W);
    const float* left = columns + (c.start + c.lo * k.dw) * 16;
    float m[16];
#pragma omp simd
    for (int l = 0; l < 16; ++l) m[l] = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < c.hi - c.lo; ++j) {
      const float* p = left + j * k.dw * 16;
#pragma omp simd
      for (int l = 0; l < 16; ++l) m[l] = max_keeping_nan(m[l], p[l]);
    }
    float* o = y + ow * step;
    if (lanes == 16) {  // a whole vector: a runtime-sized memcpy here was a library call per pixel
#pragma omp simd
      for (int l = 0; l < 16; ++l) o[l] = m[l];
    } else {
      std::memcpy(o, m, static_cast<size_t>(lanes) * sizeof(float));
    }
  }
}

// The max over one output pixel's window of `B` channels from `ch`, from nhwc rows `x`
// ([rows, W, C], row 0 being input row `first`), the window's rows `r` and columns `c`,
// into `m`. The running max stays in registers: over a runtime channel count it went
// through memory on every tap.
template <int B>
inline void window_max(const float* x, int64_t first, int64_t W, int64_t C, const Window& k, const Span& r,
                       const Span& c, int64_t ch, float* m) {
#pragma omp simd
  for (int l = 0; l < B; ++l) m[l] = -std::numeric_limits<float>::infinity();
  for (int64_t i = r.lo; i < r.hi; ++i)
    for (int64_t j = c.lo; j < c.hi; ++j) {
      const float* p = x + ((r.start + i * k.dh - first) * W + c.start + j * k.dw) * C + ch;
#pragma omp simd
      for (int l = 0; l < B; ++l) m[l] = max_keeping_nan(m[l], p[l]);
    }
}

// ATen's relu: NaN stays NaN.
inline float relu_keeping_nan(float v) { return v > 0.f || v != v ? v : 0.f; }

// Channels [ch, ch + B) of one output pixel to `o`, channel c at o[c * step].
template <int B>
inline void pixel_channels(const float* x, int64_t first, int64_t W, int64_t C, const Window& k, const Span& r,
                           const Span& c, int64_t ch, bool relu, float* o, int64_t step) {
  float m[B];
  window_max<B>(x, first, W, C, k, r, c, ch, m);
  if (relu) {
#pragma omp simd
    for (int l = 0; l < B; ++l) m[l] = relu_keeping_nan(m[l]);
  }
  if (step == 1) {
#pragma omp simd
    for (int l = 0; l < B; ++l) o[ch + l] = m[l];
  } else {
    for (int l = 0; l < B; ++l) o[(ch + l) * step] = m[l];
  }
}

// Output rows [begin, end) from nhwc rows `x` (row 0 being input row `first`) of an input
// [H, W, C]; pixel (oh, ow) channel c goes to y[oh * ys[0] + ow * ys[1] + c * ys[2]].
SY_VECTOR_CLONES void nhwc_rows(const float* x, int64_t first, int64_t H, int64_t W, int64_t C, const Window& k,
                                int64_t begin, int64_t end, int64_t OW, bool relu, float* y, const int64_t* ys) {
  for (int64_t oh = begin; oh < end; ++oh) {
    const Span r = span(oh, k.sh, k.ph, k.dh, k.kh, H);
    for (int64_t ow = 0; ow < OW; ++ow) {
      const Span c = span(ow, k.sw, k.pw, k.dw, k.kw, W);
      float* o = y + oh * ys[0] + ow * ys[1];
      int64_t ch = 0;
      for (; ch + 64 <= C; ch += 64) pixel_channels<64>(x, first, W, C, k, r, c, ch, relu, o, ys[2]);
      for (; ch + 16 <= C; ch += 16) pixel_channels<16>(x, first, W, C, k, r, c, ch, relu, o, ys[2]);
      for (; ch < C; ++ch) pixel_channels<1>(x, first, W, C, k, r, c, ch, relu, o, ys[2]);
    }
  }
}

#ifdef SY_POOL_AVX512
// GCC 12 takes _mm512_max_ps's unused merge operand for an uninitialised value.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// nhwc_rows on AVX-512 for channels in multiples of 16, with plain vmaxps: the careful max
// above is four dependent instructions per tap, and the loop ran at 36 ns per 64-channel
// pixel from L2 against 16 here (docs/benchmarks-history.md, the max pool loop on AVX-512).
// An unordered
// compare notes whether any tap was NaN; then it returns false, and the caller runs the
// careful loop over the same rows (NaN is rare).
__attribute__((target("avx512f"))) bool nhwc_rows_avx512(const float* x, int64_t first, int64_t H, int64_t W, int64_t C,
                                                         const Window& k, int64_t begin, int64_t end, int64_t OW,
                                                         bool relu, float* y, const int64_t* ys) {
  __mmask16 nan = 0;
  const __m512 lowest = _mm512_set1_ps(-INFINITY), zero = _mm512_setzero_ps();
  auto tap = [&](const Span& r, const Span& c, int64_t i, int64_t j, int64_t ch) {
    return x + ((r.start + i * k.dh - first) * W + c.start + j * k.dw) * C + ch;
  };
  for (int64_t oh = begin; oh < end; ++oh) {
    const Span r = span(oh, k.sh, k.ph, k.dh, k.kh, H);
    for (int64_t ow = 0; ow < OW; ++ow) {
      const Span c = span(ow, k.sw, k.pw, k.dw, k.kw, W);
      float* o = y + oh * ys[0] + ow * ys[1];
      int64_t ch = 0;
      for (; ch + 64 <= C; ch += 64) {  // four accumulators: the taps' maxes overlap
        __m512 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
        for (int64_t i = r.lo; i < r.hi; ++i)
          for (int64_t j = c.lo; j < c.hi; ++j) {
            const float* p = tap(r, c, i, j, ch);
            const __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16), v2 = _mm512_loadu_ps(p + 32),
                         v3 = _mm512_loadu_ps(p + 48);
            nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v2, v3, _CMP_UNORD_Q);
            m0 = _mm512_max_ps(m0, v0), m1 = _mm512_max_ps(m1, v1);
            m2 = _mm512_max_ps(m2, v2), m3 = _mm512_max_ps(m3, v3);
          }
        if (relu) {
          m0 = _mm512_max_ps(m0, zero), m1 = _mm512_max_ps(m1, zero);
          m2 = _mm512_max_ps(m2, zero), m3 = _mm512_max_ps(m3, zero);
        }
        _mm512_storeu_ps(o + ch, m0), _mm512_storeu_ps(o + ch + 16, m1);
        _mm512_storeu_ps(o + ch + 32, m2), _mm512_storeu_ps(o + ch + 48, m3);
      }
      for (; ch < C; ch += 16) {
        __m512 m = lowest;
        for (int64_t i = r.lo; i < r.hi; ++i)
          for (int64_t j = c.lo; j < c.hi; ++j) {
            const __m512 v = _mm512_loadu_ps(tap(r, c, i, j, ch));
            nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            m = _mm512_max_ps(m, v);
          }
        _mm512_storeu_ps(o + ch, relu ? _mm512_max_ps(m, zero) : m);
      }
    }
  }
  return nan == 0;
}
#pragma GCC diagnostic pop
#endif

// nhwc_rows, on AVX-512 where it can and no NaN came.
void pool_nhwc_rows(const float* x, int64_t first, int64_t H, int64_t W, int64_t C, const Window& k, int64_t begin,
                    int64_t end, int64_t OW, bool relu, float* y, const int64_t* ys) {
#ifdef SY_POOL_AVX512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512 && C % 16 == 0 && ys[2] == 1 && nhwc_rows_avx512(x, first, H, W, C, k, begin, end, OW, relu, y, ys))
    return;
#endif
  nhwc_rows(x, first, H, W, C, k, begin, end, OW, relu, y, ys);
}

Window window_of(const PoolKernel::Geometry& g) {  // oneDNN's dilation is one less
  return Window{g.kernel[0], g.kernel[1], g.stride[0],       g.stride[1],
                g.pad_l[0],  g.pad_l[1],  g.dilation[0] + 1, g.dilation[1] + 1};
}

}  // namespace

bool max_pool_into_nhwc(const PoolKernel::Geometry& g, const float* x, SY_StorageIndex in, float* y) {
  if (in != Blocked16::kIndex && in != ChannelsLast::kIndex) return false;
  const int64_t N = g.src[0], C = g.src[1], H = g.src[2], W = g.src[3], OH = g.dst[2], OW = g.dst[3];
  const Window k = window_of(g);
  // One task per output row, written whole (from nChw16c a block of 16 channels at a time).
  auto task = [&](int64_t t) {
    const int64_t oh = t % OH, n = t / OH;
    float* row = y + (n * OH + oh) * OW * C;
    if (in == ChannelsLast::kIndex) {
      const int64_t ys[3] = {OW * C, C, 1};
      return pool_nhwc_rows(x + n * H * W * C, 0, H, W, C, k, oh, oh + 1, OW, false, y + n * OH * OW * C, ys);
    }
    const int64_t blocks = (C + 15) / 16;
    thread_local std::vector<float> columns;  // one input row's worth: kept, like oneDNN's scratchpad
    columns.resize(static_cast<size_t>(W) * 16);
    for (int64_t b = 0; b < blocks; ++b)
      blocked_row(x + (n * blocks + b) * H * W * 16, H, W, k, oh, OW, row + b * 16, C,
                  std::min<int64_t>(16, C - b * 16), columns.data());
  };
  const double work = static_cast<double>(N * C * OH * OW * k.kh * k.kw);
  if (work < sy_omp::kSerialWork) {
    for (int64_t t = 0; t < N * OH; ++t) task(t);
    return true;
  }
  sy_omp::Threads threads(work);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N * OH; ++t) task(t);
  return true;
}

void max_pool_rows(const PoolKernel::Geometry& g, const float* x, int64_t first, int64_t begin, int64_t end, bool relu,
                   float* y, const int64_t ys[3]) {
  pool_nhwc_rows(x, first, g.src[2], g.src[3], g.src[1], window_of(g), begin, end, g.dst[3], relu, y, ys);
}

}  // namespace syconv
