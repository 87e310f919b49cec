// The conv family's case makers (cases_conv.cpp, cases_pool_norm.cpp): a convolution's
// spec, its inputs in three memory layouts, and non-finite values written into a tensor.
#pragma once

#include "case_makers.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance::conv_cases {

using Shape = std::vector<int64_t>;

// One convolution case, independent of the op that spells it.
struct ConvSpec {
  std::string label;
  Shape x, w;
  Shape stride, padding, dilation;  // spatial-length lists
  int64_t groups = 1;
  bool bias = true, const_weights = true;
  std::string pad_string;  // "same" / "valid" (conv1d / conv2d only)
  enum Layout { kPlain, kTransposed, kStridedBatch } layout = kPlain;
};

class Maker {
 public:
  explicit Maker(uint32_t seed) : rng_(seed) {}
  Tensor t(Shape shape, double lo = -1.0, double hi = 1.0) {
    return random_tensor(rng_, kF32, std::move(shape), lo, hi);
  }
  Tensor input(const Shape& shape, ConvSpec::Layout layout, double lo = -1.0, double hi = 1.0) {
    if (layout == ConvSpec::kTransposed) return transposed_layout(t(shape, lo, hi));
    if (layout == ConvSpec::kStridedBatch) return strided_rows(rng_, kF32, shape);
    return t(shape, lo, hi);
  }

 private:
  static constexpr DLDataType kF32{kDLFloat, 32, 1};
  Rng rng_;
};

inline Shape fill(size_t n, int64_t v) { return Shape(n, v); }

// Writes NaN, +inf and -inf over a few elements of a contiguous float32 tensor.
inline void with_non_finite(Tensor& t) {
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 3; i < n; i += 97) p[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 11; i < n; i += 131) p[i] = std::numeric_limits<float>::infinity();
  for (int64_t i = 29; i < n; i += 173) p[i] = -std::numeric_limits<float>::infinity();
}

// A 2-D pooling's attributes; `with` adds one more.
inline Attributes pool(Shape kernel, Shape stride, Shape padding) {
  return {{"kernel_size", ints(std::move(kernel))},
          {"stride", ints(std::move(stride))},
          {"padding", ints(std::move(padding))}};
}
inline Attributes with(Attributes a, const char* name, Attribute v) {
  a.push_back({name, std::move(v)});
  return a;
}

}  // namespace switchyard::conformance::conv_cases
