// cuda plugin: GEMM ops lowered to GemmPlan, and the plan in cuBLAS's terms (gemm_plan.hpp).
#include "gemm_plan.hpp"
#include <switchyard/shapes.hpp>

#include <algorithm>

namespace sycuda {

namespace {

std::string str(const Shape& s) { return sy::shape_string(s); }

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

// Strides of a compact tensor of `shape` laid over `out` (right-aligned), 0 where broadcast.
Shape strides_over(const Shape& shape, const Shape& out, int64_t inner) {
  Shape st(out.size(), 0);
  int64_t step = inner;
  for (size_t i = 1; i <= shape.size(); ++i) {
    if (shape[shape.size() - i] != 1) st[out.size() - i] = step;
    step *= shape[shape.size() - i];
  }
  return st;
}

// Splits broadcast batch dims into one strided batch (the innermost mergeable run) and
// outer loops. sa/sb/sc: each operand's element strides along `batch`.
void set_batch(GemmPlan& p, const Shape& batch, const Shape& sa, const Shape& sb, const Shape& sc) {
  Shape size, a, b, c;
  for (size_t d = 0; d < batch.size(); ++d) {
    if (batch[d] == 1) continue;
    if (!size.empty() && a.back() == sa[d] * batch[d] && b.back() == sb[d] * batch[d] && c.back() == sc[d] * batch[d]) {
      size.back() *= batch[d];
      a.back() = sa[d], b.back() = sb[d], c.back() = sc[d];
      continue;
    }
    size.push_back(batch[d]), a.push_back(sa[d]), b.push_back(sb[d]), c.push_back(sc[d]);
  }
  if (size.empty()) return;
  p.batch = size.back(), p.stride_a = a.back(), p.stride_b = b.back(), p.stride_c = c.back();
  size.pop_back(), a.pop_back(), b.pop_back(), c.pop_back();
  p.outer = size, p.outer_a = a, p.outer_b = b, p.outer_c = c;
}

// The bias `self` broadcast to the output, scaled by beta (ignored when beta is 0).
void set_broadcast_bias(GemmPlan& p, const Shape& bias, double beta) {
  p.beta = beta;
  if (beta == 0) return;
  if (sy::broadcast_shapes(bias, p.out_shape, "bias and result") != p.out_shape)
    throw sy::Error("bias " + str(bias) + " does not broadcast to the result " + str(p.out_shape));
  p.broadcast_bias = true;
  p.bias_shape = bias;
  p.bias_strides = strides_over(bias, p.out_shape, 1);
}

void check_matrix(const Shape& s, const char* what) {
  if (s.size() != 2) throw sy::Error(std::string(what) + " must be a matrix, got " + std::to_string(s.size()) + "-D");
}

}  // namespace

int64_t GemmPlan::outer_count() const {
  int64_t n = 1;
  for (int64_t s : outer) n *= s;
  return n;
}

GemmPlan plan_linear(const Shape& input, const Shape& weight, const Shape* bias) {
  if (weight.size() != 2)
    throw sy::Error("weight is " + std::to_string(weight.size()) + "-D; only a 2-D weight is handled");
  if (input.empty()) throw sy::Error("input is 0-D; linear needs at least 1-D");
  if (input.back() != weight[1])
    throw sy::Error("input " + str(input) + " and weight " + str(weight) + " cannot be multiplied (" +
                    std::to_string(input.back()) + " != " + std::to_string(weight[1]) + ")");
  GemmPlan p;
  p.k = weight[1];
  p.n = weight[0];
  p.m = product(input, 0, input.size() - 1);  // every leading dim folds into rows
  p.b_transposed = true;
  p.out_shape = Shape(input.begin(), input.end() - 1);
  p.out_shape.push_back(p.n);
  if (bias != nullptr) {
    if (bias->size() > 1)
      throw sy::Error("bias is " + std::to_string(bias->size()) + "-D; only a 0-D or 1-D bias is handled");
    if (bias->size() == 1 && (*bias)[0] == p.n)
      p.vector_bias = true;
    else
      set_broadcast_bias(p, *bias, 1.0);
  }
  return p;
}

GemmPlan plan_matmul(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    throw sy::Error("both arguments to matmul need to be at least 1-D, got " + std::to_string(a.size()) + "-D and " +
                    std::to_string(b.size()) + "-D");
  GemmPlan p;
  const size_t na = a.size(), nb = b.size();
  const int64_t ka = a.back();
  p.m = na == 1 ? 1 : a[na - 2];
  p.k = nb == 1 ? b[0] : b[nb - 2];
  p.n = nb == 1 ? 1 : b[nb - 1];
  if (ka != p.k)
    throw sy::Error("shapes " + str(a) + " and " + str(b) + " cannot be multiplied (" + std::to_string(ka) +
                    " != " + std::to_string(p.k) + ")");
  const Shape abatch = na > 2 ? Shape(a.begin(), a.end() - 2) : Shape{};
  const Shape bbatch = nb > 2 ? Shape(b.begin(), b.end() - 2) : Shape{};
  const Shape batch = sy::broadcast_shapes(abatch, bbatch, "batch dimensions");
  p.out_shape = batch;
  if (na > 1) p.out_shape.push_back(p.m);
  if (nb > 1) p.out_shape.push_back(p.n);
  Shape sa = strides_over(abatch, batch, p.m * p.k), sb = strides_over(bbatch, batch, p.k * p.n);
  const Shape sc = strides_over(batch, batch, p.m * p.n);
  // B the same matrix for every batch entry and A holding every batch entry (compact, none
  // repeated): one GEMM of batch * m rows.
  const bool b_shared = std::all_of(sb.begin(), sb.end(), [](int64_t s) { return s == 0; });
  if (b_shared && sa == strides_over(batch, batch, p.m * p.k) && na > 1) {
    p.m *= product(batch, 0, batch.size());
    return p;
  }
  set_batch(p, batch, sa, sb, sc);
  return p;
}

GemmPlan plan_mm(const Shape& a, const Shape& b) {
  check_matrix(a, "self");
  check_matrix(b, "mat2");
  if (a[1] != b[0])
    throw sy::Error("self and mat2 shapes cannot be multiplied (" + std::to_string(a[0]) + "x" + std::to_string(a[1]) +
                    " and " + std::to_string(b[0]) + "x" + std::to_string(b[1]) + ")");
  return plan_matmul(a, b);
}

GemmPlan plan_bmm(const Shape& a, const Shape& b) {
  if (a.size() != 3) throw sy::Error("self must be a 3-D tensor, got " + std::to_string(a.size()) + "-D");
  if (b.size() != 3) throw sy::Error("mat2 must be a 3-D tensor, got " + std::to_string(b.size()) + "-D");
  if (a[0] != b[0])
    throw sy::Error("self and mat2 must have the same batch size, got " + std::to_string(a[0]) + " and " +
                    std::to_string(b[0]));
  if (a[2] != b[1])
    throw sy::Error("self " + str(a) + " and mat2 " + str(b) + " cannot be multiplied (" + std::to_string(a[2]) +
                    " != " + std::to_string(b[1]) + ")");
  return plan_matmul(a, b);
}

GemmPlan plan_addmm(const Shape& self, const Shape& a, const Shape& b, double beta, double alpha) {
  check_matrix(a, "mat1");
  check_matrix(b, "mat2");
  if (a[1] != b[0])
    throw sy::Error("mat1 and mat2 shapes cannot be multiplied (" + std::to_string(a[0]) + "x" + std::to_string(a[1]) +
                    " and " + std::to_string(b[0]) + "x" + std::to_string(b[1]) + ")");
  GemmPlan p = plan_matmul(a, b);
  p.alpha = alpha;
  if (beta == 1 && self.size() == 1 && self[0] == p.n) {
    p.vector_bias = true;  // the epilogue adds it after alpha * (a @ b)
    if (sy::broadcast_shapes(self, p.out_shape, "bias and result") != p.out_shape)
      throw sy::Error("self " + str(self) + " does not broadcast to " + str(p.out_shape));
    return p;
  }
  set_broadcast_bias(p, self, beta);
  return p;
}

GemmPlan plan_baddbmm(const Shape& self, const Shape& a, const Shape& b, double beta, double alpha) {
  GemmPlan p = plan_bmm(a, b);
  p.alpha = alpha;
  set_broadcast_bias(p, self, beta);
  return p;
}

ColumnMajorGemm column_major(const GemmPlan& p) {
  ColumnMajorGemm c;
  c.m = p.n;
  c.n = p.m;
  c.k = p.k;
  // cuBLAS A = the plan's B. Row-major [k, n] is column-major n x k (op N); row-major [n, k]
  // (b_transposed) is column-major k x n, read transposed (op T).
  c.trans_a = p.b_transposed;
  c.rows_a = p.b_transposed ? p.k : p.n;
  c.cols_a = p.b_transposed ? p.n : p.k;
  c.ld_a = c.rows_a;
  // cuBLAS B = the plan's A: row-major [m, k] is column-major k x m, op N.
  c.trans_b = false;
  c.rows_b = p.k;
  c.cols_b = p.m;
  c.ld_b = p.k;
  c.rows_c = p.n;
  c.cols_c = p.m;
  c.ld_c = p.n;
  c.batch = p.batch;
  c.stride_a = p.stride_b;
  c.stride_b = p.stride_a;
  c.stride_c = p.stride_c;
  return c;
}

void run_plan_on_host(const GemmPlan& p, const float* a, const float* b, const float* vbias, float* out) {
  const ColumnMajorGemm c = column_major(p);
  const int64_t outer = p.outer_count();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t oa = 0, ob = 0, oc = 0, rest = o;
    for (size_t d = p.outer.size(); d-- > 0;) {
      const int64_t idx = rest % p.outer[d];
      rest /= p.outer[d];
      oa += idx * p.outer_a[d], ob += idx * p.outer_b[d], oc += idx * p.outer_c[d];
    }
    for (int64_t t = 0; t < c.batch; ++t) {
      const float* A = b + ob + t * c.stride_a;  // cuBLAS's A is the plan's B
      const float* B = a + oa + t * c.stride_b;
      float* C = out + oc + t * c.stride_c;
      for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
          double s = 0;
          for (int64_t l = 0; l < c.k; ++l) {
            const double x = c.trans_a ? A[l + i * c.ld_a] : A[i + l * c.ld_a];
            const double y = c.trans_b ? B[j + l * c.ld_b] : B[l + j * c.ld_b];
            s += x * y;
          }
          double v = p.alpha * s + (p.beta != 0 && p.broadcast_bias ? p.beta * C[i + j * c.ld_c] : 0.0);
          if (p.vector_bias) v += vbias[i];  // bias has one value per row of column-major D
          C[i + j * c.ld_c] = static_cast<float>(v);
        }
    }
  }
}

}  // namespace sycuda
