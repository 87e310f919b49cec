// cuda plugin, internal (device code only): element types, float conversions, launch
// geometry and dtype dispatch shared by the .cu files.
#pragma once

#include "launch.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace sycuda::launch {

using half = __half;
using bf16 = __nv_bfloat16;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(double x) { return static_cast<float>(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x) {
  return static_cast<T>(x);
}
template <>
__device__ __forceinline__ half from_float<half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ bf16 from_float<bf16>(float x) {
  return __float2bfloat16_rn(x);
}

// The type arithmetic runs in: float for the float dtypes, int64 for the integer ones.
template <typename T> struct AccOf { using type = float; };
template <> struct AccOf<double> { using type = double; };
template <> struct AccOf<int64_t> { using type = int64_t; };
template <> struct AccOf<int32_t> { using type = int64_t; };
template <> struct AccOf<int16_t> { using type = int64_t; };
template <> struct AccOf<int8_t> { using type = int64_t; };
template <> struct AccOf<uint8_t> { using type = int64_t; };

template <typename Acc, typename T>
__device__ __forceinline__ Acc to_acc(T x) {
  if constexpr (std::is_same_v<Acc, float>) return to_float(x);
  else return static_cast<Acc>(x);
}
template <typename T, typename Acc>
__device__ __forceinline__ T from_acc(Acc x) {
  if constexpr (std::is_same_v<Acc, float>) return from_float<T>(x);
  else return static_cast<T>(x);
}

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items (enough to fill any current GPU).
inline unsigned int blocks_for(int64_t n, int threads = kThreads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned int>(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

#define SY_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Offset of output element i in an operand walked with `stride` over `w` (dims outermost first).
__device__ __forceinline__ int64_t walk_offset(const Walk& w, const int64_t* stride, int64_t i) {
  int64_t offset = 0;
  for (int d = w.ndim - 1; d >= 0; --d) {
    const int64_t size = w.size[d];
    offset += (i % size) * stride[d];
    i /= size;
  }
  return offset;
}

// Calls f(T{}) with T the C++ type of a float dtype; returns cudaErrorInvalidValue for others.
template <typename F>
cudaError_t dispatch_float(DT dt, F&& f) {
  switch (dt) {
    case DT::F32: f(float{}); return cudaSuccess;
    case DT::F16: f(half{}); return cudaSuccess;
    case DT::BF16: f(bf16{}); return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

// The same over every dtype.
template <typename F>
cudaError_t dispatch_all(DT dt, F&& f) {
  switch (dt) {
    case DT::F32: f(float{}); return cudaSuccess;
    case DT::F16: f(half{}); return cudaSuccess;
    case DT::BF16: f(bf16{}); return cudaSuccess;
    case DT::F64: f(double{}); return cudaSuccess;
    case DT::I64: f(int64_t{}); return cudaSuccess;
    case DT::I32: f(int32_t{}); return cudaSuccess;
    case DT::I16: f(int16_t{}); return cudaSuccess;
    case DT::I8: f(int8_t{}); return cudaSuccess;
    case DT::U8:
    case DT::Bool: f(uint8_t{}); return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

}  // namespace sycuda::launch
