// cuda plugin, internal: convolution and pooling arguments and geometry with ATen's rules
// (pure host code; the unit tests check it). Everything is expressed as a 2-D problem:
// conv1d's length is a width under a height of 1.
#pragma once

#include <switchyard/conv_attributes.hpp>
#include <switchyard/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sycuda {

using Shape = std::vector<int64_t>;

struct ConvParams {
  std::string producer;             // "aten::conv2d" (a fused op's first half)
  int spatial = 0;                  // 1 or 2 (conv1d/conv2d); 0: from the weight's rank
  bool unbatched_ok = false;        // conv1d/conv2d accept an input without batch dim
  std::string pad_mode;             // "", "same" or "valid"
  Shape stride, padding, dilation;  // empty: absent (defaults apply)
  int64_t groups = 1;
};

// A node's attributes (sy::conv_attributes: read and checked as the conv plugin does);
// sy::Unsupported naming what it cannot do.
ConvParams parse_conv(const std::string& producer, const sy::Attrs& attrs);

// One call's shapes as a 2-D NCHW problem.
struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t k = 0, r = 0, s = 0;         // output channels, kernel height and width
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t groups = 1;
  int64_t oh = 0, ow = 0;  // output
  Shape out_shape;         // what the node returns (no batch dim when unbatched)
};
// sy::Error naming what does not fit; sy::Unsupported for what cuDNN's API cannot express
// (3-D convolution, asymmetric "same" padding).
ConvGeometry conv_geometry(const ConvParams& p, const Shape& x, const Shape& w, const Shape* bias);

struct PoolParams {
  bool max = true;
  Shape kernel, stride, padding, dilation;
  bool ceil_mode = false, count_include_pad = true;
};
const std::vector<std::string>& pool_attribute_names(bool max);
PoolParams parse_pool(bool max, const sy::Attrs& attrs);

struct PoolGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  Shape out_shape;
};
// ATen's output size; Unsupported where cuDNN's pooling (floor division, no dilation) would
// give another one.
PoolGeometry pool_geometry(const PoolParams& p, const Shape& x);

}  // namespace sycuda
