// attention plugin: the dense pieces around the attention kernel in the fused transformer
// ops (projections, activations; layer norm is in onednn_rows.hpp), on row-major float32
// rows.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

namespace sy_attention {

// rows x cols floats, row pitch ld, unit column stride.
struct Rows {
  const float* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
};

// A float32 tensor as rows of its last dim: the tensor itself when compact, else a
// compact copy kept in `storage`.
Rows as_rows(const DLTensor& t, std::vector<float>& storage);

// y[r, :] = x[r, :] w^T + b, for w [n, x.cols] (row pitch ldw) and b [n] (or NULL);
// y's rows have pitch ldy. The product is one oneDNN sgemm.
void linear(const Rows& x, const float* w, int64_t ldw, int64_t n, const float* b, float* y, int64_t ldy);

void gelu(float* x, int64_t n);                 // exact: x * Phi(x), as at::gelu(approximate="none")
void relu(float* x, int64_t n);                 // NaN stays NaN, as at::relu
void add(float* y, const float* x, int64_t n);  // y += x

}  // namespace sy_attention
