// elementwise plugin: broadcasting and dimension coalescing (see broadcast.hpp).
#include "broadcast.hpp"

#include <switchyard/plugin.hpp>

#include <algorithm>

namespace sy_elementwise {

Walk make_walk(const Shape& out, const std::vector<Shape>& input_strides) {
  Walk w;
  const size_t ni = input_strides.size();
  w.strides.assign(ni, Shape{});
  // Walk from the last dim leftwards; size-1 dims are dropped, and a dim joins the one to
  // its right when every input's stride there equals its stride to the right times that
  // dim's size (the output is contiguous, so it always does).
  for (size_t d = out.size(); d-- > 0;) {
    if (out[d] == 1) continue;
    bool merges = !w.shape.empty();
    for (size_t i = 0; i < ni && merges; ++i) merges = input_strides[i][d] == w.strides[i].front() * w.shape.front();
    if (merges) {
      w.shape.front() *= out[d];
      continue;
    }
    w.shape.insert(w.shape.begin(), out[d]);
    for (size_t i = 0; i < ni; ++i) w.strides[i].insert(w.strides[i].begin(), input_strides[i][d]);
  }
  if (w.shape.empty()) {  // every dim has size 1 (or none): one element
    w.shape = {1};
    for (auto& s : w.strides) s = {0};
  }
  return w;
}

int64_t Walk::rows() const {
  int64_t r = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) r *= shape[d];
  return r;
}

void Walk::row_offsets(int64_t r, int64_t* offsets) const {
  for (size_t i = 0; i < strides.size(); ++i) offsets[i] = 0;
  for (size_t d = shape.size() - 1; d-- > 0;) {  // the row index in mixed radix, last dim excluded
    const int64_t idx = r % shape[d];
    r /= shape[d];
    for (size_t i = 0; i < strides.size(); ++i) offsets[i] += idx * strides[i][d];
  }
}

RowCursor::RowCursor(const Walk& w, int64_t row)
    : walk_(w), index_(w.shape.size() - 1, 0), offsets_(w.strides.size(), 0) {
  w.row_offsets(row, offsets_.data());
  for (size_t d = index_.size(); d-- > 0;) {
    index_[d] = row % w.shape[d];
    row /= w.shape[d];
  }
}

void RowCursor::next() {
  for (size_t d = index_.size(); d-- > 0;) {
    for (size_t i = 0; i < offsets_.size(); ++i) offsets_[i] += walk_.strides[i][d];
    if (++index_[d] < walk_.shape[d]) return;
    for (size_t i = 0; i < offsets_.size(); ++i) offsets_[i] -= walk_.strides[i][d] * walk_.shape[d];
    index_[d] = 0;
  }
}

}  // namespace sy_elementwise
