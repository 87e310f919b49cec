// cuda plugin: adaptive average pooling (launch.hpp), ATen's windows: output cell (i, j)
// averages input rows [floor(i*h/oh), ceil((i+1)*h/oh)) and the columns alike. One warp per
// output cell, so that a global pool over a large plane (oh = ow = 1) still spreads out.
#include "device_types.cuh"

namespace sycuda::launch {

namespace {

__device__ __forceinline__ int64_t start_index(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
__device__ __forceinline__ int64_t end_index(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

template <typename T>
__global__ void adaptive_avg_pool_kernel(const T* x, T* y, int64_t cells, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x >> 5);
  for (int64_t cell = blockIdx.x * static_cast<int64_t>(blockDim.x >> 5) + (threadIdx.x >> 5); cell < cells; cell += warps) {
    const int64_t j = cell % ow, i = (cell / ow) % oh, plane = cell / (ow * oh);
    const int64_t h0 = start_index(i, oh, h), h1 = end_index(i, oh, h);
    const int64_t w0 = start_index(j, ow, w), w1 = end_index(j, ow, w);
    const int64_t kw = w1 - w0, count = (h1 - h0) * kw;
    const T* base = x + plane * h * w;
    float s = 0.f;
    for (int64_t k = lane; k < count; k += 32) s += to_float(base[(h0 + k / kw) * w + w0 + k % kw]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[cell] = from_float<T>(s / static_cast<float>(count));
  }
}

}  // namespace

cudaError_t adaptive_avg_pool2d(DT dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                                cudaStream_t stream) {
  const int64_t cells = planes * oh * ow;
  if (cells <= 0) return cudaSuccess;
  if (h < 1 || w < 1) return cudaErrorInvalidValue;
  const cudaError_t e = dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    adaptive_avg_pool_kernel<T><<<blocks_for(cells * 32), kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                                                static_cast<T*>(y), cells, h, w, oh, ow);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace sycuda::launch
