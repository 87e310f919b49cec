// linalg plugin: the first half of a Llama MLP, as the host's pattern pass writes it
// (host/src/ir/patterns.hpp) in place of linear, silu, linear and mul:
//
//   switchyard::swiglu(Tensor input, Tensor gate_weight, Tensor up_weight)
//       = silu(input @ gate_weight^T) * (input @ up_weight^T)
//
// Both weights are constants, [H, D] each, kept side by side as one [2H, D] weight packed
// once (packed.cpp, bfloat16 where the config asks), so one GEMM makes both products of a
// block of rows; silu and the product follow on that block while it is in cache.
#include "linalg.hpp"

#include "common/compute_option.hpp"
#include "common/gather.hpp"

#include <algorithm>
#include <cstring>

namespace sy_linalg {
namespace {

constexpr int64_t kScratchBytes = int64_t{4} << 20;  // both products of a block of rows
constexpr int64_t kMinBlockRows = 64;

class SwigluKernel {
 public:
  static void supports(const sy::Node& node) { SwigluKernel k(node, false); }
  explicit SwigluKernel(const sy::Node& node) : SwigluKernel(node, true) {}

  void infer(sy::Infer& in) {
    check_input(in.input(0));
    in.set_output(0, sy::kFloat32, out_shape(in.input(0)));
  }

  void storage(sy::StorageQuery& q) {
    const uint64_t rows = static_cast<uint64_t>(sy::numel(q.input(0)) / d_);
    sy_compute::report(q, compute_, rows * static_cast<uint64_t>(d_), static_cast<uint64_t>(2 * h_ * d_));
  }

  void cost(sy::Cost& c) {
    const double rows = static_cast<double>(sy::numel(c.input(0)) / d_), d = static_cast<double>(d_),
                 h = static_cast<double>(h_);
    c.flops(2.0 * rows * d * 2.0 * h + 4.0 * rows * h);
    c.bytes(sizeof(float) * (rows * d + 2.0 * h * d + rows * h));
    c.scratch(sizeof(float) * static_cast<uint64_t>(std::min(static_cast<int64_t>(rows), block_rows_) * 2 * h_));
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    check_input(x);
    DLTensor& out = r.output(0);
    const int64_t rows = sy::numel(x) / d_;
    if (rows == 0) return;
    std::vector<float> compact;  // a strided input: its rows in order first (rare)
    const float* a = sy::data<const float>(x);
    if (!sy::is_contiguous(x)) {
      compact.resize(static_cast<size_t>(rows * d_));
      sy_common::gather_compact(x, compact.data());
      a = compact.data();
    }
    thread_local std::vector<float> both;  // per thread: runs of one instance may overlap
    const int64_t block = std::min(rows, block_rows_);
    if (both.size() < static_cast<size_t>(block * 2 * h_)) both.resize(static_cast<size_t>(block * 2 * h_));
    float* y = sy::data<float>(out);
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
      const int64_t m = std::min(block, rows - r0);
      // B = weights^T: element (k, n) of B is weights[n][k].
      weights_->gemm(a + r0 * d_, m, d_, d_, 2 * h_, 1, d_, both.data(), PackedB::Post{});
      epilogue(both.data(), m, h_, 2 * h_, nullptr, 0, 0, 1.0f, Act::Silu);  // the gate half
      for (int64_t i = 0; i < m; ++i) {
        const float* g = both.data() + i * 2 * h_;
        float* o = y + (r0 + i) * h_;
        for (int64_t j = 0; j < h_; ++j) o[j] = g[j] * g[h_ + j];
      }
    }
  }

 private:
  // create false: parse and check only (supports()); true: also pack the weights.
  SwigluKernel(const sy::Node& node, bool create) {
    check_attributes(node, {});
    const DLTensor* x = input_at(node.inputs, node.num_inputs, 0);
    const DLTensor* wg = input_at(node.inputs, node.num_inputs, 1);
    const DLTensor* wu = input_at(node.inputs, node.num_inputs, 2);
    if (node.num_inputs != 3 || x == nullptr || wg == nullptr || wu == nullptr)
      throw sy::Unsupported("expected input, gate_weight and up_weight as inputs");
    for (const DLTensor* t : {x, wg, wu})
      if (!is_f32(*t)) throw sy::Unsupported("float32 CPU tensors only");
    if (wg->data == nullptr || wu->data == nullptr)
      throw sy::Unsupported("weights fed at run time (the kernel packs constants)");
    if (wg->ndim != 2 || sy::shape_of(*wg) != sy::shape_of(*wu))
      throw sy::Unsupported("gate_weight " + str(sy::shape_of(*wg)) + " and up_weight " + str(sy::shape_of(*wu)) +
                            " are not two matrices of one shape");
    h_ = wg->shape[0];
    d_ = wg->shape[1];
    if (h_ == 0 || d_ == 0) throw sy::Unsupported("a weight with no elements");
    check_input(*x);
    block_rows_ = std::max(kMinBlockRows, kScratchBytes / static_cast<int64_t>(sizeof(float) * 2 * h_));
    if (!create) return;
    compute_ = sy_compute::choose(node.attrs);
    joined_.resize(static_cast<size_t>(2 * h_ * d_));  // gate rows, then up rows
    sy_common::gather_compact<float>(*wg, joined_.data());
    sy_common::gather_compact<float>(*wu, joined_.data() + h_ * d_);
    weights_ = std::make_shared<PackedB>(joined_.data(), compute_.bf16);
  }

  void check_input(const DLTensor& x) const {
    if (!is_f32(x)) throw sy::Error("input is not a float32 CPU tensor");
    if (x.ndim < 1 || x.shape[x.ndim - 1] != d_)
      throw sy::Error("input " + str(sy::shape_of(x)) + " does not end in the weights' " + std::to_string(d_) +
                      " features");
  }

  Shape out_shape(const DLTensor& x) const {
    Shape s = sy::shape_of(x);
    s.back() = h_;
    return s;
  }

  int64_t d_ = 0, h_ = 0, block_rows_ = kMinBlockRows;
  std::vector<float> joined_;         // both weights, [2H, D]: PackedB's source
  std::shared_ptr<PackedB> weights_;  // thread-safe
  sy_compute::Choice compute_;        // the "@compute" option's answer
};

}  // namespace

void add_swiglu_kernel(KernelList& list) {
  list.push_back(sy::kernel<SwigluKernel>("switchyard::swiglu", "linalg", {sy::kFloat32}));
}

}  // namespace sy_linalg
