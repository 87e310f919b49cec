// conv plugin: a channel concatenation read only by an inference batch norm,
//   "aten::cat+aten::batch_norm" and "aten::cat+aten::batch_norm+aten::relu"
// (the host's fusion convention: the inputs are the concatenated parts, then the batch
// norm's weight, bias, running_mean and running_var; its attributes carry "post.").
// DenseNet concatenates every earlier feature map before each layer's norm1 + relu1: at
// batch 1 the host places the parts in one buffer and the cat copies nothing, but at a
// larger batch a part is not one run of the output's bytes, and the cat copied every part
// once more per layer. Here each part is normalised straight from where its producer
// wrote it into its channels of the output, so the concatenation is never written.
//
// [N, C_i, H, W] float32 parts along dim 1, in host memory (any strides) or nhwc; the
// output in nhwc or host memory. A part laid out otherwise than the output (channels
// apart in one, together in the other) is first reordered into its channels of the output
// by oneDNN, then scaled there in place. Declined (the cat and the batch norm then run apart):
// another dim or rank, training=True, statistics that are not [sum C_i], option
// `layout = "plain"`.
#pragma once

#include "batch_norm_kernel.hpp"

#include <array>
#include <vector>

namespace syconv {

class CatNormKernel {
 public:
  explicit CatNormKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

 private:
  struct Prepared;
  // The reorder of a part laid out as `from` into its channels of the output (`to`).
  std::shared_ptr<const Prepared> prepare(const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  // A part ([N, C_i, H, W] at `src`) put into its channels of the output (at `slice`).
  void reorder_part(const float* src, const Dims& src_strides, const Dims& dims, float* slice, const Dims& out_strides);

  bool relu_ = false;  // "+aten::relu"
  float eps_ = 1e-5f;
  std::array<const DLTensor*, 4> attr_tensors_{};  // "post.weight", ... given as attributes
  size_t stat_inputs_ = 4;                         // the statistics that come as inputs, after the parts
  bool folded_ = false;                            // constant statistics: scale_ and shift_ hold them
  std::vector<float> scale_, shift_;
  ShapeCache<Prepared> cache_;
};

}  // namespace syconv
