// linalg plugin: aten::matmul, aten::bmm, aten::baddbmm.
//
//   matmul(Tensor self, Tensor other)    torch.matmul: 1-D x 1-D (dot), 1-D x N-D and
//                                        N-D x 1-D (the 1-D side gets a dimension of 1
//                                        that the result drops), broadcast batch dims
//   bmm(Tensor self, Tensor mat2)        [b, n, m] @ [b, m, p], equal batch sizes
//   baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)
//                                        beta * self + alpha * batch1 @ batch2; self
//                                        broadcasts to [b, n, p]
// An N-D x 2-D matmul whose batch dims run evenly into its rows is one GEMM, not a loop.
#include "gemm_kernel.hpp"

namespace sy_linalg {
namespace {

std::string dims(const View& v) { return std::to_string(v.dim()) + "-D"; }

// bmm's and baddbmm's checks: both 3-D, same batch, matching inner sizes.
void check_batched(const View& a, const View& b, const char* na, const char* nb) {
  if (a.dim() != 3) throw sy::Error(std::string(na) + " must be a 3-D tensor, got " + dims(a));
  if (b.dim() != 3) throw sy::Error(std::string(nb) + " must be a 3-D tensor, got " + dims(b));
  if (a.shape[0] != b.shape[0])
    throw sy::Error(std::string(na) + " and " + nb + " must have the same batch size, got " +
                    std::to_string(a.shape[0]) + " and " + std::to_string(b.shape[0]));
  if (a.shape[2] != b.shape[1])
    throw sy::Error(std::string(na) + " " + str(a.shape) + " and " + nb + " " + str(b.shape) +
                    " cannot be multiplied (" + std::to_string(a.shape[2]) + " != " + std::to_string(b.shape[1]) + ")");
}

struct MatmulOp {
  static inline const std::vector<std::string> kNames{"self", "other"};
  static inline const std::vector<bool> kOptional{false, false};
  static inline const std::vector<size_t> kOperands{0, 1};
  static std::vector<std::string> attributes(const sy::Node&) { return {}; }
  explicit MatmulOp(const sy::Node&) {}

  MatmulPlan plan(const Args& args) const { return plan_matmul(need(args, 0, kNames), need(args, 1, kNames)); }
};

struct BmmOp {
  static inline const std::vector<std::string> kNames{"self", "mat2"};
  static inline const std::vector<bool> kOptional{false, false};
  static inline const std::vector<size_t> kOperands{0, 1};
  static std::vector<std::string> attributes(const sy::Node&) { return {}; }
  explicit BmmOp(const sy::Node&) {}

  MatmulPlan plan(const Args& args) const {
    const View& a = need(args, 0, kNames);
    const View& b = need(args, 1, kNames);
    check_batched(a, b, "self", "mat2");
    return plan_matmul(a, b);
  }
};

struct BaddbmmOp {
  static inline const std::vector<std::string> kNames{"self", "batch1", "batch2"};
  static inline const std::vector<bool> kOptional{false, false, false};
  static inline const std::vector<size_t> kOperands{1, 2};
  static std::vector<std::string> attributes(const sy::Node&) { return {"beta", "alpha"}; }
  explicit BaddbmmOp(const sy::Node& node)
      : beta(scalar_attr(node.attrs, "beta", 1.0)), alpha(scalar_attr(node.attrs, "alpha", 1.0)) {}

  MatmulPlan plan(const Args& args) const {
    const View& self = need(args, 0, kNames);
    const View& a = need(args, 1, kNames);
    const View& b = need(args, 2, kNames);
    check_batched(a, b, "batch1", "batch2");
    MatmulPlan p = plan_matmul(a, b);
    p.gemm.alpha = alpha;
    set_bias(p, self, beta);
    return p;
  }
  double beta, alpha;
};

}  // namespace

void add_matmul_kernels(KernelList& list) {
  list.push_back(sy::kernel<GemmKernel<MatmulOp>>("aten::matmul", "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<BmmOp>>("aten::bmm", "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<BaddbmmOp>>("aten::baddbmm", "linalg", dtypes()));
}

}  // namespace sy_linalg
