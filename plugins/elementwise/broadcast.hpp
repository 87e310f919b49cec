// elementwise plugin: an output and its inputs walked together, numpy-style broadcast.
#pragma once

#include <dlpack/dlpack.h>
#include <switchyard/parallel.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sy_elementwise {

using Shape = std::vector<int64_t>;

// A contiguous output of `shape` and up to two inputs, each walked by its own element
// strides (0 along broadcast dims). Adjacent dims that every operand steps through evenly
// are merged, so the common cases become one long row, or rows of the last dim.
struct Walk {
  Shape shape;                 // coalesced output shape; never empty (a 0-dim is [1])
  std::vector<Shape> strides;  // per input, per coalesced dim
  int64_t rows() const;        // product of all but the last dim
  int64_t row_length() const { return shape.back(); }
  // Element offset of each input at the start of row r.
  void row_offsets(int64_t r, int64_t* offsets) const;
};

// The inputs' offsets row after row from a starting row, the row index stepped like an
// odometer: no division per row (a [32, 64, 32] strided div spent most of its time in
// row_offsets' divisions).
class RowCursor {
 public:
  RowCursor(const Walk& w, int64_t row);
  const int64_t* offsets() const { return offsets_.data(); }
  void next();

 private:
  const Walk& walk_;
  Shape index_;                   // per dim but the last
  std::vector<int64_t> offsets_;  // per input
};

Walk make_walk(const Shape& out, const std::vector<Shape>& input_strides);

inline bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

// Below this many elements a loop stays on the calling thread. A transformer's adds sit
// between oneDNN primitives, whose OpenMP threads still spin on both cores afterwards: at
// 32768, waking the host pool's worker there made gpt_decomposed at batch 8 take 14-18 ms
// in about 1% of runs (its median is 1.6 ms); at this size its slowest run was 4-5 ms.
inline constexpr int64_t kGrainElements = 262144;

// y[j] = f(a[j * sa], b[j * sb]) for j < n, with the unit-stride cases vectorised.
template <typename F>
inline void row(float* __restrict y, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], b[j]);
  } else if (sa == 1 && sb == 0) {
    const float bv = b[0];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], bv);
  } else if (sa == 0 && sb == 1) {
    const float av = a[0];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = f(av, b[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j * sa], b[j * sb]);
  }
}

template <typename F>
void apply(const Walk& w, float* y, const float* a, const float* b, F f) {
  const int64_t rows = w.rows(), len = w.row_length();
  const int64_t sa = w.strides[0].back(), sb = w.strides[1].back();
  if (rows == 1) {  // one long row: split it
    sy::parallel_for(int64_t{0}, len, kGrainElements, [&](int64_t begin, int64_t end, int) {
      row(y + begin, a + begin * sa, sa, b + begin * sb, sb, end - begin, f);
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, len));
  sy::parallel_for(int64_t{0}, rows, grain, [&](int64_t begin, int64_t end, int) {
    RowCursor cursor(w, begin);
    for (int64_t r = begin; r < end; ++r, cursor.next()) {
      const int64_t* off = cursor.offsets();
      row(y + r * len, a + off[0], sa, b + off[1], sb, len, f);
    }
  });
}

}  // namespace sy_elementwise
