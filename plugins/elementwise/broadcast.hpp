// elementwise plugin: an output and its inputs walked together, numpy-style broadcast.
#pragma once

#include <dlpack/dlpack.h>

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

}  // namespace sy_elementwise
