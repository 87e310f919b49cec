// cuda plugin: shapes, broadcasting and strided walks (broadcast.hpp).
#include "broadcast.hpp"
#include <switchyard/shapes.hpp>

#include <algorithm>

namespace sycuda {

std::string str(const Shape& s) { return sy::shape_string(s); }

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    throw sy::Error(std::string(what) + ": dimension out of range (expected to be in range of [" + std::to_string(-n) +
                    ", " + std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what) {
  return sy::broadcast_shapes(a, b, what);
}

Shape broadcast_strides(const Shape& shape, const Shape& out) {
  Shape compact(shape.size(), 1);  // device values are compact row-major
  for (size_t i = shape.size(); i-- > 1;) compact[i - 1] = compact[i] * shape[i];
  return sy::broadcast_strides(shape, compact, out);
}

launch::Walk make_walk(const Shape& out, std::vector<Shape*> operands) {
  // Keep dims of size > 1; merge dim d into d + 1 when every operand (and the compact
  // output) steps through d exactly as one more run of d + 1.
  Shape size;
  std::vector<Shape> strides(operands.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !size.empty();
    for (size_t k = 0; merge && k < operands.size(); ++k) merge = strides[k].back() == (*operands[k])[d] * out[d];
    if (merge) {
      size.back() *= out[d];
      for (size_t k = 0; k < operands.size(); ++k) strides[k].back() = (*operands[k])[d];
      continue;
    }
    size.push_back(out[d]);
    for (size_t k = 0; k < operands.size(); ++k) strides[k].push_back((*operands[k])[d]);
  }
  if (size.size() > static_cast<size_t>(launch::kMaxDims))
    throw sy::Unsupported("broadcast over " + std::to_string(size.size()) +
                          " independent dims (the cuda plugin walks at most " + std::to_string(launch::kMaxDims) + ")");
  launch::Walk w;
  w.ndim = static_cast<int32_t>(size.size());
  for (size_t d = 0; d < size.size(); ++d) w.size[d] = size[d];
  int64_t step = 1;
  for (size_t d = size.size(); d-- > 0;) w.stride[d] = step, step *= size[d];
  for (size_t k = 0; k < operands.size(); ++k) *operands[k] = strides[k];
  return w;
}

}  // namespace sycuda
