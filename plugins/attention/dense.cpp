// attention plugin: projections and activations (see dense.hpp).
#include "dense.hpp"

#include <switchyard/parallel.hpp>

#include "common/gather.hpp"
#include "common/sgemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sy_attention {
namespace {

constexpr int64_t kChunk = 16384;  // elements per task of the element-wise loops

template <typename F>
void for_chunks(int64_t n, F f) {
  const int64_t tasks = (n + kChunk - 1) / kChunk;
  sy::parallel_for(tasks, sy::intra_op_threads(), [&](int64_t t, int) {
    const int64_t begin = t * kChunk;
    f(begin, std::min(n, begin + kChunk));
  });
}

}  // namespace

Rows as_rows(const DLTensor& t, std::vector<float>& storage) {
  Rows r;
  r.cols = t.ndim == 0 ? 1 : t.shape[t.ndim - 1];
  r.rows = 1;
  for (int d = 0; d + 1 < t.ndim; ++d) r.rows *= t.shape[d];
  r.ld = std::max<int64_t>(r.cols, 1);
  const float* base = reinterpret_cast<const float*>(static_cast<const char*>(t.data) + t.byte_offset);
  bool compact = true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0 && t.strides != nullptr; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) compact = false;
    expected *= t.shape[d];
  }
  if (compact) {
    r.data = base;
    return r;
  }
  // A compact copy, row by row (a [T, B, E] view of a batch-first input: one memcpy each).
  storage.resize(static_cast<size_t>(r.rows * r.cols));
  sy_common::gather_compact(t, storage.data());
  r.data = storage.data();
  return r;
}

void linear(const Rows& x, const float* w, int64_t ldw, int64_t n, const float* b, float* y, int64_t ldy) {
  if (x.rows == 0 || n == 0) return;
  for (int64_t r = 0; r < x.rows; ++r) {
    if (b != nullptr)
      std::copy(b, b + n, y + r * ldy);
    else
      std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
  }
  if (x.cols == 0) return;
  sy_gemm::sgemm(false, true, x.rows, n, x.cols, 1.0f, x.data, x.ld, w, ldw, 1.0f, y, ldy);
}

void gelu(float* x, int64_t n) {
  for_chunks(n, [x](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
  });
}

void relu(float* x, int64_t n) {
  for_chunks(n, [x](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] = x[i] < 0.0f ? 0.0f : x[i];
  });
}

void add(float* y, const float* x, int64_t n) {
  for_chunks(n, [y, x](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] += x[i];
  });
}

}  // namespace sy_attention
