// conv plugin: max pooling from the storages (nChw16c or nhwc) into nhwc by a loop of its
// own, where a window holding a NaN gives NaN as in ATen.
//
// Why: for ResNet's stem pool oneDNN 2.6's jit pooling wrote nChw16c, which then took a
// reorder to nhwc, and it skips NaN, so every run first scanned its input for one. At
// batch 1 the node took 0.24 ms against ONNX Runtime's 0.05 (docs/benchmarks.md, tenth
// measurement). This loop reads either layout, writes nhwc and keeps NaN in one pass.
#include "pool_kernel.hpp"

#include "common/vector_clones.hpp"
#include "formats.hpp"

#include <algorithm>
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

// Output row `oh` from nhwc: `x` is one image [H, W, C], `y` the row [OW, C].
SY_VECTOR_CLONES void nhwc_row(const float* x, int64_t H, int64_t W, int64_t C, const Window& k, int64_t oh,
                               int64_t OW, float* y) {
  const Span r = span(oh, k.sh, k.ph, k.dh, k.kh, H);
  for (int64_t ow = 0; ow < OW; ++ow) {
    const Span c = span(ow, k.sw, k.pw, k.dw, k.kw, W);
    float* o = y + ow * C;
    std::fill(o, o + C, -std::numeric_limits<float>::infinity());
    for (int64_t i = r.lo; i < r.hi; ++i)
      for (int64_t j = c.lo; j < c.hi; ++j) {
        const float* p = x + ((r.start + i * k.dh) * W + c.start + j * k.dw) * C;
#pragma omp simd
        for (int64_t ch = 0; ch < C; ++ch) o[ch] = max_keeping_nan(o[ch], p[ch]);
      }
  }
}

}  // namespace

bool max_pool_into_nhwc(const PoolKernel::Geometry& g, const float* x, SY_StorageIndex in, float* y) {
  if (in != Blocked16::kIndex && in != ChannelsLast::kIndex) return false;
  const int64_t N = g.src[0], C = g.src[1], H = g.src[2], W = g.src[3], OH = g.dst[2], OW = g.dst[3];
  const Window k{g.kernel[0], g.kernel[1], g.stride[0], g.stride[1],
                 g.pad_l[0],  g.pad_l[1],  g.dilation[0] + 1, g.dilation[1] + 1};  // oneDNN's dilation is one less
  // One task per output row, written whole (from nChw16c a block of 16 channels at a time).
  auto task = [&](int64_t t) {
    const int64_t oh = t % OH, n = t / OH;
    float* row = y + (n * OH + oh) * OW * C;
    if (in == ChannelsLast::kIndex) return nhwc_row(x + n * H * W * C, H, W, C, k, oh, OW, row);
    const int64_t blocks = (C + 15) / 16;
    thread_local std::vector<float> columns;  // one input row's worth: kept, like oneDNN's scratchpad
    columns.resize(static_cast<size_t>(W) * 16);
    for (int64_t b = 0; b < blocks; ++b)
      blocked_row(x + (n * blocks + b) * H * W * 16, H, W, k, oh, OW, row + b * 16, C, std::min<int64_t>(16, C - b * 16),
                  columns.data());
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

}  // namespace syconv
