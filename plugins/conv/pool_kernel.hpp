// conv plugin: float32 2-D pooling on oneDNN (input [N, C, H, W] or unbatched [C, H, W]).
//
//   aten::max_pool2d(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
//   aten::avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False,
//                    count_include_pad=True, divisor_override=None)
//   aten::adaptive_avg_pool2d(self, output_size)
//
// A float32 4-D input may come in the plugin's storages (formats.hpp, nChw16c or nhwc),
// and the output may stay in nhwc, so that pooling between convolutions (a ResNet stem)
// costs no reorder (max pooling into nhwc runs on the plugin's own loop,
// max_pool_loop.cpp); option `layout = "plain"` keeps both NCHW.
//
// Declined (sy::Unsupported, so the host falls back): avg_pool2d with ceil_mode and
// count_include_pad where a last window runs past the padded input (ATen then divides by
// a smaller count than oneDNN would), and adaptive_avg_pool2d whose output size does not
// divide the input size (ATen's windows then vary in size and overlap).
#pragma once

#include "conv_common.hpp"

namespace syconv {

class PoolKernel {
 public:
  explicit PoolKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

  enum class Kind { Max, Avg, AdaptiveAvg };
  struct Params {
    Kind kind = Kind::Max;
    Dims kernel, stride, padding, dilation{1, 1}, output_size;
    bool ceil_mode = false, count_include_pad = true;
    int64_t divisor = 0;      // divisor_override; 0 = none
    bool own_layouts = true;  // option "@layout": input and output may be in the storages
  };
  struct Geometry {
    Dims src, src_strides, dst;                   // oneDNN dims (always batched)
    Dims out_shape;                               // what the node returns
    Dims kernel, stride, dilation, pad_l, pad_r;  // oneDNN: dilation 0 = none
  };

 private:
  struct Prepared;
  std::shared_ptr<const Prepared> prepare(const DLTensor& x, const DLTensor* out, SY_StorageIndex in = SY_STORAGE_HOST,
                                          SY_StorageIndex to = SY_STORAGE_HOST);

  Params params_;
  ShapeCache<Prepared> cache_;
};

PoolKernel::Params parse_pool(const sy::Node& node);
// The pooling attributes of `kind`, each named `prefix` + its ATen name ("post2." after a
// fused convolution and relu, conv_pool.hpp); Unsupported for values it cannot run.
PoolKernel::Params pool_params(const sy::Attrs& attrs, PoolKernel::Kind kind, const std::string& prefix);
PoolKernel::Geometry pool_geometry(const PoolKernel::Params& p, const DLTensor& x);
// Max pooling of `x` in storage `in` into compact nhwc `y` by the plugin's own loop (NaN
// kept); false, with nothing written, unless `in` is nChw16c or nhwc (max_pool_loop.cpp).
bool max_pool_into_nhwc(const PoolKernel::Geometry& g, const float* x, SY_StorageIndex in, float* y);
// Output rows [begin, end) of one image's max pooling by the same loop, from its input rows
// [first, ...) in nhwc at `x` ([rows, W, C], holding every tap of those windows), then
// relu when `relu` (NaN kept by both): pixel (oh, ow) channel c goes to
// y[oh * ys[0] + ow * ys[1] + c * ys[2]]. For a convolution fused with it (conv_pool.hpp).
void max_pool_rows(const PoolKernel::Geometry& g, const float* x, int64_t first, int64_t begin, int64_t end, bool relu,
                   float* y, const int64_t ys[3]);

}  // namespace syconv
