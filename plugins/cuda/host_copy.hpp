// cuda plugin, internal: host-side element walks over strided DLPack tensors, for staging
// host tensors to and from the device (pure host code; the unit tests run it).
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sycuda {

inline int64_t element_count(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

inline size_t element_size(DLDataType dt) { return (static_cast<size_t>(dt.bits) * dt.lanes + 7) / 8; }

// True when the tensor's elements are packed in row-major order (size-1 dims don't count).
inline bool is_compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

namespace detail {
// Calls f(element offset of t, k) for the row-major elements k in [begin, begin + count).
template <typename F>
void walk(const DLTensor& t, int64_t begin, int64_t count, F&& f) {
  if (count <= 0) return;
  const int nd = t.ndim;
  int64_t index[32] = {};
  int64_t rest = begin, offset = 0;
  for (int d = nd - 1; d >= 0; --d) {
    index[d] = rest % t.shape[d];
    rest /= t.shape[d];
  }
  auto stride = [&](int d) {
    if (t.strides != nullptr) return t.strides[d];
    int64_t s = 1;
    for (int e = d + 1; e < nd; ++e) s *= t.shape[e];
    return s;
  };
  int64_t strides[32] = {};
  for (int d = 0; d < nd; ++d) strides[d] = stride(d), offset += index[d] * strides[d];
  for (int64_t k = 0; k < count; ++k) {
    f(offset, k);
    for (int d = nd - 1; d >= 0; --d) {  // odometer step
      offset += strides[d];
      if (++index[d] < t.shape[d]) break;
      offset -= strides[d] * t.shape[d];
      index[d] = 0;
    }
  }
}
}  // namespace detail

// Copies row-major elements [begin, begin + count) of t into the packed buffer `out`.
inline void gather_elements(const DLTensor& t, int64_t begin, int64_t count, void* out) {
  const size_t es = element_size(t.dtype);
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  char* dst = static_cast<char*>(out);
  if (is_compact(t)) {
    std::memcpy(dst, base + begin * static_cast<int64_t>(es), static_cast<size_t>(count) * es);
    return;
  }
  detail::walk(t, begin, count, [&](int64_t off, int64_t k) { std::memcpy(dst + k * es, base + off * es, es); });
}

// Copies the packed buffer `in` into row-major elements [begin, begin + count) of t.
inline void scatter_elements(const void* in, int64_t begin, int64_t count, const DLTensor& t) {
  const size_t es = element_size(t.dtype);
  char* base = static_cast<char*>(t.data) + t.byte_offset;
  const char* src = static_cast<const char*>(in);
  if (is_compact(t)) {
    std::memcpy(base + begin * static_cast<int64_t>(es), src, static_cast<size_t>(count) * es);
    return;
  }
  detail::walk(t, begin, count, [&](int64_t off, int64_t k) { std::memcpy(base + off * es, src + k * es, es); });
}

}  // namespace sycuda
