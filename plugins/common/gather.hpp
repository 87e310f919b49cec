// A strided tensor's elements copied into compact row-major memory: what a kernel does
// with an input whose layout its library cannot take (a rare view). Plugin-side code: SDK
// headers only.
#pragma once

#include <switchyard/plugin.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

namespace sy_common {

// out[i] = the i-th element of the strided array (`in`, `shape`, `strides` in elements) in
// row-major order; out holds every element. Row by row along the last dimension: a
// contiguous last dimension (e.g. the [T, B, E] view of a batch-first input) is one memcpy
// per row.
template <typename T>
void gather_compact(const T* in, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, T* out) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (n == 0) return;
  if (shape.empty()) {
    out[0] = in[0];
    return;
  }
  const size_t last = shape.size() - 1;
  const int64_t cols = shape[last], col_stride = strides[last], rows = n / cols;
  std::vector<int64_t> index(last, 0);
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = in + offset;
    T* dst = out + r * cols;
    if (col_stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(T));
    } else {
      for (int64_t c = 0; c < cols; ++c) dst[c] = src[c * col_stride];
    }
    for (size_t d = last; d-- > 0;) {  // the next row's index, the dim before the last fastest
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// The same for a DLTensor's elements.
template <typename T>
void gather_compact(const DLTensor& x, T* out) {
  gather_compact(sy::data<T>(x), sy::shape_of(x), sy::strides_of(x), out);
}

}  // namespace sy_common
