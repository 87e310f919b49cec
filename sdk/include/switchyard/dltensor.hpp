// switchyard SDK: reading a DLTensor (sizes, strides, typed data) in C++17. plugin.hpp
// includes it; a plugin may include it alone.
#ifndef SWITCHYARD_DLTENSOR_HPP
#define SWITCHYARD_DLTENSOR_HPP

#include <switchyard/sdk.h>

#include <cstdint>
#include <vector>

namespace sy {

inline int64_t numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// Bytes of a compact tensor's elements.
inline int64_t byte_size(const DLTensor& t) { return numel(t) * ((t.dtype.bits * t.dtype.lanes + 7) / 8); }

inline bool is_contiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

template <typename T>
T* data(const DLTensor& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}

inline std::vector<int64_t> shape_of(const DLTensor& t) { return std::vector<int64_t>(t.shape, t.shape + t.ndim); }

// Element strides, filled in as compact row-major when the tensor has none.
inline std::vector<int64_t> strides_of(const DLTensor& t) {
  std::vector<int64_t> s(static_cast<size_t>(t.ndim));
  if (t.strides != nullptr) return std::vector<int64_t>(t.strides, t.strides + t.ndim);
  int64_t step = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    s[static_cast<size_t>(i)] = step;
    step *= t.shape[i];
  }
  return s;
}

}  // namespace sy

#endif  // SWITCHYARD_DLTENSOR_HPP
