// linalg plugin, internal: strided views, the batched-GEMM description every op lowers
// to, the epilogues, and the argument helpers the op files share. Included only by this
// plugin's sources; nothing here crosses the SDK boundary.
//
// Every op (linear, addmm, mm, bmm, matmul, baddbmm, einsum and the fused
// `<op>+<activation>` kernels) becomes one Gemm:
//
//   C[batch..., m, n] = act(alpha * A[batch..., m, k] @ B[batch..., k, n] + beta * bias)
//
// where A, B and bias are strided views (stride 0 where broadcast) and C is the
// contiguous output. run_gemm() folds batch dimensions into m where the strides allow,
// hands each matrix to OpenBLAS with the transpose flag its strides call for (copying only
// when no leading dimension describes it), and applies bias and activation per row block
// right after that block's GEMM, while it is still in cache.
#pragma once

#include <switchyard/plugin.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sy_linalg {

using Shape = std::vector<int64_t>;

std::string str(const Shape& shape);  // "[2, 3]"

// ---- dtypes -----------------------------------------------------------------------------

enum class Dtype { F32, F64 };
inline const std::vector<DLDataType>& dtypes() {
  static const std::vector<DLDataType> list{sy::kFloat32, sy::kFloat64};
  return list;
}
std::string dtype_name(DLDataType dt);
size_t elem_size(Dtype d);

// ---- views ------------------------------------------------------------------------------

// A tensor's elements: first element, shape, element strides (never NULL here).
struct View {
  const char* data = nullptr;
  Shape shape, strides;
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
};
View view_of(const DLTensor& t);
// View of a tensor given only as metadata (supports): data may be NULL.
View transpose_last2(View v);  // the last two dims swapped; a 1-D view is left as it is

// The strides that walk `v` over `out` (numpy broadcasting, right-aligned, 0 where v is
// broadcast). Throws sy::Error unless v's shape broadcasts to `out`.
Shape broadcast_strides(const View& v, const Shape& out, const std::string& what);
// numpy broadcast of two shapes; throws sy::Error naming `what`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what);

// ---- the GEMM ---------------------------------------------------------------------------

enum class Act { None, Relu, GeluErf, GeluTanh, Silu, Hardswish };

struct Operand {
  const char* data = nullptr;  // bias: nullptr when there is none
  Shape bs;                    // strides along Gemm::batch (0 where broadcast)
  int64_t rs = 0, cs = 0;      // row and column strides, in elements
};

// A constant B (a linear's weight) that float32 GEMMs read in oneDNN's packed layout,
// packed once per layout at first use rather than on every call as dnnl_sgemm does.
// Thread-safe; its primitives are cached per row count (bounded).
// With `bf16`, B is packed in bfloat16 and each call converts A into bfloat16 first: the
// products are bfloat16, accumulated and written in float32.
class PackedB {
 public:
  // `b`: the constant's first element; it outlives this.
  explicit PackedB(const float* b, bool bf16 = false);
  bool bf16() const { return bf16_; }
  ~PackedB();
  PackedB(const PackedB&) = delete;
  PackedB& operator=(const PackedB&) = delete;
  const float* source() const { return source_; }
  // What the primitive applies to C in registers, before C is stored.
  struct Post {
    const float* bias = nullptr;  // (optional) n contiguous floats, added to every row
    Act act = Act::None;          // None, GeluErf or GeluTanh (fusable(): NaN stays NaN)
  };
  // Whether the primitive can apply `act` as ATen does; relu and the rest are left to
  // epilogue(), since oneDNN's relu, like its clip, makes NaN a number.
  static bool fusable(Act act) { return act == Act::None || act == Act::GeluErf || act == Act::GeluTanh; }
  // C[m, n] (contiguous) = post(A[m, k] (row stride lda) x B[k, n] (strides brs, bcs)).
  void gemm(const float* a, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs, float* c,
            const Post& post);
  // The same with A or C held in bfloat16 (raw bits; A compact, lda == k), a bf16 B only:
  // a chain of products against constants (the fused MLP) hands its middle value from one
  // to the next in bfloat16, with no float32 copy and no conversion pass in between.
  void gemm_to_bf16(const float* a, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs, uint16_t* c,
                    const Post& post);
  void gemm_from_bf16(const uint16_t* a, int64_t m, int64_t k, int64_t n, int64_t brs, int64_t bcs, float* c,
                      const Post& post);

 private:
  struct State;  // oneDNN primitives per row count and B per packed layout (packed.cpp)
  void run(const void* a, bool a_bf16, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs, void* c,
           bool c_bf16, const Post& post);
  const float* source_;
  bool bf16_;
  std::unique_ptr<State> state_;
};

struct Gemm {
  Shape batch;
  int64_t m = 0, n = 0, k = 0;
  Operand a, b, bias;
  double alpha = 1, beta = 1;
  Act act = Act::None;
  PackedB* packed = nullptr;  // (optional) B's packed form, used when b.data is its source
  // C's layout in `out`: empty c_bs means contiguous [batch..., m, n]; otherwise product i
  // of a one-dimensional batch starts at i * c_bs[0] and its rows are c_rs apart.
  Shape c_bs;
  int64_t c_rs = 0;
};

// Writes the Gemm into `out`, a [batch..., m, n] buffer of dtype d laid out as Gemm::c_bs
// says. Throws sy::Error for sizes BLAS cannot index (over 2^31 - 1).
void run_gemm(Dtype d, const Gemm& g, void* out);
// Whether run_gemm takes g through g.packed (a float32 g only): what the kernel reports
// as its compute dtype when B is packed in bfloat16.
bool takes_packed_path(Gemm g);

