// cuda plugin: element-wise device kernels (launch.hpp). One kernel per (dtype, arity);
// the op is a uniform runtime switch (elementwise_math.hpp), which keeps compile time and
// binary size small at no cost to these memory-bound loops.
#include "device_types.cuh"

#include <type_traits>

namespace sycuda::launch {

namespace {

__global__ void probe_kernel() {}

template <typename T>
__global__ void unary_kernel(UnaryOp op, const T* x, T* y, int64_t n) {
  SY_GRID_STRIDE(i, n) y[i] = from_float<T>(apply_unary(op, to_float(x[i])));
}

__global__ void logical_not_kernel(const uint8_t* x, uint8_t* y, int64_t n) {
  SY_GRID_STRIDE(i, n) y[i] = x[i] == 0 ? 1 : 0;
}

template <typename T>
__global__ void bias_activation_kernel(UnaryOp op, T* y, const T* bias, int64_t n, int64_t channels, int64_t inner) {
  SY_GRID_STRIDE(i, n) {
    float v = to_float(y[i]);
    if (bias != nullptr) v += to_float(bias[(i / inner) % channels]);
    y[i] = from_float<T>(apply_unary(op, v));
  }
}

template <typename T, typename Acc>
__device__ __forceinline__ Acc operand_at(const Operand& o, const Walk& w, int64_t i) {
  if (o.data == nullptr) return static_cast<Acc>(o.scalar);
  const int64_t offset = o.contiguous ? i : walk_offset(w, o.stride, i);
  return to_acc<Acc>(static_cast<const T*>(o.data)[offset]);
}

template <typename T, bool kCompare>
__global__ void binary_kernel(BinaryOp op, Operand a, Operand b, void* out, Walk w, int64_t n) {
  using Acc = typename AccOf<T>::type;
  SY_GRID_STRIDE(i, n) {
    const Acc x = operand_at<T, Acc>(a, w, i), y = operand_at<T, Acc>(b, w, i);
    if constexpr (kCompare) static_cast<uint8_t*>(out)[i] = compare<Acc>(op.kind, x, y) ? 1 : 0;
    else static_cast<T*>(out)[i] = from_acc<T, Acc>(apply_binary<Acc>(op, x, y));
  }
}

template <typename T>
__device__ __forceinline__ T value_at(const Operand& o, const Walk& w, int64_t i) {
  if (o.data == nullptr) return from_acc<T, typename AccOf<T>::type>(static_cast<typename AccOf<T>::type>(o.scalar));
  return static_cast<const T*>(o.data)[o.contiguous ? i : walk_offset(w, o.stride, i)];
}

template <typename T>
__global__ void where_kernel(Operand cond, Operand x, Operand y, T* out, Walk w, int64_t n) {
  SY_GRID_STRIDE(i, n) {
    const bool c = cond.data == nullptr ? cond.scalar != 0
                                        : static_cast<const uint8_t*>(cond.data)[cond.contiguous ? i : walk_offset(w, cond.stride, i)] != 0;
    out[i] = c ? value_at<T>(x, w, i) : value_at<T>(y, w, i);
  }
}

template <typename T>
__global__ void batch_norm_kernel(const T* x, T* y, const T* mean, const T* var, const T* weight, const T* bias, float eps,
                                  int64_t n, int64_t channels, int64_t inner) {
  SY_GRID_STRIDE(i, n) {
    const int64_t c = (i / inner) % channels;
    float v = (to_float(x[i]) - to_float(mean[c])) / sqrtf(to_float(var[c]) + eps);
    if (weight != nullptr) v *= to_float(weight[c]);
    if (bias != nullptr) v += to_float(bias[c]);
    y[i] = from_float<T>(v);
  }
}

template <typename T>
__global__ void fill_kernel(T* y, int64_t n, T value) {
  SY_GRID_STRIDE(i, n) y[i] = value;
}

cudaError_t status(cudaError_t dispatched) { return dispatched != cudaSuccess ? dispatched : cudaGetLastError(); }

}  // namespace

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, probe_kernel);
}

cudaError_t unary(DT dt, UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return status(dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    unary_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(op, static_cast<const T*>(x), static_cast<T*>(y), n);
  }));
}

cudaError_t logical_not(const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  logical_not_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n);
  return cudaGetLastError();
}

cudaError_t bias_activation(DT dt, UnaryOp act, void* y, const void* bias, int64_t n, int64_t channels, int64_t inner,
                            cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (channels < 1 || inner < 1) return cudaErrorInvalidValue;
  return status(dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    bias_activation_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(act, static_cast<T*>(y), static_cast<const T*>(bias),
                                                                      n, channels, inner);
  }));
}

cudaError_t binary(BinaryOp op, const Operand& a, const Operand& b, DT out_dtype, void* out, const Walk& shape, int64_t n,
                   cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  // The operands' dtype (a tensor operand's; both tensor operands share it).
  const DT dt = a.data != nullptr ? a.dtype : b.dtype;
  const bool cmp = is_comparison(op.kind);
  if (cmp != (out_dtype == DT::Bool)) return cudaErrorInvalidValue;
  auto launch_for = [&](auto tag) {
    using T = decltype(tag);
    if (cmp) binary_kernel<T, true><<<blocks_for(n), kThreads, 0, stream>>>(op, a, b, out, shape, n);
    else binary_kernel<T, false><<<blocks_for(n), kThreads, 0, stream>>>(op, a, b, out, shape, n);
  };
  switch (dt) {
    case DT::F32: launch_for(float{}); break;
    case DT::F16: launch_for(half{}); break;
    case DT::BF16: launch_for(bf16{}); break;
    case DT::I64: launch_for(int64_t{}); break;
    case DT::I32: launch_for(int32_t{}); break;
    case DT::Bool:
      if (!cmp) return cudaErrorInvalidValue;  // only eq/ne/... on bools
      launch_for(uint8_t{});
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t where(const Operand& cond, const Operand& x, const Operand& y, DT dt, void* out, const Walk& shape, int64_t n,
                  cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return status(dispatch_all(dt, [&](auto tag) {
    using T = decltype(tag);
    where_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(cond, x, y, static_cast<T*>(out), shape, n);
  }));
}

cudaError_t batch_norm(DT dt, const void* x, void* y, const void* mean, const void* var, const void* weight,
                       const void* bias, double eps, int64_t n, int64_t channels, int64_t inner, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (channels < 1 || inner < 1) return cudaErrorInvalidValue;
  return status(dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    batch_norm_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), static_cast<const T*>(mean), static_cast<const T*>(var),
        static_cast<const T*>(weight), static_cast<const T*>(bias), static_cast<float>(eps), n, channels, inner);
  }));
}

cudaError_t fill(DT dt, void* y, int64_t n, double value, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (value == 0) return cudaMemsetAsync(y, 0, static_cast<size_t>(n) * [&] {
    switch (dt) {
      case DT::F64: case DT::I64: return 8;
      case DT::F32: case DT::I32: return 4;
      case DT::F16: case DT::BF16: case DT::I16: return 2;
      default: return 1;
    }
  }(), stream);
  return status(dispatch_all(dt, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, half>) v = __double2half(value);
    else if constexpr (std::is_same_v<T, bf16>) v = __double2bfloat16(value);
    else v = static_cast<T>(value);
    fill_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(y), n, v);
  }));
}

}  // namespace sycuda::launch
