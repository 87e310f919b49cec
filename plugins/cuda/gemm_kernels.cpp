// cuda plugin: matrix products on cuBLASLt.
//
//   linear(input, weight, bias?)                  input @ weight^T + bias (weight read transposed)
//   linear+<activation>                           the activation as one more pass on the result
//   addmm(self, mat1, mat2, beta, alpha), mm(self, mat2), bmm(self, mat2),
//   matmul(self, other), baddbmm(self, batch1, batch2, beta, alpha)
//
// A 1-D bias of n values goes to cuBLASLt's bias epilogue; any other bias is written into
// the output first and scaled by beta in the product. float32 computes in float32 (no
// TF32) unless the node's rule says `precision = "tf32" | "float16" | "bfloat16"`; float16
// and bfloat16 tensors accumulate in float32. Algorithms come from cuBLASLt's heuristic,
// once per shape, pointer alignment and option, and are kept by the kernel instance.
#include "dynload.hpp"
#include "gemm_plan.hpp"
#include "kernel_base.hpp"
#include "kernels.hpp"

#include <cublasLt.h>

#include <map>
#include <tuple>

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

cudaDataType_t cuda_type(DLDataType dt) {
  if (sy::same_dtype(dt, sy::kFloat16)) return CUDA_R_16F;
  if (sy::same_dtype(dt, sy::kBFloat16)) return CUDA_R_16BF;
  return CUDA_R_32F;
}

cublasComputeType_t compute_type(DLDataType dt, Precision p) {
  if (!sy::same_dtype(dt, sy::kFloat32)) return CUBLAS_COMPUTE_32F;  // half inputs: float accumulation
  switch (p) {
    case Precision::Tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::Float16: return CUBLAS_COMPUTE_32F_FAST_16F;
    case Precision::Bfloat16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case Precision::Float32: break;
  }
  return CUBLAS_COMPUTE_32F;
}

uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a >>= 1;
  return a;
}

// One prepared cuBLASLt call: descriptors and the heuristic's algorithm.
struct LtCall {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  LtCall() = default;
  LtCall(const LtCall&) = delete;
  LtCall& operator=(const LtCall&) = delete;
  ~LtCall() {
    if (c) lib::lt().cublasLtMatrixLayoutDestroy(c);
    if (b) lib::lt().cublasLtMatrixLayoutDestroy(b);
    if (a) lib::lt().cublasLtMatrixLayoutDestroy(a);
    if (op) lib::lt().cublasLtMatmulDescDestroy(op);
  }
};

