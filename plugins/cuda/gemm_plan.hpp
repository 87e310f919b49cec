// cuda plugin, internal: every GEMM op lowered to one description (pure host code; the
// unit tests execute plans on the CPU against a naive matrix product).
//
//   out[batch..., m, n] = act(alpha * A[batch..., m, k] @ B[batch..., k, n] + beta * bias + vbias[n])
//
// Operands are compact (the cuda storage's rule): A is [.., m, k] row-major; B is [.., k, n],
// or [n, k] when `b_transposed` (linear's weight, read through cuBLAS's transpose flag,
// never copied). Batch dims broadcast with stride 0. They are folded into m where A's rows
// run on evenly (an N-D input times a matrix is one GEMM), else split into one strided
// batch (cuBLASLt's batch count and offsets) and outer dims looped over.
#pragma once

#include <switchyard/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sycuda {

using Shape = std::vector<int64_t>;

struct GemmPlan {
  int64_t m = 0, n = 0, k = 0;
  bool b_transposed = false;
  // One strided batch of `batch` products, element offsets between them.
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  // Outer batch dims, looped: sizes and each operand's element strides.
  Shape outer, outer_a, outer_b, outer_c;
  Shape out_shape;
  double alpha = 1, beta = 0;
  // A bias vector of n values added by cuBLASLt's epilogue (linear's bias, addmm's [n] self).
  bool vector_bias = false;
  // A bias broadcast to the output and scaled by beta (written into the output first):
  // its shape, and its element strides over out_shape (0 where broadcast).
  bool broadcast_bias = false;
  Shape bias_shape, bias_strides;

  int64_t outer_count() const;
  double flops() const { return 2.0 * static_cast<double>(m) * n * k * batch * outer_count(); }
};

// Where an op's operands are: shapes only (the plan never touches data).
struct GemmShapes {
  Shape a, b;  // the two matrix operands as the op names them (self/mat2, input/weight, ...)
  const Shape* bias = nullptr;
};

// Each throws sy::Error with ATen's reason when the shapes don't fit (the kernels turn it
// into a rejection at selection time).
GemmPlan plan_linear(const Shape& input, const Shape& weight, const Shape* bias);
GemmPlan plan_matmul(const Shape& a, const Shape& b);
GemmPlan plan_mm(const Shape& a, const Shape& b);
GemmPlan plan_bmm(const Shape& a, const Shape& b);
// addmm / baddbmm: beta * self + alpha * (a @ b); beta == 0 ignores self (as ATen).
GemmPlan plan_addmm(const Shape& self, const Shape& a, const Shape& b, double beta, double alpha);
GemmPlan plan_baddbmm(const Shape& self, const Shape& a, const Shape& b, double beta, double alpha);

// One cuBLAS(Lt) call in its own column-major terms: D = alpha * op(A) @ op(B) + beta * C with
// op(A) m x k, op(B) k x n. Row-major out = A @ B is column-major out^T = B^T @ A^T, so
// cuBLAS's A is the plan's B and cuBLAS's B the plan's A.
struct ColumnMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t rows_a = 0, cols_a = 0, ld_a = 0;  // the stored matrices, before op()
  int64_t rows_b = 0, cols_b = 0, ld_b = 0;
  int64_t rows_c = 0, cols_c = 0, ld_c = 0;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};
ColumnMajorGemm column_major(const GemmPlan& p);

// Executes a plan on the host the way the device does (through column_major(), with
// cuBLAS's semantics), in double; for the unit tests. A, B and bias compact; `out` holds
// the broadcast bias already when plan.broadcast_bias (as the device path writes it first).
void run_plan_on_host(const GemmPlan& p, const float* a, const float* b, const float* vbias, float* out);

}  // namespace sycuda
