// cuda plugin: softmax, log_softmax and layer_norm device kernels (launch.hpp). Rows
// along the last dim get one block each (a block-wide reduction); softmax over an inner
// dim gets a thread per (outer, inner) column, so that neighbouring threads read
// neighbouring elements. Sums and maxima are float.
#include "device_types.cuh"

#include <cfloat>

namespace sycuda::launch {

namespace {

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide sum or max, the result in every thread. `scratch` holds 32 floats; blockDim.x
// is a multiple of 32.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = kMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.f);
  return kMax ? warp_max(v) : warp_sum(v);
}

template <typename T>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t cols, bool log) {
  __shared__ float scratch[32];
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float m = -INFINITY;
  bool nan = false;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = to_float(row[j]);
    nan = nan || v != v;
    m = fmaxf(m, v);
  }
  m = block_reduce<true>(m, scratch);
  if (block_reduce<false>(nan ? 1.f : 0.f, scratch) > 0.f) m = NAN;  // a NaN anywhere: NaN everywhere, as ATen
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(to_float(row[j]) - m);
  s = block_reduce<false>(s, scratch);
  const float log_s = logf(s);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = to_float(row[j]) - m;
    out[j] = from_float<T>(log ? d - log_s : expf(d) / s);
  }
}

template <typename T>
__global__ void softmax_inner_kernel(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner, bool log) {
  SY_GRID_STRIDE(c, outer * inner) {
    const int64_t o = c / inner, r = c % inner;
    const T* base = x + o * dim * inner + r;
    T* out = y + o * dim * inner + r;
    float m = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < dim; ++j) {
      const float v = to_float(base[j * inner]);
      nan = nan || v != v;
      m = fmaxf(m, v);
    }
    if (nan) m = NAN;
    float s = 0.f;
    for (int64_t j = 0; j < dim; ++j) s += expf(to_float(base[j * inner]) - m);
    const float log_s = logf(s);
    for (int64_t j = 0; j < dim; ++j) {
      const float d = to_float(base[j * inner]) - m;
      out[j * inner] = from_float<T>(log ? d - log_s : expf(d) / s);
    }
  }
}

template <typename T>
__global__ void layer_norm_kernel(const T* x, T* y, const T* weight, const T* bias, int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += to_float(row[j]);
  const float mean = block_reduce<false>(s, scratch) / static_cast<float>(cols);
  float q = 0.f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = to_float(row[j]) - mean;
    q += d * d;
  }
  const float var = block_reduce<false>(q, scratch) / static_cast<float>(cols);  // biased, as ATen
  const float rstd = rsqrtf(var + eps);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float v = (to_float(row[j]) - mean) * rstd;
    if (weight != nullptr) v *= to_float(weight[j]);
    if (bias != nullptr) v += to_float(bias[j]);
    out[j] = from_float<T>(v);
  }
}

int threads_for_row(int64_t cols) { return cols <= 128 ? 32 : (cols <= 512 ? 128 : (cols <= 2048 ? 256 : 512)); }

// Grid x holds at most 2^31 - 1 blocks: one block per row.
constexpr int64_t kMaxRows = 2147483647;

}  // namespace

cudaError_t softmax(DT dt, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool log,
                    cudaStream_t stream) {
  if (outer * dim * inner <= 0) return cudaSuccess;
  if (inner == 1 && outer > kMaxRows) return cudaErrorInvalidValue;
  const cudaError_t e = dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1)
      softmax_rows_kernel<T><<<static_cast<unsigned int>(outer), threads_for_row(dim), 0, stream>>>(
          static_cast<const T*>(x), static_cast<T*>(y), dim, log);
    else
      softmax_inner_kernel<T><<<blocks_for(outer * inner), kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                                                   static_cast<T*>(y), outer, dim, inner, log);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

cudaError_t layer_norm(DT dt, const void* x, void* y, const void* weight, const void* bias, int64_t rows, int64_t cols,
                       double eps, cudaStream_t stream) {
  if (rows * cols <= 0) return cudaSuccess;
  if (rows > kMaxRows) return cudaErrorInvalidValue;
  const cudaError_t e = dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    layer_norm_kernel<T><<<static_cast<unsigned int>(rows), threads_for_row(cols), 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), static_cast<const T*>(weight), static_cast<const T*>(bias), cols,
        static_cast<float>(eps));
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace sycuda::launch