template <typename T>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T value) {
  SY_CUBLAS_CHECK(lib::lt().cublasLtMatrixLayoutSetAttribute(l, attr, &value, sizeof(value)));
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                   int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  SY_CUBLAS_CHECK(
      lib::lt().cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return l;
}

// The per-shape cache of one kernel instance; used under the device lock only.
class LtCache {
 public:
  using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, bool,
                         uint32_t, uint32_t, uint32_t>;

  const LtCall& get(const ColumnMajorGemm& g, DLDataType dt, Precision precision, bool vector_bias, bool beta,
                    const void* a, const void* b, const void* c) {
    const uint32_t aa = alignment(a), ab = alignment(b), ac = alignment(c);
    const Key key{static_cast<int>(cuda_type(dt)),
                  static_cast<int>(precision),
                  g.m,
                  g.n,
                  g.k,
                  g.batch,
                  g.stride_a,
                  g.stride_b,
                  g.stride_c,
                  g.trans_a,
                  vector_bias,
                  beta,
                  aa,
                  ab,
                  ac};
    auto it = calls_.find(key);
    if (it != calls_.end()) return *it->second;
    if (calls_.size() >= 64) calls_.clear();  // bounded: shapes may keep changing
    auto call = std::make_unique<LtCall>();
    Device& device = Device::get();
    const cudaDataType_t type = cuda_type(dt);
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulDescCreate(&call->op, compute_type(dt, precision), CUDA_R_32F));
    const cublasOperation_t ta = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulDescSetAttribute(call->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulDescSetAttribute(call->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (vector_bias) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulDescSetAttribute(call->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                               sizeof(epilogue)));
    }
    call->a = make_layout(type, g.rows_a, g.cols_a, g.ld_a, g.batch, g.stride_a);
    call->b = make_layout(type, g.rows_b, g.cols_b, g.ld_b, g.batch, g.stride_b);
    call->c = make_layout(type, g.rows_c, g.cols_c, g.ld_c, g.batch, g.stride_c);

    size_t workspace = 0;
    device.gemm_workspace(&workspace);
    cublasLtMatmulPreference_t pref = nullptr;
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceCreate(&pref));
    struct PrefGuard {
      cublasLtMatmulPreference_t p;
      ~PrefGuard() { lib::lt().cublasLtMatmulPreferenceDestroy(p); }
    } guard{pref};
    const uint64_t ws = workspace;
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                                   sizeof(ws)));
    // The pointers' real alignment: the default (256 bytes) would allow algorithms that
    // fault on an operand that starts inside an arena or a batch.
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                                   &aa, sizeof(aa)));
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                                   &ab, sizeof(ab)));
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                                   &ac, sizeof(ac)));
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                                   &ac, sizeof(ac)));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulAlgoGetHeuristic(device.cublaslt(), call->op, call->a, call->b, call->c,
                                                             call->c, pref, 1, &result, &found));
    if (found < 1)
      throw sy::Error("cuBLASLt has no algorithm for a " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                          std::to_string(g.k) + " product (batch " + std::to_string(g.batch) + ", " + dtype_name(dt) +
                          ")",
                      SY_ERROR_INTERNAL);
    call->algo = result.algo;
    return *calls_.emplace(key, std::move(call)).first->second;
  }

 private:
  std::map<Key, std::unique_ptr<LtCall>> calls_;
};

// ---- the ops -------------------------------------------------------------------------------------

struct OpDef {
  const char* op;
  std::vector<std::string> tensors;  // schema tensor arguments, in order
  std::vector<bool> optional;
  std::vector<std::string> scalars;  // other attributes
  size_t a, b;                       // which tensor arguments are the two matrices
  int bias = -1;                     // which is the bias (-1: none)
  GemmPlan (*plan)(const std::vector<const Shape*>& s, double beta, double alpha);
};

const std::vector<OpDef>& op_defs() {
  static const std::vector<OpDef> defs = {
      {"aten::linear",
       {"input", "weight", "bias"},
       {false, false, true},
       {},
       0,
       1,
       2,
       [](const std::vector<const Shape*>& s, double, double) { return plan_linear(*s[0], *s[1], s[2]); }},
      {"aten::addmm",
       {"self", "mat1", "mat2"},
       {false, false, false},
       {"beta", "alpha"},
       1,
       2,
       0,
       [](const std::vector<const Shape*>& s, double beta, double alpha) {
         return plan_addmm(*s[0], *s[1], *s[2], beta, alpha);
       }},
      {"aten::mm",
       {"self", "mat2"},
       {false, false},
       {},
       0,
       1,
       -1,
       [](const std::vector<const Shape*>& s, double, double) { return plan_mm(*s[0], *s[1]); }},
      {"aten::matmul",
       {"self", "other"},
       {false, false},
       {},
       0,
       1,
       -1,
       [](const std::vector<const Shape*>& s, double, double) { return plan_matmul(*s[0], *s[1]); }},
      {"aten::bmm",
       {"self", "mat2"},
       {false, false},
       {},
       0,
       1,
       -1,
       [](const std::vector<const Shape*>& s, double, double) { return plan_bmm(*s[0], *s[1]); }},
      {"aten::baddbmm",
       {"self", "batch1", "batch2"},
       {false, false, false},
       {"beta", "alpha"},
       1,
       2,
       0,
       [](const std::vector<const Shape*>& s, double beta, double alpha) {
         return plan_baddbmm(*s[0], *s[1], *s[2], beta, alpha);
       }},
  };
  return defs;
}