// Applies bias and activation to `rows` rows of C (row stride ldc) in one pass; used by
// run_gemm after each row block, and exposed for the tests of the epilogue alone.
void epilogue(float* c, int64_t rows, int64_t n, int64_t ldc, const float* bias, int64_t brs, int64_t bcs, float beta,
              Act act);
void epilogue(double* c, int64_t rows, int64_t n, int64_t ldc, const double* bias, int64_t brs, int64_t bcs,
              double beta, Act act);

// ---- matmul lowering --------------------------------------------------------------------

// torch.matmul's rules on two views: 1-D operands get a dimension of 1 that the result
// drops, batch dimensions broadcast. Throws sy::Error with the reason on a mismatch.
struct MatmulPlan {
  Gemm gemm;
  Shape out;               // the result's shape
  bool squeeze_m = false;  // A was 1-D: out has no m dimension
  bool squeeze_n = false;  // B was 1-D: out has no n dimension
};
MatmulPlan plan_matmul(const View& a, const View& b);
// Adds `bias` (broadcastable to plan.out) with factor `beta`.
void set_bias(MatmulPlan& plan, const View& bias, double beta);

// ---- node arguments ---------------------------------------------------------------------

// Where each schema tensor argument of a node comes from: an input slot, or a constant
// SY_ATTR_TENSOR attribute named like the argument (then it takes no slot). Built once
// per node (supports, create); `get` reads the tensors of one call.
class TensorArgs {
 public:
  // names: the schema's tensor arguments in order; `optional` ones may be absent.
  // A trailing "*" name takes every remaining input (einsum's `tensors`).
  TensorArgs(const sy::Node& node, const std::vector<std::string>& names, const std::vector<bool>& optional);
  size_t count() const { return slots_.size(); }
  // The input slot of argument i, or -1 for an attribute or an absent argument.
  int64_t slot(size_t i) const { return slots_[i]; }
  // Argument i for a call whose inputs are `inputs` (nullptr: absent optional argument).
  const DLTensor* get(size_t i, const DLTensor* const* inputs, size_t num_inputs) const;

 private:
  std::vector<int64_t> slots_;          // input slot, or -1 for an attribute / absent
  std::vector<const DLTensor*> attrs_;  // attribute tensors (host-owned until destroy)
};

// Input i of a node or call, or nullptr past its last input (the fused kernels' optional
// trailing inputs).
inline const DLTensor* input_at(const DLTensor* const* inputs, size_t n, size_t i) {
  return i < n ? inputs[i] : nullptr;
}
// A float32 tensor in CPU memory (what the fused kernels on packed weights take).
inline bool is_f32(const DLTensor& t) {
  return sy::same_dtype(t.dtype, sy::kFloat32) && t.device.device_type == kDLCPU;
}

// Declines (sy::Unsupported) any attribute of the node not in `known` whose value is not
// None: ignoring it could compute something else.
void check_attributes(const sy::Node& node, const std::vector<std::string>& known);
// Checks dtype (one of dtypes(), all equal) and CPU device of the given tensors.
Dtype check_tensors(const std::vector<const DLTensor*>& tensors, const std::vector<std::string>& names);
// A Scalar attribute (int or float), or `fallback` when missing / None.
double scalar_attr(const sy::Attrs& attrs, const char* name, double fallback);
// The activation of a fused `<op>+aten::<act>` kernel from the op name and `post.` attrs.
Act activation_of(const sy::Node& node);
// The activation `post` names ("aten::gelu", ...), reading gelu's `post.approximate`.
Act activation_named(const std::string& post, const sy::Attrs& attrs);

// A constant operand copied once at create into the layout BLAS wants (contiguous), used
// instead of the run-time input whenever that input is the same constant.
class Prepared {
 public:
  Prepared() = default;
  // Copies `t` if it is a constant (data != NULL) that no BLAS leading dimension fits.
  void prepare(const DLTensor* t, Dtype d);
  // Points `v` at the prepared copy when `v` views the prepared constant; else leaves it
  // (in place: this runs per operand per run, and a copy of `v` allocated twice).
  void use(View& v) const;
  bool active() const { return source_ != nullptr; }

 private:
  const char* source_ = nullptr;
  Shape shape_, source_strides_;
  std::shared_ptr<std::vector<char>> copy_;
};

// Whether a [rows, cols] matrix with these strides fits BLAS without a copy.
bool blas_fits(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

// Copies view `v` into a contiguous buffer (elements of size `es`).
void copy_contiguous(const View& v, size_t es, char* dst);

// Registration hooks, one per op file.
using KernelList = std::vector<std::shared_ptr<sy::KernelEntry>>;
void add_linear_kernels(KernelList& list);  // ops_linear.cpp: linear (+ fused), addmm, mm
void add_matmul_kernels(KernelList& list);  // ops_matmul.cpp: matmul, bmm, baddbmm
void add_einsum_kernels(KernelList& list);  // ops_einsum.cpp: einsum
void add_mlp_kernels(KernelList& list);     // ops_mlp.cpp: linear+act+linear, row block by row block
void add_swiglu_kernel(KernelList& list);   // ops_swiglu.cpp: switchyard::swiglu (the pattern pass's)
void add_head_kernels(KernelList& list);    // ops_heads.cpp: linear+chunk, bmm+transpose+contiguous
void add_rnn_kernels(KernelList& list);     // ops_rnn.cpp: lstm, gru, rnn_tanh, rnn_relu (oneDNN RNN primitives)

}  // namespace sy_linalg
