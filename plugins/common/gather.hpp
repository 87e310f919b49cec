// A strided tensor's elements copied into compact row-major memory: what a kernel does
// with an input whose layout its library cannot take (a rare view). Plugin-side code: SDK
// headers only.
#pragma once

#include <switchyard/plugin.hpp>

#include <cstdint>
#include <vector>

namespace sy_common {

// out[i] = the i-th element of `x` in row-major order; out holds numel(x) elements.
template <typename T>
void gather_compact(const DLTensor& x, T* out) {
  const std::vector<int64_t> shape = sy::shape_of(x), strides = sy::strides_of(x);
  const T* in = sy::data<T>(x);
  const int64_t n = sy::numel(x);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    out[k] = in[offset];
    for (size_t d = shape.size(); d-- > 0;) {  // the next index, last dim fastest
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace sy_common
