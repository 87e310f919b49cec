// conv plugin: inference batch norm,
//   aten::batch_norm(input, weight?, bias?, running_mean, running_var, training=False,
//                    momentum, eps, cudnn_enabled)
// and "aten::batch_norm+aten::relu" (the host's fusion convention), on float32 input of
// rank 2 or more ([N, C, ...]). The statistics become a per-channel scale and shift, as
// ATen computes them (scale = weight / sqrt(var + eps), shift = bias - mean * scale), once
// at create when they are constants (the usual case) and per run otherwise; a loop of the
// plugin's own then writes x * scale + shift (then max(., 0), keeping NaN, as ATen's relu).
//
// A 4-D input may come in the plugin's storages (formats.hpp) and the output may stay in
// nhwc, as for the squeeze-excitation scale (scale_kernel.hpp): a batch norm between a
// concat and a convolution (DenseNet's norm1 + relu1 before conv1) hands the convolution
// its layout instead of NCHW. Another layout in than out is one oneDNN reorder into the
// output first, then the loop over the output in place. Option `layout = "plain"` keeps
// input and output NCHW.
//
// Declined (sy::Unsupported, so the aten plugin takes it): training=True, dtypes other
// than float32 (statistics too), inputs of rank below 2, absent running statistics,
// statistics that are not [C].
#pragma once

#include "conv_common.hpp"

#include <array>

namespace syconv {

class BatchNormKernel {
 public:
  explicit BatchNormKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

  // input, weight, bias, running_mean, running_var of one call (NULL: absent; the four
  // after the input may be tensor attributes of those names instead of inputs).
  using Args = std::array<const DLTensor*, 5>;
  static Args args_of(const std::array<const DLTensor*, 4>& attr_tensors, const DLTensor* const* inputs, size_t n);

 private:
  struct Prepared;
  // The reorder of `x` (laid out as x_md) into out's layout, built once per pair.
  std::shared_ptr<const Prepared> prepare(const dnnl::memory::desc& x_md, const dnnl::memory::desc& out_md);

  bool relu_ = false;  // "+aten::relu"
  float eps_ = 1e-5f;
  bool own_layouts_ = true;                        // option "@layout"
  std::array<const DLTensor*, 4> attr_tensors_{};  // weight, bias, running_mean, running_var as attributes
  bool folded_ = false;                            // the statistics were constants: scale_ and shift_ hold them
  std::vector<float> scale_, shift_;
  ShapeCache<Prepared> cache_;
};

// The statistics folded into a per-channel scale and shift, as ATen computes them (also
// for the concatenation that feeds a batch norm, cat_norm_kernel.hpp).
void fold(const BatchNormKernel::Args& a, float eps, int64_t channels, float* scale, float* shift);

}  // namespace syconv
