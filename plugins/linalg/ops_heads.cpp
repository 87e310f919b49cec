// linalg plugin: the products at both ends of a decomposed multi-head attention
// (nn.MultiheadAttention as traced), fused with the split and the copy around them:
//
//   aten::linear+aten::chunk           q, k, v = linear(x, w, b).chunk(n, dim=-1)
//       Each piece is its own GEMM against its rows of the constant weight, packed once,
//       written into its own contiguous output. Unfused, the three pieces are strided
//       views of one [rows, 3E] product that `contiguous` then copies out one by one,
//       with the whole product alive meanwhile.
//   aten::bmm+aten::transpose+aten::contiguous     bmm(a, b).transpose(0, 1).contiguous()
//       The heads' products [B, M, N] written straight into the [M, B, N] layout the
//       output projection reads, instead of a product and its transposed copy.
//
// float32 with a constant weight for the first; the second takes bmm's dtypes. Anything
// else is declined and runs unfused (sdk.h, "Fused kernels").
#include "gemm_kernel.hpp"

#include "common/compute_option.hpp"
#include "common/gather.hpp"

#include <cstring>

namespace sy_linalg {
namespace {

// Products of at most this many floats (128 KiB, in L2) run as one GEMM and are split
// after; larger ones run as one GEMM per piece straight into the outputs.
constexpr int64_t kWholeProductFloats = int64_t{32} << 10;

// aten::chunk's pieces of a dimension of `size`: ceil(size / chunks) each, the last
// what is left (so there may be fewer than `chunks`).
Shape chunk_sizes(int64_t size, int64_t chunks) {
  if (chunks <= 0) throw sy::Error("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  const int64_t piece = (size + chunks - 1) / chunks;
  Shape sizes;
  for (int64_t at = 0; at < size; at += piece) sizes.push_back(std::min(piece, size - at));
  return sizes;
}

class LinearChunkKernel {
 public:
  static void supports(const sy::Node& node) { LinearChunkKernel k(node, false); }
  explicit LinearChunkKernel(const sy::Node& node) : LinearChunkKernel(node, true) {}

  void infer(sy::Infer& in) {
    const DLTensor& x = in.input(0);
    check_input(x);
    for (size_t j = 0; j < sizes_.size(); ++j) in.set_output(j, sy::kFloat32, out_shape(x, j));
  }

  // With "@compute" = "bf16": the product in bfloat16 (the input converted per run).
  void storage(sy::StorageQuery& q) {
    sy_compute::report(q, compute_, static_cast<uint64_t>(sy::numel(q.input(0))), static_cast<uint64_t>(n_ * k_));
  }

  void cost(sy::Cost& c) {
    const DLTensor& x = c.input(0);
    check_input(x);
    const double rows = static_cast<double>(sy::numel(x) / k_), k = static_cast<double>(k_),
                 n = static_cast<double>(n_);
    c.flops(2.0 * rows * k * n);
    c.bytes(sizeof(float) * (rows * k + k * n + n + rows * n));
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    check_input(x);
    const int64_t rows = sy::numel(x) / k_;
    for (size_t j = 0; j < sizes_.size(); ++j) {
      const DLTensor& out = r.output(j);
      if (sy::shape_of(out) != out_shape(x, j) || !sy::is_contiguous(out))
        throw sy::Error("output " + std::to_string(j) + " is " + str(sy::shape_of(out)) + ", expected contiguous " +
                            str(out_shape(x, j)),
                        SY_ERROR_INTERNAL);
    }
    if (rows == 0) return;
    std::vector<float> compact;  // rows one stride apart: a contiguous input, else a copy
    const float* a = sy::data<const float>(x);
    if (!sy::is_contiguous(x)) {
      compact.resize(static_cast<size_t>(rows * k_));
      sy_common::gather_compact(x, compact.data());
      a = compact.data();
    }
    if (rows * n_ <= kWholeProductFloats) {
      // Small: one GEMM (one hand-over of the team) into scratch, then each piece's columns
      // copied out while still in cache.
      thread_local std::vector<float> product;  // per thread: runs of one instance may overlap
      if (product.size() < static_cast<size_t>(rows * n_)) product.resize(static_cast<size_t>(rows * n_));
      whole_->gemm(a, rows, k_, k_, n_, w_strides_[1], w_strides_[0], product.data(), PackedB::Post{bias_, Act::None});
      for (size_t j = 0; j < sizes_.size(); ++j) {
        float* out = sy::data<float>(r.output(j));
        for (int64_t i = 0; i < rows; ++i)
          std::memcpy(out + i * sizes_[j], product.data() + i * n_ + starts_[j],
                      sizeof(float) * static_cast<size_t>(sizes_[j]));
      }
      return;
    }
    for (size_t j = 0; j < sizes_.size(); ++j) {
      // B = weight^T restricted to this piece's rows of weight.
      const PackedB::Post post{bias_ != nullptr ? bias_ + starts_[j] : nullptr, Act::None};
      pieces_[j]->gemm(a, rows, k_, k_, sizes_[j], w_strides_[1], w_strides_[0], sy::data<float>(r.output(j)), post);
    }
  }

 private:
  // create false: parse and check only (supports()); true: also pack each piece's weight.
  LinearChunkKernel(const sy::Node& node, bool create) {
    check_attributes(node, {"post.chunks", "post.dim"});
    const DLTensor* x = input_at(node.inputs, node.num_inputs, 0);
    const DLTensor* w = input_at(node.inputs, node.num_inputs, 1);
    const DLTensor* b = input_at(node.inputs, node.num_inputs, 2);
    if (node.num_inputs < 2 || node.num_inputs > 3 || x == nullptr || w == nullptr)
      throw sy::Unsupported("expected input, weight and (optional) bias as inputs (" + std::to_string(node.num_inputs) +
                            " given)");
    for (const DLTensor* t : {x, w, b})
      if (t != nullptr && !is_f32(*t)) throw sy::Unsupported("float32 CPU tensors only (the fused linear+chunk)");
    if (w->data == nullptr || (b != nullptr && b->data == nullptr))
      throw sy::Unsupported("a weight or bias fed at run time (the fused linear+chunk packs constants)");
    if (w->ndim != 2) throw sy::Unsupported("the weight is not 2-D");
    n_ = w->shape[0];
    k_ = w->shape[1];
    if (n_ == 0 || k_ == 0) throw sy::Unsupported("a weight with no elements (left to linear)");
    if (b != nullptr && (b->ndim != 1 || b->shape[0] != n_ || !sy::is_contiguous(*b)))
      throw sy::Unsupported("a bias that is not one contiguous row of the weight's outputs (left to linear)");
    check_input(*x);
    // Only a split of the features: chunk's dim must be the output's last.
    const int64_t ndim = x->ndim, dim = node.attrs.i("post.dim", 0);
    if (dim != -1 && dim != ndim - 1)
      throw sy::Unsupported("chunk along dim " + std::to_string(dim) + ", not the features (left unfused)");
    sy::declining([&] { sizes_ = chunk_sizes(n_, node.attrs.i("post.chunks")); });
    if (node.num_outputs != sizes_.size())
      throw sy::Unsupported("chunk makes " + std::to_string(sizes_.size()) + " pieces, the node has " +
                            std::to_string(node.num_outputs) + " outputs");
    for (size_t j = 0; j < sizes_.size(); ++j) starts_.push_back(j == 0 ? 0 : starts_[j - 1] + sizes_[j - 1]);
    for (int d = 0; d < 2; ++d) w_strides_[d] = sy::strides_of(*w)[static_cast<size_t>(d)];
    if (!create) return;
    bias_ = b ? sy::data<const float>(*b) : nullptr;
    const float* weight = sy::data<const float>(*w);
    compute_ = sy_compute::choose(node.attrs);
    whole_ = std::make_shared<PackedB>(weight, compute_.bf16);
    for (int64_t start : starts_)
      pieces_.push_back(std::make_shared<PackedB>(weight + start * w_strides_[0], compute_.bf16));
  }

  void check_input(const DLTensor& x) const {
    if (!is_f32(x)) throw sy::Error("input is not a float32 CPU tensor");
    if (x.ndim < 1 || x.shape[x.ndim - 1] != k_)
      throw sy::Error("input " + str(sy::shape_of(x)) + " does not end in the weight's " + std::to_string(k_) +
                      " features");
  }

  Shape out_shape(const DLTensor& x, size_t piece) const {
    Shape s = sy::shape_of(x);
    s.back() = sizes_[piece];
    return s;
  }

  int64_t k_ = 0, n_ = 0;
  int64_t w_strides_[2] = {0, 0};
  Shape sizes_, starts_;                          // each piece's features, and where it starts in the weight's rows
  const float* bias_ = nullptr;                   // a constant: the host keeps it until destroy
  std::shared_ptr<PackedB> whole_;                // the whole weight (small products); thread-safe
  std::vector<std::shared_ptr<PackedB>> pieces_;  // each piece's rows of it; thread-safe
  sy_compute::Choice compute_;                    // the "@compute" option's answer
};

// bmm(self, mat2).transpose(d0, d1).contiguous() with {d0, d1} = {0, 1}: a [M, B, N]
// result whose product b is a [M, N] matrix with row stride B * N, starting at b * N.
struct BmmTransposeOp {
  static inline const std::vector<std::string> kNames{"self", "mat2"};
  static inline const std::vector<bool> kOptional{false, false};
  static inline const std::vector<size_t> kOperands{0, 1};
  static std::vector<std::string> attributes(const sy::Node&) {
    return {"post.dim0", "post.dim1", "post2.memory_format"};
  }
  explicit BmmTransposeOp(const sy::Node& node) {
    const int64_t d0 = wrap(node.attrs.i("post.dim0")), d1 = wrap(node.attrs.i("post.dim1"));
    if (std::min(d0, d1) != 0 || std::max(d0, d1) != 1)
      throw sy::Unsupported("a transpose of dims " + std::to_string(d0) + " and " + std::to_string(d1) +
                            " (only the batch and the rows are fused)");
    if (node.attrs.i("post2.memory_format", 0) != 0)  // c10::MemoryFormat::Contiguous
      throw sy::Unsupported("contiguous to a memory format other than contiguous_format");
  }

  MatmulPlan plan(const Args& args) const {
    const View& a = need(args, 0, kNames);
    const View& b = need(args, 1, kNames);
    if (a.dim() != 3 || b.dim() != 3 || a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1])
      throw sy::Error("bmm of " + str(a.shape) + " and " + str(b.shape) + ": expected [B, M, K] and [B, K, N]");
    MatmulPlan p = plan_matmul(a, b);
    const int64_t batch = p.out[0], m = p.out[1], n = p.out[2];
    p.out = {m, batch, n};
    p.gemm.c_rs = batch * n;
    p.gemm.c_bs = {n};
    return p;
  }

 private:
  static int64_t wrap(int64_t d) { return d < 0 ? d + 3 : d; }  // bmm's result is 3-D
};

}  // namespace

void add_head_kernels(KernelList& list) {
  list.push_back(sy::kernel<LinearChunkKernel>("aten::linear+aten::chunk", "linalg", {sy::kFloat32}));
  list.push_back(
      sy::kernel<GemmKernel<BmmTransposeOp>>("aten::bmm+aten::transpose+aten::contiguous", "linalg", dtypes()));
}

}  // namespace sy_linalg
