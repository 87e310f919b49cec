// conv plugin: when a convolution runs by Winograd's algorithm, oneDNN's F(2x2,3x3) and
// F(4x4,3x3) kernels, which do a 3x3 convolution in about half the time of the direct one
// on AVX-512 (docs/benchmarks-history.md, 3x3 convolutions by Winograd).
//
// Winograd's transforms mix each input tile into every output of its tile, so in float32:
// - a NaN or an infinity would reach outputs that ATen's convolution keeps finite: the
//   kernel checks its input first (finite_memo.hpp spares most scans) and leaves an input
//   that is not finite to the direct convolution;
// - a huge finite value could overflow in the transforms where the direct sum does not: the
//   input must stay below 2^64 and the constant weights below 2^16 (with at most 2^16 input
//   channels, every intermediate stays below 2^112);
// - rounding: F(2x2,3x3) is as close to the exact result as the direct convolution (RMS
//   error 5e-8 against 7e-8 on outputs of order 1); F(4x4,3x3) doubles it, and took
//   Inception-v3's logits past the parity bound (1.5e-3 against 1.35e-3). So the default,
//   option winograd = "2x2", takes F(2x2,3x3) alone, one batch chunk at a time where oneDNN
//   would pick F(4x4,3x3) for the whole batch; "4x4" lets it pick; "off" (or false) keeps
//   the direct convolution everywhere.
#pragma once

#include "conv_kernel.hpp"

namespace syconv {

// max_exponent() bounds (exponent fields) for the input and for the constant weights.
constexpr uint32_t kWinogradInputBelow = (127u + 64u) << 23;    // |x| < 2^64
constexpr uint32_t kWinogradWeightsBelow = (127u + 16u) << 23;  // |w| < 2^16

// Shapes that go to Winograd: 2-D, 3x3, stride 1, undilated, ungrouped, at most 2^16 input
// channels, and an output of at least 14x14. Below that it was not faster: 512 channels at
// 7x7 took 3.5 ms against 3.2 direct at batch 8 (0.30 against 0.38 at batch 1, a wash in
// the network). oneDNN may still have no kernel for the channel counts: then direct.
inline bool winograd_shape(const ConvKernel::Geometry& g) {
  constexpr int64_t kMinOutputSide = 14;
  return g.src.size() == 4 && g.wts.size() == 4 && g.wts[1] <= (int64_t{1} << 16) && g.wts[2] == 3 && g.wts[3] == 3 &&
         g.stride == Dims{1, 1} && g.dilation == Dims{0, 0} && g.dst[2] >= kMinOutputSide && g.dst[3] >= kMinOutputSide;
}

// The config option `winograd` of a node: the largest tile it allows, 2 ("2x2" or true, the
// default), 4 ("4x4"), or 0 ("off" or false). Another value is an error.
int winograd_option(const sy::Attrs& attrs);

}  // namespace syconv