const OpDef& def_of(const std::string& producer) {
  for (const OpDef& d : op_defs())
    if (producer == d.op) return d;
  throw sy::Unsupported("no GEMM op " + producer);
}

class GemmKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    GemmKernel k(n);
    declining([&] { k.checked_plan(n.inputs, n.num_inputs); });
  }

  explicit GemmKernel(const sy::Node& n)
      : CudaKernel(n), def_(def_of(producer_of(n.op))), args_(n, def_.tensors, def_.optional) {
    std::vector<std::string> known = def_.tensors;
    known.insert(known.end(), def_.scalars.begin(), def_.scalars.end());
    const std::string op = n.op;
    if (op.find('+') != std::string::npos)
      for (const std::string& a : unary_attr_names(op.substr(op.find('+') + 1))) known.push_back("post." + a);
    check_attributes(n, known);
    act_ = fused_activation(n);
    beta_ = n.attrs.f("beta", 1.0);
    alpha_ = n.attrs.f("alpha", 1.0);
    precision_ = precision_of(n.attrs);
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
  }

  void infer(sy::Infer& f) {
    const auto [plan, dt] = at_run([&] { return checked_plan(f.args->inputs, f.num_inputs()); });
    f.set_output(0, dt, plan.out_shape);
  }

  void run(sy::Run& r) {
    const auto [plan, dt] = checked_plan(r.args->inputs, r.num_inputs());
    DeviceRun d(r);
    DevTensor& out = d.out(0);
    if (out.numel() == 0) return d.finish();
    const DevTensor a = args_.device(def_.a, d), b = args_.device(def_.b, d);
    const DevTensor bias = def_.bias >= 0 ? args_.device(static_cast<size_t>(def_.bias), d) : DevTensor{};
    const size_t es = static_cast<size_t>(esize(dt));
    const launch::DT ldt = *dt_of(dt);

    if (plan.broadcast_bias) {  // out = bias (broadcast); the product adds beta * out
      Shape from = plan.bias_strides, to = broadcast_strides(plan.out_shape, plan.out_shape);
      const launch::Walk w = make_walk(plan.out_shape, {&from, &to});
      launch::Walk src = w, dst = w;
      for (int j = 0; j < w.ndim; ++j) src.stride[j] = from[j], dst.stride[j] = to[j];
      launched(launch::strided_copy(static_cast<int>(es), bias.data, src, out.data, dst, d.stream()), "bias copy");
    }
    if (plan.k == 0) {
      empty_product(plan, ldt, bias, out, d);
    } else {
      product(plan, dt, a, b, bias, out, d);
    }
    if (act_) launched(launch::unary(ldt, *act_, out.data, out.data, out.numel(), d.stream()), "activation");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const auto [plan, dt] = checked_plan(c.args->inputs, c.num_inputs());
    double bytes = static_cast<double>(product_of(plan.out_shape)) * esize(dt);
    for (size_t i = 0; i < args_.size(); ++i)
      if (const DLTensor* t = args_.meta(i, c.args->inputs, c.num_inputs()))
        bytes += static_cast<double>(sy::numel(*t)) * esize(t->dtype);
    c.flops(plan.flops());
    c.bytes(bytes);
  }

 private:
  static int64_t product_of(const Shape& s) { return sycuda::product(s); }

  std::pair<GemmPlan, DLDataType> checked_plan(const DLTensor* const* in, size_t n) const {
    std::vector<Shape> shapes(args_.size());
    std::vector<const Shape*> ptrs(args_.size(), nullptr);
    std::optional<DLDataType> dt;
    for (size_t i = 0; i < args_.size(); ++i) {
      const DLTensor* t = args_.meta(i, in, n);
      if (t == nullptr) continue;
      if (!is_float(t->dtype)) throw sy::Unsupported("'" + args_.name(i) + "' has dtype " + dtype_name(t->dtype));
      if (dt && !sy::same_dtype(*dt, t->dtype))
        throw sy::Unsupported("mixed dtypes " + dtype_name(*dt) + " and " + dtype_name(t->dtype));
      dt = t->dtype;
      shapes[i] = sy::shape_of(*t);
      ptrs[i] = &shapes[i];
    }
    for (size_t i = 0; i < args_.size(); ++i)
      if (ptrs[i] == nullptr && !def_.optional[i]) throw sy::Unsupported("'" + args_.name(i) + "' is missing");
    GemmPlan p = def_.plan(ptrs, beta_, alpha_);
    return {p, *dt};
  }

  void product(const GemmPlan& plan, DLDataType dt, const DevTensor& a, const DevTensor& b, const DevTensor& bias,
               DevTensor& out, DeviceRun& d) {
    Device& device = Device::get();
    const ColumnMajorGemm g = column_major(plan);
    const size_t es = static_cast<size_t>(esize(dt));
    size_t workspace_bytes = 0;
    void* workspace = device.gemm_workspace(&workspace_bytes);
    const float alpha = static_cast<float>(plan.alpha),
                beta = plan.broadcast_bias ? static_cast<float>(plan.beta) : 0.f;
    const int64_t outer = plan.outer_count();
    for (int64_t o = 0; o < outer; ++o) {
      int64_t oa = 0, ob = 0, oc = 0, rest = o;
      for (size_t k = plan.outer.size(); k-- > 0;) {
        const int64_t idx = rest % plan.outer[k];
        rest /= plan.outer[k];
        oa += idx * plan.outer_a[k], ob += idx * plan.outer_b[k], oc += idx * plan.outer_c[k];
      }
      // cuBLAS's A is the plan's B (column_major()).
      const char* pa = static_cast<const char*>(b.data) + ob * static_cast<int64_t>(es);
      const char* pb = static_cast<const char*>(a.data) + oa * static_cast<int64_t>(es);
      char* pc = static_cast<char*>(out.data) + oc * static_cast<int64_t>(es);
      const LtCall& call = cache_.get(g, dt, precision_, plan.vector_bias, beta != 0.f, pa, pb, pc);
      if (plan.vector_bias)
        SY_CUBLAS_CHECK(lib::lt().cublasLtMatmulDescSetAttribute(call.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias.data,
                                                                 sizeof(bias.data)));
      SY_CUBLAS_CHECK(lib::lt().cublasLtMatmul(device.cublaslt(), call.op, &alpha, pa, call.a, pb, call.b, &beta, pc,
                                               call.c, pc, call.c, &call.algo, workspace, workspace_bytes, d.stream()));
    }
    if (device.sync_each_kernel()) launched(cudaSuccess, "cublasLtMatmul");
  }

  // k == 0: the product is zero; what remains is beta * bias, or the bias vector, or zeros.
  void empty_product(const GemmPlan& plan, launch::DT ldt, const DevTensor& bias, DevTensor& out, DeviceRun& d) {
    if (plan.broadcast_bias) {
      UnaryOp scale{Unary::MulAdd, static_cast<float>(plan.beta), 0.f, 0.f};
      launched(launch::unary(ldt, scale, out.data, out.data, out.numel(), d.stream()), "scale");
      return;
    }
    launched(launch::fill(ldt, out.data, out.numel(), 0.0, d.stream()), "fill");
    if (plan.vector_bias)
      launched(launch::bias_activation(ldt, UnaryOp{}, out.data, bias.data, out.numel(), plan.n, 1, d.stream()),
               "bias");
  }

  const OpDef& def_;
  TensorArgs args_;
  std::optional<UnaryOp> act_;
  double beta_ = 1, alpha_ = 1;
  Precision precision_ = Precision::Float32;
  LtCache cache_;
};

}  // namespace

void add_gemm_kernels(KernelList& list) {
  for (const OpDef& d : op_defs()) add_kernel<GemmKernel>(list, d.op, "linalg", float_dtypes());
  for (const std::string& act : fusable_activations())
    add_kernel<GemmKernel>(list, std::string("aten::linear+") + act, "linalg", float_dtypes());
}

}  // namespace sycuda
