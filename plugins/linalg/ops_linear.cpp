// linalg plugin: aten::linear (and its fused epilogues), aten::addmm, aten::mm.
//
//   linear(Tensor input, Tensor weight, Tensor? bias=None)     input @ weight^T + bias
//   linear+aten::{relu,gelu,silu,hardswish}                    act(linear(...)); gelu's
//                                                              `approximate` is post.approximate
//   addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)
//                                                              beta * self + alpha * mat1 @ mat2
//   mm(Tensor self, Tensor mat2)                               self @ mat2
//
// The weight is read through BLAS's transpose flag, never transposed in memory.
#include "gemm_kernel.hpp"

namespace sy_linalg {
namespace {

std::string dims(const View& v) { return std::to_string(v.dim()) + "-D"; }

std::string matrix_shape(const View& v) {
  return std::to_string(v.shape[0]) + "x" + std::to_string(v.shape[1]);
}

struct LinearOp {
  static inline const std::vector<std::string> kNames{"input", "weight", "bias"};
  static inline const std::vector<bool> kOptional{false, false, true};
  static inline const std::vector<size_t> kOperands{0, 1};
  static std::vector<std::string> attributes(const sy::Node& node) {
    if (std::string(node.op).find("+aten::gelu") != std::string::npos) return {"post.approximate"};
    return {};
  }
  explicit LinearOp(const sy::Node& node) : act(activation_of(node)) {}

  MatmulPlan plan(const Args& args) const {
    const View& x = need(args, 0, kNames);
    const View& w = need(args, 1, kNames);
    // ATen treats a 1-D weight differently with and without bias; leave it to ATen.
    if (w.dim() != 2) throw sy::Error("weight is " + dims(w) + "; only a 2-D weight is handled");
    if (x.dim() == 0) throw sy::Error("input is 0-D; linear needs at least 1-D");
    if (x.shape.back() != w.shape[1])
      throw sy::Error("input " + str(x.shape) + " and weight " + str(w.shape) +
                      " cannot be multiplied (" + std::to_string(x.shape.back()) +
                      " != " + std::to_string(w.shape[1]) + ")");
    // ATen's own paths disagree on a bias of more than one dimension (addmm wants it to
    // fit [rows, n] of the flattened input, matmul + add the full result): leave it to ATen.
    if (args[2] && args[2]->dim() > 1)
      throw sy::Error("bias is " + dims(*args[2]) + "; only a 0-D or 1-D bias is handled");
    MatmulPlan p = plan_matmul(x, transpose_last2(w));
    if (args[2]) set_bias(p, *args[2], 1.0);
    p.gemm.act = act;
    return p;
  }
  Act act;
};

struct AddmmOp {
  static inline const std::vector<std::string> kNames{"self", "mat1", "mat2"};
  static inline const std::vector<bool> kOptional{false, false, false};
  static inline const std::vector<size_t> kOperands{1, 2};
  static std::vector<std::string> attributes(const sy::Node&) { return {"beta", "alpha"}; }
  explicit AddmmOp(const sy::Node& node)
      : beta(scalar_attr(node.attrs, "beta", 1.0)), alpha(scalar_attr(node.attrs, "alpha", 1.0)) {}

  MatmulPlan plan(const Args& args) const {
    const View& self = need(args, 0, kNames);
    const View& m1 = need(args, 1, kNames);
    const View& m2 = need(args, 2, kNames);
    if (m1.dim() != 2) throw sy::Error("mat1 must be a matrix, got " + dims(m1));
    if (m2.dim() != 2) throw sy::Error("mat2 must be a matrix, got " + dims(m2));
    if (m1.shape[1] != m2.shape[0])
      throw sy::Error("mat1 and mat2 shapes cannot be multiplied (" + matrix_shape(m1) + " and " +
                      matrix_shape(m2) + ")");
    MatmulPlan p = plan_matmul(m1, m2);
    p.gemm.alpha = alpha;
    set_bias(p, self, beta);
    return p;
  }
  double beta, alpha;
};

struct MmOp {
  static inline const std::vector<std::string> kNames{"self", "mat2"};
  static inline const std::vector<bool> kOptional{false, false};
  static inline const std::vector<size_t> kOperands{0, 1};
  static std::vector<std::string> attributes(const sy::Node&) { return {}; }
  explicit MmOp(const sy::Node&) {}

  MatmulPlan plan(const Args& args) const {
    const View& a = need(args, 0, kNames);
    const View& b = need(args, 1, kNames);
    if (a.dim() != 2) throw sy::Error("self must be a matrix, got " + dims(a));
    if (b.dim() != 2) throw sy::Error("mat2 must be a matrix, got " + dims(b));
    if (a.shape[1] != b.shape[0])
      throw sy::Error("self and mat2 shapes cannot be multiplied (" + matrix_shape(a) + " and " +
                      matrix_shape(b) + ")");
    return plan_matmul(a, b);
  }
};

}  // namespace

void add_linear_kernels(KernelList& list) {
  list.push_back(sy::kernel<GemmKernel<LinearOp>>("aten::linear", "linalg", dtypes()));
  // Fused epilogues: the host rewrites linear -> act into one node (see linalg.hpp).
  for (const char* act : {"relu", "gelu", "silu", "hardswish"})
    list.push_back(sy::kernel<GemmKernel<LinearOp>>(std::string("aten::linear+aten::") + act,
                                                    "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<AddmmOp>>("aten::addmm", "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<MmOp>>("aten::mm", "linalg", dtypes()));
}

}  // namespace sy_linalg
