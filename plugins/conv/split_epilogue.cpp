// conv plugin: epilogues run by the plugin's own loop after a bare convolution, instead of
// as oneDNN post-ops, where that is faster. The convolution runs a batch chunk at a time
// and the loop follows each chunk while it is still in cache.
//
//  - A residual tail (+ add, + relu) whose output passes 16 MiB (6 MiB for a thin 1x1
//    tail): the convolution writes scratch, then out = relu(conv + alpha * residual).
//    oneDNN 2.6's brgemm convolutions (what it picks for nhwc on AVX-512) read the sum
//    post-op's operand slowly once it is out of cache: ResNet-50's first-stage tail at
//    batch 8 ([8, 256, 56, 56], 25.7 MB) took 3.3-3.8 ms fused and 2.7 split
//    (docs/benchmarks-history.md, split residual tails).
//  - A relu after a convolution that reads at least twice the bytes it writes (a 1x1
//    bottleneck, a stride-2 depthwise): the convolution writes the output, then relu runs
//    over it in place. Fused, oneDNN's relu turns NaN into 0, so every run scanned the
//    larger input for NaN first (ConvKernel::run's guard); the loop keeps NaN as ATen does.
#include "conv_kernel.hpp"

#include "batch_chunk.hpp"
#include "common/vector_clones.hpp"
#include "finite_memo.hpp"
#include "formats.hpp"

#include <algorithm>
#include <cstring>

namespace syconv {

namespace {

// Residual outputs smaller than this keep the fused sum, which costs little while its
// operand is still in the last-level cache.
constexpr uint64_t kSplitResidualFromBytes = uint64_t{16} << 20;
// From this size on, a thin convolution (at most kThinMacsPerOutput multiply-adds per
// output element: a 1x1 bottleneck tail) splits too; it has too little arithmetic to hide
// the residual's reads. Measured in the network (docs/benchmarks-history.md, 1x1 tails):
// ResNet-50's 12.8 MB tails, 2.9 -> 2.2 ms at batch 8, while ResNet-18's 3x3 tails at
// 6.4 MB (576 multiply-adds per output) are faster fused.
constexpr uint64_t kSplitThinResidualFromBytes = uint64_t{6} << 20;
constexpr int64_t kThinMacsPerOutput = 256;
// A chunk's output at most this large (one image at least): it stays in the last-level
// cache between the convolution and the loop, and the residual's scratch stays small.
constexpr uint64_t kChunkBytes = uint64_t{4} << 20;

// ATen's relu: NaN stays NaN.
inline float relu_keeping_nan(float v) { return v > 0.f || v != v ? v : 0.f; }

// out[i] = conv[i] + alpha * residual[i], then relu; `conv` NULL: out[i] = relu(out[i]).
// Elementwise, so `out` may be `residual`. Returns the largest exponent field of the values
// before the relu (kNonFinite: one was NaN or infinite), taken while each is in a register
// (see run_split).
SY_VECTOR_CLONES uint32_t epilogue_range(float* out, const float* conv, const float* residual, float alpha, bool relu,
                                         int64_t from, int64_t to) {
  uint32_t top = 0;
  auto exponent = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits & kNonFinite;
  };
  if (conv == nullptr) {
#pragma omp simd reduction(max : top)
    for (int64_t i = from; i < to; ++i) {
      top = std::max(top, exponent(out[i]));
      out[i] = relu_keeping_nan(out[i]);
    }
  } else {
#pragma omp simd reduction(max : top)
    for (int64_t i = from; i < to; ++i) {
      const float v = conv[i] + alpha * residual[i];
      top = std::max(top, exponent(v));
      out[i] = relu ? relu_keeping_nan(v) : v;
    }
  }
  return top;
}

uint32_t epilogue(float* out, const float* conv, const float* residual, int64_t n, float alpha, bool relu) {
  const double work = static_cast<double>(n);
  if (work < sy_omp::kSerialWork) return epilogue_range(out, conv, residual, alpha, relu, 0, n);
  sy_omp::Threads threads(work);
  uint32_t top = 0;
#pragma omp parallel reduction(max : top)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    top = std::max(top, epilogue_range(out, conv, residual, alpha, relu, n * t / team, n * (t + 1) / team));
  }
  return top;
}

// The relu over bfloat16 bits (a .bf16 storage's output, formats.hpp): negatives, -0
// included, become +0 and NaN stays, as relu_keeping_nan does. Returns the largest
// exponent field before it, as a float32's.
SY_VECTOR_CLONES uint32_t relu_bf16_range(uint16_t* out, int64_t from, int64_t to) {
  uint32_t top = 0;
#pragma omp simd reduction(max : top)
  for (int64_t i = from; i < to; ++i) {
    const uint32_t v = out[i];
    top = std::max(top, (v << 16) & kNonFinite);
    out[i] = (v & 0x8000u) != 0 && (v & 0x7fffu) <= 0x7f80u ? uint16_t{0} : out[i];
  }
  return top;
}

