// linalg plugin: a transformer's MLP, the fused chain
//
//   aten::linear+aten::{gelu,relu}+aten::linear     linear2(act(linear1(input)))
//
// (sdk.h, "Fused kernels": inputs are input, weight1, bias1, weight2, bias2; gelu's
// `approximate` is post.approximate). It runs a block of rows at a time, both GEMMs on
// the constant weights packed once (packed.cpp), so the hidden activation [rows, H], the
// largest value of a ViT or BERT layer (four times the model width), never exists whole:
// each block's hidden rows live in a per-thread scratch of about kScratchBytes, kept
// from call to call. float32 with constant 2-D weights and contiguous 1-D biases only;
// anything else is declined and runs as linear+act, then linear.
#include "linalg.hpp"

#include "common/bf16_convert.hpp"
#include "common/compute_option.hpp"
#include "common/gather.hpp"

#include <algorithm>
#include <cstring>

namespace sy_linalg {
namespace {

// The hidden rows of one block: at least kMinBlockRows, else about kScratchBytes. oneDNN's
// packed matmul ran ViT-B/16's MLP (k 768, hidden 3072) 20% slower in blocks of 85 rows
// than in one of 197, and as fast in blocks of 341 as in one of 1576 (batch 8).
constexpr int64_t kScratchBytes = int64_t{4} << 20;
constexpr int64_t kMinBlockRows = 256;

// The middle op of "aten::linear+<act>+aten::linear".
std::string middle_op(const std::string& op) {
  const size_t first = op.find('+'), last = op.rfind('+');
  return op.substr(first + 1, last - first - 1);
}

class MlpKernel {
 public:
  static void supports(const sy::Node& node) { MlpKernel k(node, false); }
  explicit MlpKernel(const sy::Node& node) : MlpKernel(node, true) {}

  void infer(sy::Infer& in) {
    const DLTensor& x = in.input(0);
    check_input(x);
    in.set_output(0, sy::kFloat32, out_shape(x));
  }

  // With "@compute" = "bf16": both GEMMs in bfloat16 (the input converted per run; each hidden
  // block written in bfloat16 by the first GEMM, its relu over the bfloat16 bits).
  void storage(sy::StorageQuery& q) {
    const uint64_t rows = static_cast<uint64_t>(sy::numel(q.input(0)) / k_);
    sy_compute::report(q, compute_, rows * static_cast<uint64_t>(k_), static_cast<uint64_t>(h_ * (k_ + n_)));
  }

  // Both GEMMs' multiply-adds, what they read and write once each, and the hidden rows of
  // one block (the scratch, SDK 1.1's pre-flight counts it).
  void cost(sy::Cost& c) {
    const DLTensor& x = c.input(0);
    check_input(x);
    const double rows = static_cast<double>(sy::numel(x) / k_), k = static_cast<double>(k_),
                 h = static_cast<double>(h_), n = static_cast<double>(n_);
    c.flops(2.0 * rows * (k * h + h * n));
    c.bytes(sizeof(float) * (rows * k + k * h + h * n + h + n + rows * n));
    c.scratch(sizeof(float) * static_cast<uint64_t>(std::min<int64_t>(sy::numel(x) / k_, block_rows_) * h_));
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    check_input(x);
    DLTensor& out = r.output(0);
    if (sy::shape_of(out) != out_shape(x) || !sy::is_contiguous(out))
      throw sy::Error("output is " + str(sy::shape_of(out)) + ", expected contiguous " + str(out_shape(x)),
                      SY_ERROR_INTERNAL);
    const int64_t rows = sy::numel(out) / n_;
    if (rows == 0) return;
    // Rows of x one stride apart: a contiguous input, else a compact copy (rare: a view).
    std::vector<float> compact;
    const float* a = sy::data<const float>(x);
    if (!sy::is_contiguous(x)) {
      compact.resize(static_cast<size_t>(rows * k_));
      sy_common::gather_compact(x, compact.data());
      a = compact.data();
    }
    const int64_t block = std::min(rows, block_rows_);
    float* y = sy::data<float>(out);
    const PackedB::Post post1{bias1_, PackedB::fusable(act_) ? act_ : Act::None}, post2{bias2_, Act::None};
    if (compute_.bf16) {                            // the hidden block in bfloat16, as the second GEMM reads it
      thread_local std::vector<uint16_t> hidden16;  // per thread: runs of one instance may overlap
      if (hidden16.size() < static_cast<size_t>(block * h_)) hidden16.resize(static_cast<size_t>(block * h_));
      for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t m = std::min(block, rows - r0);
        w1_->gemm_to_bf16(a + r0 * k_, m, k_, k_, h_, w1_strides_[1], w1_strides_[0], hidden16.data(), post1);
        if (act_ == Act::Relu) sy_bf16::relu(hidden16.data(), m * h_);  // oneDNN's relu would make NaN a number
        w2_->gemm_from_bf16(hidden16.data(), m, h_, n_, w2_strides_[1], w2_strides_[0], y + r0 * n_, post2);
      }
      return;
    }
    thread_local std::vector<float> hidden;  // per thread: runs of one instance may overlap
    if (hidden.size() < static_cast<size_t>(block * h_)) hidden.resize(static_cast<size_t>(block * h_));
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
      const int64_t m = std::min(block, rows - r0);
      // B = weight^T: element (k, n) of B is weight[n][k].
      w1_->gemm(a + r0 * k_, m, k_, k_, h_, w1_strides_[1], w1_strides_[0], hidden.data(), post1);
      if (!PackedB::fusable(act_)) epilogue(hidden.data(), m, h_, h_, nullptr, 0, 0, 1.0f, act_);
      w2_->gemm(hidden.data(), m, h_, h_, n_, w2_strides_[1], w2_strides_[0], y + r0 * n_, post2);
    }
  }

