// attention plugin: row-wise softmax and layer norm on oneDNN (onednn_rows.cpp).
#pragma once

#include <cstdint>

namespace sy_attention {

// In place over `rows` compact rows of `cols`: each row's softmax. A row with a NaN or
// +inf, or all -inf, becomes NaN, as in ATen.
void softmax_rows(float* y, int64_t rows, int64_t cols);

// In place over `rows` compact rows of d: (x - mean) / sqrt(var + eps) * gamma + beta;
// gamma and beta (optional) hold d floats each.
void layer_norm(float* x, int64_t rows, int64_t d, const float* gamma, const float* beta, double eps);

}  // namespace sy_attention