uint32_t relu_bf16(uint16_t* out, int64_t n) {
  const double work = static_cast<double>(n);
  if (work < sy_omp::kSerialWork) return relu_bf16_range(out, 0, n);
  sy_omp::Threads threads(work);
  uint32_t top = 0;
#pragma omp parallel reduction(max : top)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    top = std::max(top, relu_bf16_range(out, n * t / team, n * (t + 1) / team));
  }
  return top;
}

// True for a 1x1, stride-1, unpadded convolution: every input element then feeds every
// output channel at its pixel, so a NaN or an infinity anywhere in the input leaves a NaN
// or an infinity in the output (w * NaN is NaN, w * inf is inf or NaN, for any w).
bool every_input_reaches_the_output(const ConvKernel::Params& p, const DLTensor& weights) {
  for (int d = 2; d < weights.ndim; ++d)
    if (weights.shape[d] != 1) return false;
  for (int64_t v : p.stride)
    if (v != 1) return false;
  for (int64_t v : p.padding)
    if (v != 0) return false;
  return weights.ndim > 2;
}

// The output size from which a residual tail runs split, for these weights [O, I/g, kh, kw].
uint64_t split_residual_from(const DLTensor& weights) {
  int64_t macs_per_output = 1;
  for (int d = 1; d < weights.ndim; ++d) macs_per_output *= weights.shape[d];
  return macs_per_output <= kThinMacsPerOutput ? kSplitThinResidualFromBytes : kSplitResidualFromBytes;
}

bool compact(const DLTensor& t) { return strides_of(t) == compact_strides(sy::shape_of(t)); }

}  // namespace

bool ConvKernel::run_split(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to, SY_StorageIndex res) {
  const bool residual = a[3] != nullptr;
  // The loop walks elements by position: the output (and the residual) are dense, in one
  // layout (a residual's of floats; a relu's may be a .bf16 storage's).
  if (out.ndim != 4 || a[0]->ndim != 4 || (residual && (res != to || holds_bf16(to)))) return false;
  if (to == SY_STORAGE_HOST && !(compact(out) && (!residual || compact(*a[3])))) return false;
  const int64_t batch = out.shape[0];
  const uint64_t per_image = image_bytes(out, to), x_image = image_bytes(*a[0], in);
  if (residual ? per_image * static_cast<uint64_t>(batch) < split_residual_from(*a[1]) : x_image < 2 * per_image)
    return false;
  int64_t chunk = 1;  // the largest divisor of the batch that fits kChunkBytes: one primitive
  for (int64_t c = batch; c >= 1; --c)
    if (batch % c == 0 && per_image * static_cast<uint64_t>(c) <= kChunkBytes) {
      chunk = c;
      break;
    }
  const uint64_t chunk_bytes = per_image * static_cast<uint64_t>(chunk);
  float* scratch = residual ? thread_buffer(ThreadBuffer::kChunk, chunk_bytes) : nullptr;
  BatchChunk part(a, &out, chunk, in, to, res);
  uint32_t top = 0;  // the largest exponent field before the relu
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    part.at(n0);
    const Args& c = part.args();
    float* slice = static_cast<float*>(handle(part.out()));
    run_bare({c[0], c[1], c[2], nullptr}, part.out(), in, to, residual ? scratch : slice);
    const int64_t n = static_cast<int64_t>(chunk_bytes / (holds_bf16(to) ? sizeof(uint16_t) : sizeof(float)));
    if (residual) {
      const auto* chunk_residual = static_cast<const float*>(handle(*c[3]));
      top = std::max(
          top, epilogue(slice, scratch, chunk_residual, n, residual_alpha_, params_.fusion.activation != nullptr));
    } else {
      top = std::max(top, holds_bf16(to) ? relu_bf16(reinterpret_cast<uint16_t*>(slice), n)
                                         : epilogue(slice, nullptr, nullptr, n, 1.f, true));
    }
  }
  // The loop saw every value before the relu finite: so is the output, and so are the
  // input (where each of its elements reaches the output) and the residual (for any alpha:
  // 0 * inf is NaN). Their next guarded readers then skip their scans (finite_memo.hpp):
  // at batch 1 a ResNet-50 run scanned 33 MB, most of it residuals a 1x1 reduce had read.
  // A relu only lowers magnitudes, so the output's exponents are at most `top`.
  if (top < kNonFinite) {
    remember_written(handle(out), per_image * static_cast<uint64_t>(batch), to, top);
    if (every_input_reaches_the_output(params_, *a[1]))
      remember_written(handle(*a[0]), x_image * static_cast<uint64_t>(batch), in);
    if (residual) remember_written(handle(*a[3]), per_image * static_cast<uint64_t>(batch), res);
  }
  return true;
}

}  // namespace syconv