 private:
  // create false: parse and check only (supports()); true: also pack the weights.
  MlpKernel(const sy::Node& node, bool create) {
    const std::string op = node.op;
    act_ = activation_named(middle_op(op), node.attrs);
    if (act_ != Act::GeluErf && act_ != Act::GeluTanh && act_ != Act::Relu)
      throw sy::Unsupported("no fused MLP for '" + middle_op(op) + "' (gelu and relu only)");
    check_attributes(node, {"post.approximate"});
    const DLTensor* x = input_at(node.inputs, node.num_inputs, 0);
    const DLTensor* w1 = input_at(node.inputs, node.num_inputs, 1);
    const DLTensor* b1 = input_at(node.inputs, node.num_inputs, 2);
    const DLTensor* w2 = input_at(node.inputs, node.num_inputs, 3);
    const DLTensor* b2 = input_at(node.inputs, node.num_inputs, 4);
    if (node.num_inputs != 5 || x == nullptr || w1 == nullptr || w2 == nullptr)
      throw sy::Unsupported("expected input, weight1, bias1, weight2, bias2 as inputs (" +
                            std::to_string(node.num_inputs) + " given)");
    for (const DLTensor* t : {x, w1, b1, w2, b2})
      if (t != nullptr && !is_f32(*t)) throw sy::Unsupported("float32 CPU tensors only (the fused MLP)");
    if (w1->data == nullptr || w2->data == nullptr || (b1 && b1->data == nullptr) || (b2 && b2->data == nullptr))
      throw sy::Unsupported("weights and biases fed at run time (the fused MLP packs constants)");
    if (w1->ndim != 2 || w2->ndim != 2) throw sy::Unsupported("weights are not 2-D");
    h_ = w1->shape[0];
    k_ = w1->shape[1];
    n_ = w2->shape[0];
    if (h_ == 0 || k_ == 0 || n_ == 0) throw sy::Unsupported("a weight with no elements (left to linear)");
    if (w2->shape[1] != h_)
      throw sy::Unsupported("weight2 " + str(sy::shape_of(*w2)) + " does not take weight1's " + std::to_string(h_) +
                            " outputs");
    for (const DLTensor* b : {b1, b2})
      if (b != nullptr && (b->ndim != 1 || !sy::is_contiguous(*b)))
        throw sy::Unsupported("a bias that is not one contiguous row (left to linear)");
    if (b1 != nullptr && b1->shape[0] != h_) throw sy::Unsupported("bias1 does not match weight1");
    if (b2 != nullptr && b2->shape[0] != n_) throw sy::Unsupported("bias2 does not match weight2");
    check_input(*x);
    for (int d = 0; d < 2; ++d) {
      w1_strides_[d] = sy::strides_of(*w1)[static_cast<size_t>(d)];
      w2_strides_[d] = sy::strides_of(*w2)[static_cast<size_t>(d)];
    }
    block_rows_ = std::max(kMinBlockRows, kScratchBytes / static_cast<int64_t>(sizeof(float) * h_));
    if (!create) return;
    compute_ = sy_compute::choose(node.attrs);
    bias1_ = b1 ? sy::data<const float>(*b1) : nullptr;
    bias2_ = b2 ? sy::data<const float>(*b2) : nullptr;
    w1_ = std::make_shared<PackedB>(sy::data<const float>(*w1), compute_.bf16);
    w2_ = std::make_shared<PackedB>(sy::data<const float>(*w2), compute_.bf16);
  }

  void check_input(const DLTensor& x) const {
    if (!is_f32(x)) throw sy::Error("input is not a float32 CPU tensor");
    if (x.ndim < 1 || x.shape[x.ndim - 1] != k_)
      throw sy::Error("input " + str(sy::shape_of(x)) + " does not end in weight1's " + std::to_string(k_) +
                      " features");
  }

  Shape out_shape(const DLTensor& x) const {
    Shape s = sy::shape_of(x);
    s.back() = n_;
    return s;
  }

  Act act_ = Act::None;
  int64_t k_ = 0, h_ = 0, n_ = 0, block_rows_ = kMinBlockRows;
  int64_t w1_strides_[2] = {0, 0}, w2_strides_[2] = {0, 0};
  const float* bias1_ = nullptr;  // constants: the host keeps them until destroy
  const float* bias2_ = nullptr;
  std::shared_ptr<PackedB> w1_, w2_;  // thread-safe
  sy_compute::Choice compute_;        // the "@compute" option's answer
};

}  // namespace

void add_mlp_kernels(KernelList& list) {
  for (const char* act : {"gelu", "relu"})
    list.push_back(
        sy::kernel<MlpKernel>(std::string("aten::linear+aten::") + act + "+aten::linear", "linalg", {sy::kFloat32}));
}

}  // namespace sy_linalg
