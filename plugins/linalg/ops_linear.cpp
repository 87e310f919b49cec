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
//
// A linear whose output rows are at least as wide as its input rows (n >= k) lets the
// host put its input at the end of the output's buffer (SDK 1.2, output_inplace_tail: an
// LM head's input then takes no memory of its own); run() then goes over the rows from
// the first, never writing output rows over input rows it has yet to read.
#include "gemm_kernel.hpp"

#include <algorithm>
#include <cstring>

namespace sy_linalg {
namespace {

std::string dims(const View& v) { return std::to_string(v.dim()) + "-D"; }

std::string matrix_shape(const View& v) { return std::to_string(v.shape[0]) + "x" + std::to_string(v.shape[1]); }

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
      throw sy::Error("input " + str(x.shape) + " and weight " + str(w.shape) + " cannot be multiplied (" +
                      std::to_string(x.shape.back()) + " != " + std::to_string(w.shape[1]) + ")");
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

// Scratch for the input rows the tail path copies before writing over them: per thread,
// kept between runs (no allocation per run), and the block that fits it at most this
// big, but at least kTailMinRows rows whatever k (fewer would make the GEMM inefficient).
constexpr int64_t kTailScratchBytes = 64 * 1024;
constexpr int64_t kTailMinRows = 32;

// aten::linear and its fused epilogues: the GEMM kernel, plus output_inplace_tail.
class LinearKernel : public GemmKernel<LinearOp> {
 public:
  using GemmKernel<LinearOp>::GemmKernel;

  // The output may be written over a buffer whose end holds 'input' when that is a
  // run-time input, contiguous, whose rows map 1:1 to output rows at least as wide.
  void storage(sy::StorageQuery& q) {
    report_compute(q);
    const int64_t slot = b_.args.slot(0);
    if (slot < 0 || !q.has_input(static_cast<size_t>(slot))) return;  // a constant attribute
    const DLTensor& x = q.input(static_cast<size_t>(slot));
    if (x.data != nullptr || !sy::is_contiguous(x) || x.ndim == 0) return;  // a constant, or strided
    std::optional<MatmulPlan> p;
    try {
      p = b_.op.plan(views(b_, q.args->inputs, q.args->num_inputs, &prepared_));
    } catch (const sy::Error&) {
      return;  // run() would refuse these shapes anyway
    }
    Shape rows = sy::shape_of(x);
    rows.back() = p->gemm.n;
    if (p->out == rows && p->gemm.n >= p->gemm.k) q.in_place_tail(0, static_cast<size_t>(slot));
  }

  void run(sy::Run& r) {
    const int64_t slot = b_.args.slot(0);
    if (slot >= 0 && r.overlaps(0, static_cast<size_t>(slot))) return run_over_tail(r, static_cast<size_t>(slot));
    GemmKernel<LinearOp>::run(r);
  }

 private:
  // The input lies at the end of the output's buffer: output rows [r0, r1) end at byte
  // r1*n*es, and input rows from r1 on start at (M*n - M*k + r1*k)*es, no earlier when
  // n >= k. So rows go from the first, each block's input rows copied to scratch before
  // the GEMM writes its output rows; while the output rows still end before the block's
  // own input rows start (c rows: (r0 + c)*n <= M*n - M*k + r0*k) and c is at least half
  // the rows left (n >= 2k), the GEMM reads them where they are, without a copy: most of
  // an LM head's rows in one GEMM. Few row counts either way (a log of M direct steps,
  // then whole blocks): the packed path keeps a primitive per row count.
  void run_over_tail(sy::Run& r, size_t slot) {
    MatmulPlan p = plan_run(r);
    const DLTensor& x = r.input(slot);
    DLTensor& out = r.output(0);
    const int64_t n = p.gemm.n, k = p.gemm.k, es = static_cast<int64_t>(elem_size(b_.dtype));
    const int64_t m = k > 0 ? sy::numel(x) / k : 0;
    const char* src = sy::data<const char>(x);
    char* dst = sy::data<char>(out);
    bool shared = p.gemm.bias.data == nullptr || p.gemm.bias.rs == 0;  // B and bias the same for every row
    for (const Operand* o : {&p.gemm.b, &p.gemm.bias})
      shared = shared && std::all_of(o->bs.begin(), o->bs.end(), [](int64_t s) { return s == 0; });
    for (size_t i = 0; i < r.num_inputs(); ++i) shared = shared && (i == slot || !r.overlaps(0, i));
    if (!sy::is_contiguous(x) || n < k || m * n != sy::numel(out) || !shared || src + m * k * es != dst + m * n * es)
      throw sy::Error("linear: input " + str(sy::shape_of(x)) + " overlaps output " + str(p.out) +
                          " but is not a contiguous input at the end of its buffer, with output rows at least "
                          "as wide and nothing else read there",
                      SY_ERROR_INTERNAL);
    Gemm g = p.gemm;  // one [rows, k] x [k, n] product per step, A contiguous
    g.batch.clear();
    g.c_bs.clear();
    for (Operand* o : {&g.a, &g.b, &g.bias}) o->bs.clear();
    g.a.rs = k, g.a.cs = 1;
    const int64_t block = std::max(kTailMinRows, kTailScratchBytes / (k * es));
    thread_local std::vector<double> scratch;  // 8-byte aligned, for float and double
    for (int64_t r0 = 0; r0 < m;) {
      const int64_t direct = (m - r0) * (n - k) / n;  // rows whose output ends before their input
      const bool copy = direct < block || 2 * direct < m - r0;
      g.m = copy ? std::min(block, m - r0) : direct;
      g.a.data = src + r0 * k * es;
      if (copy) {
        const size_t bytes = static_cast<size_t>(g.m * k * es);
        if (scratch.size() * sizeof(double) < bytes) scratch.resize((bytes + sizeof(double) - 1) / sizeof(double));
        std::memcpy(scratch.data(), g.a.data, bytes);
        g.a.data = reinterpret_cast<const char*>(scratch.data());
      }
      run_gemm(b_.dtype, g, dst + r0 * n * es);
      r0 += g.m;
    }
  }
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
      throw sy::Error("mat1 and mat2 shapes cannot be multiplied (" + matrix_shape(m1) + " and " + matrix_shape(m2) +
                      ")");
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
      throw sy::Error("self and mat2 shapes cannot be multiplied (" + matrix_shape(a) + " and " + matrix_shape(b) +
                      ")");
    return plan_matmul(a, b);
  }
};

}  // namespace

void add_linear_kernels(KernelList& list) {
  list.push_back(sy::kernel<LinearKernel>("aten::linear", "linalg", dtypes()));
  // Fused epilogues: the host rewrites linear -> act into one node (see linalg.hpp).
  for (const char* act : {"relu", "gelu", "silu", "hardswish"})
    list.push_back(sy::kernel<LinearKernel>(std::string("aten::linear+aten::") + act, "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<AddmmOp>>("aten::addmm", "linalg", dtypes()));
  list.push_back(sy::kernel<GemmKernel<MmOp>>("aten::mm", "linalg", dtypes()));
}

}  // namespace sy_linalg
