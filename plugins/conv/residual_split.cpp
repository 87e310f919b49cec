// conv plugin: a residual block's tail (conv + add, + relu) on a large output, split in
// two: the bare convolution into scratch, one batch chunk at a time, then
// out = relu(conv + alpha * residual) by a loop while the chunk is still in cache.
//
// Why: oneDNN 2.6's brgemm convolutions (what it picks for nhwc on AVX-512) read the sum
// post-op's operand slowly once it is out of cache. ResNet-50's first-stage tail at batch 8
// ([8, 256, 56, 56], 25.7 MB) took 3.6 ms fused against 2.0 ms bare and 2.4 ms split
// (docs/benchmarks.md, tenth measurement). The loop's relu keeps NaN as ATen's does, so
// these runs need no NaN scan either (ConvKernel::run's guard).
#include "conv_kernel.hpp"

#include "formats.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>

namespace syconv {

namespace {

// Outputs smaller than this keep the fused sum, which costs little while its operand is in
// the last-level cache (here 32 MiB): ResNet-50's first-stage tail at batch 4 (12.8 MB)
// took 1.17 ms fused and 1.6-1.8 split, at batch 8 (25.7 MB) 3.3-3.8 fused and 2.7 split.
constexpr uint64_t kSplitFromBytes = uint64_t{16} << 20;
// A chunk's output at most this large (one image at least): it stays in the last-level
// cache between the convolution and the loop, and the scratch stays small.
constexpr uint64_t kChunkBytes = uint64_t{4} << 20;

// The calling thread's scratch for one chunk, grown as needed and kept (64-byte aligned).
float* chunk_scratch(size_t bytes) {
  struct Buffer {
    std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
    size_t bytes = 0;
  };
  static thread_local Buffer buffer;
  if (buffer.bytes < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data.reset(static_cast<float*>(std::aligned_alloc(64, rounded)));
    if (!buffer.data) {
      buffer.bytes = 0;
      throw sy::Error("conv plugin: out of memory for a residual chunk of " + std::to_string(bytes) + " bytes",
                      SY_ERROR_OUT_OF_MEMORY);
    }
    buffer.bytes = rounded;
  }
  return buffer.data.get();
}

// out = conv + alpha * residual, then relu keeping NaN (ATen's relu does). Elementwise,
// so `out` may be `residual`.
void add_residual(float* out, const float* conv, const float* residual, int64_t n, float alpha, bool relu) {
  auto range = [&](int64_t from, int64_t to) {
    if (relu) {
#pragma omp simd
      for (int64_t i = from; i < to; ++i) {
        const float v = conv[i] + alpha * residual[i];
        out[i] = v > 0.f || v != v ? v : 0.f;
      }
    } else {
#pragma omp simd
      for (int64_t i = from; i < to; ++i) out[i] = conv[i] + alpha * residual[i];
    }
  };
  const double work = static_cast<double>(n);
  if (work < sy_omp::kSerialWork) return range(0, n);
  sy_omp::Threads threads(work);
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    range(n * t / team, n * (t + 1) / team);
  }
}

// Bytes from one image to the next of a [N, ...] tensor in `storage` (or as its strides say).
uint64_t image_bytes(const DLTensor& t, SY_StorageIndex storage) {
  Dims one = sy::shape_of(t);
  one[0] = 1;
  if (storage != SY_STORAGE_HOST) return layout_of_storage(storage, one).get_size();
  return static_cast<uint64_t>(strides_of(t)[0]) * sizeof(float);
}

bool compact(const DLTensor& t) {
  return strides_of(t) == compact_strides(sy::shape_of(t));
}

}  // namespace

bool ConvKernel::run_split(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to,
                           SY_StorageIndex res) {
  const DLTensor& r = *a[3];
  // The loop pairs elements by position: output and residual share one dense layout.
  if (out.ndim != 4 || res != to) return false;
  if (to == SY_STORAGE_HOST && !(compact(out) && compact(r))) return false;
  const int64_t batch = out.shape[0];
  const uint64_t per_image = image_bytes(out, to);
  if (per_image * static_cast<uint64_t>(batch) < kSplitFromBytes) return false;
  int64_t chunk = 1;  // the largest divisor of the batch that fits kChunkBytes: one primitive
  for (int64_t c = batch; c >= 1; --c)
    if (batch % c == 0 && per_image * static_cast<uint64_t>(c) <= kChunkBytes) {
      chunk = c;
      break;
    }
  float* scratch = chunk_scratch(per_image * static_cast<uint64_t>(chunk));
  const uint64_t x_image = image_bytes(*a[0], in);
  int64_t x_shape[4], out_shape[4];
  std::copy(a[0]->shape, a[0]->shape + 4, x_shape);
  std::copy(out.shape, out.shape + 4, out_shape);
  x_shape[0] = out_shape[0] = chunk;
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    DLTensor x = *a[0], y = out;
    x.shape = x_shape;
    y.shape = out_shape;
    x.byte_offset += static_cast<uint64_t>(n0) * x_image;
    const Args part{&x, a[1], a[2], nullptr};
    run_bare(part, y, in, to, scratch);
    const uint64_t offset = static_cast<uint64_t>(n0) * per_image;
    add_residual(reinterpret_cast<float*>(static_cast<char*>(handle(out)) + offset), scratch,
                 reinterpret_cast<const float*>(static_cast<const char*>(handle(r)) + offset),
                 static_cast<int64_t>(per_image * static_cast<uint64_t>(chunk) / sizeof(float)), residual_alpha_,
                 params_.fusion.activation != nullptr);
  }
  return true;
}

}  // namespace syconv
