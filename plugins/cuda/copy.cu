// cuda plugin: strided copies and row gathers (launch.hpp). Elements move as opaque
// integers of their size, so every dtype copies bit for bit.
#include "device_types.cuh"

namespace sycuda::launch {

namespace {

template <int kBytes> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

template <typename E>
__global__ void strided_copy_kernel(const E* src, Walk s, E* dst, Walk d, int64_t n) {
  SY_GRID_STRIDE(i, n) {
    int64_t so = 0, doff = 0, rest = i;
    for (int k = s.ndim - 1; k >= 0; --k) {
      const int64_t idx = rest % s.size[k];
      rest /= s.size[k];
      so += idx * s.stride[k];
      doff += idx * d.stride[k];
    }
    dst[doff] = src[so];
  }
}

template <typename E, typename I>
__global__ void gather_kernel(const E* table, int64_t rows, int64_t inner, const I* index, int64_t count, E* out,
                              int64_t n, int* error_word, int error_code) {
  SY_GRID_STRIDE(i, n) {
    const int64_t r = i % inner, rest = i / inner;
    const int64_t k = rest % count, o = rest / count;
    int64_t row = static_cast<int64_t>(index[k]);
    if (row < 0) row += rows;
    if (row < 0 || row >= rows) {
      out[i] = E{};
      // A plain store: every writer of this kernel writes the same code (mapped host memory).
      if (error_word != nullptr) *reinterpret_cast<volatile int*>(error_word) = error_code;
      continue;
    }
    out[i] = table[(o * rows + row) * inner + r];
  }
}

int64_t count_of(const Walk& w) {
  int64_t n = 1;
  for (int k = 0; k < w.ndim; ++k) n *= w.size[k];
  return n;
}

// True when the walk visits memory as one contiguous run.
bool contiguous(const Walk& w) {
  int64_t step = 1;
  for (int k = w.ndim - 1; k >= 0; --k) {
    if (w.size[k] == 1) continue;
    if (w.stride[k] != step) return false;
    step *= w.size[k];
  }
  return true;
}

}  // namespace

cudaError_t strided_copy(int elem_size, const void* src, const Walk& src_walk, void* dst, const Walk& dst_walk,
                         cudaStream_t stream) {
  if (src_walk.ndim != dst_walk.ndim) return cudaErrorInvalidValue;
  for (int k = 0; k < src_walk.ndim; ++k)
    if (src_walk.size[k] != dst_walk.size[k]) return cudaErrorInvalidValue;
  const int64_t n = count_of(src_walk);
  if (n <= 0) return cudaSuccess;
  if (contiguous(src_walk) && contiguous(dst_walk))
    return cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * elem_size, cudaMemcpyDeviceToDevice, stream);
  auto go = [&](auto tag) {
    using E = decltype(tag);
    strided_copy_kernel<E><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const E*>(src), src_walk,
                                                                   static_cast<E*>(dst), dst_walk, n);
  };
  switch (elem_size) {
    case 1: go(Bits<1>::type{}); break;
    case 2: go(Bits<2>::type{}); break;
    case 4: go(Bits<4>::type{}); break;
    case 8: go(Bits<8>::type{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t gather(int elem_size, const void* table, int64_t outer, int64_t rows, int64_t inner, const void* index,
                   DT index_dtype, int64_t count, void* out, int* error_word, int error_code, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n <= 0) return cudaSuccess;
  if (index_dtype != DT::I64 && index_dtype != DT::I32) return cudaErrorInvalidValue;
  auto go = [&](auto tag) {
    using E = decltype(tag);
    if (index_dtype == DT::I64)
      gather_kernel<E, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(
          static_cast<const E*>(table), rows, inner, static_cast<const int64_t*>(index), count, static_cast<E*>(out), n,
          error_word, error_code);
    else
      gather_kernel<E, int32_t><<<blocks_for(n), kThreads, 0, stream>>>(
          static_cast<const E*>(table), rows, inner, static_cast<const int32_t*>(index), count, static_cast<E*>(out), n,
          error_word, error_code);
  };
  switch (elem_size) {
    case 1: go(Bits<1>::type{}); break;
    case 2: go(Bits<2>::type{}); break;
    case 4: go(Bits<4>::type{}); break;
    case 8: go(Bits<8>::type{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace sycuda::launch
