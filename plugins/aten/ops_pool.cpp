// aten plugin: pooling, padding, resampling (upsampling, grid sampling), patches.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

}  // namespace

void register_pool_ops(Registry& r) {
  r.family("pool");
  r.def(
      "max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
      "int[1] dilation=[1], bool ceil_mode=False) -> Tensor",
      kF, [](const Call& c) { return at::max_pool1d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5)); });
  r.def(
      "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
      kF, [](const Call& c) { return at::max_pool2d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5)); });
  r.def(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
      kF, [](const Call& c) {
        return outs(at::max_pool2d_with_indices(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5)));
      });
  r.def(
      "avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
      "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
      kF | bit(at::kLong),
      [](const Call& c) { return at::avg_pool1d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.b(4), c.b(5)); });
  r.def(
      "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
      kF | bit(at::kLong),
      [](const Call& c) { return at::avg_pool2d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.b(4), c.b(5), c.oi(6)); });
  r.def("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor", kF,
        [](const Call& c) { return at::adaptive_avg_pool1d(c.t(0), c.ints(1)); });
  r.def("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", kF,
        [](const Call& c) { return at::adaptive_avg_pool2d(c.t(0), c.ints(1)); });
  r.def("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)", kF,
        [](const Call& c) { return outs(at::adaptive_max_pool1d(c.t(0), c.ints(1))); });
  r.def("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", kF,
        [](const Call& c) { return outs(at::adaptive_max_pool2d(c.t(0), c.ints(1))); });

  r.def(
      "max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
      "int[3] dilation=1, bool ceil_mode=False) -> Tensor",
      kF32_64,
      [](const Call& c) { return at::max_pool3d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5)); });
  r.def(
      "max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], "
      "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
      kF32_64, [](const Call& c) {
        return outs(at::max_pool3d_with_indices(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5)));
      });
  r.def(
      "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
      "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
      kF32_64 | bit(at::kLong),
      [](const Call& c) { return at::avg_pool3d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.b(4), c.b(5), c.oi(6)); });
  r.def("adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor", kF32_64,
        [](const Call& c) { return at::adaptive_avg_pool3d(c.t(0), c.ints(1)); });
  r.def("adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)", kF32_64,
        [](const Call& c) { return outs(at::adaptive_max_pool3d(c.t(0), c.ints(1))); });
  r.def("max_unpool2d(Tensor self, Tensor<long> indices, int[2] output_size) -> Tensor", kF32_64,
        [](const Call& c) { return at::max_unpool2d(c.t(0), c.t(1), c.ints(2)); });
  r.def(
      "max_unpool3d(Tensor self, Tensor<long> indices, int[3] output_size, int[3] stride, "
      "int[3] padding) -> Tensor",
      kF32_64, [](const Call& c) { return at::max_unpool3d(c.t(0), c.t(1), c.ints(2), c.ints(3), c.ints(4)); });
  // The samples come in as an input (F.fractional_max_pool2d(_random_samples=...)), so the
  // result is deterministic.
  r.def(
      "fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, "
      "Tensor random_samples) -> (Tensor, Tensor)",
      kF32_64, [](const Call& c) { return outs(at::fractional_max_pool2d(c.t(0), c.ints(1), c.ints(2), c.t(3))); });
  r.def(
      "fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, "
      "Tensor random_samples) -> (Tensor, Tensor)",
      kF32_64, [](const Call& c) { return outs(at::fractional_max_pool3d(c.t(0), c.ints(1), c.ints(2), c.t(3))); });

  r.family("resample");
  r.def("reflection_pad3d(Tensor self, int[6] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::reflection_pad3d(c.t(0), c.ints(1)); });
  r.def("replication_pad1d(Tensor self, int[2] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::replication_pad1d(c.t(0), c.ints(1)); });
  r.def("replication_pad3d(Tensor self, int[6] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::replication_pad3d(c.t(0), c.ints(1)); });
  r.def("channel_shuffle(Tensor self, int groups) -> Tensor", kAll,
        [](const Call& c) { return at::channel_shuffle(c.t(0), c.i(1)); });
  // LibTorch 1.13's native_channel_shuffle divides by zero (SIGFPE) on an empty tensor.
  r.def("native_channel_shuffle(Tensor self, int groups) -> Tensor", kAll, [](const Call& c) {
    return c.t(0).numel() == 0 ? at::channel_shuffle(c.t(0), c.i(1)) : at::native_channel_shuffle(c.t(0), c.i(1));
  });
  r.def(
      "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> "
      "Tensor",
      kF, [](const Call& c) { return at::im2col(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4)); });
  r.def(
      "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
      "int[2] padding, int[2] stride) -> Tensor",
      kF, [](const Call& c) { return at::col2im(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.ints(5)); });
  // grid_sample: interpolation_mode 0/1/2 = bilinear/nearest/bicubic; padding_mode 0/1/2 =
  // zeros/border/reflection.
  r.def(
      "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
      "bool align_corners) -> Tensor",
      kF32_64, [](const Call& c) { return at::grid_sampler(c.t(0), c.t(1), c.i(2), c.i(3), c.b(4)); });
  r.def(
      "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
      "bool align_corners) -> Tensor",
      kF32_64, [](const Call& c) { return at::grid_sampler_2d(c.t(0), c.t(1), c.i(2), c.i(3), c.b(4)); });
  r.def(
      "grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
      "bool align_corners) -> Tensor",
      kF32_64, [](const Call& c) { return at::grid_sampler_3d(c.t(0), c.t(1), c.i(2), c.i(3), c.b(4)); });
  r.def("affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor", kF,
        [](const Call& c) { return at::affine_grid_generator(c.t(0), c.ints(1), c.b(2)); });
  r.def("constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor", kAll,
        [](const Call& c) { return at::constant_pad_nd(c.t(0), c.ints(1), c.scalar(2)); });
  r.def("pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor", kF,
        [](const Call& c) { return at::pad(c.t(0), c.ints(1), c.s(2), c.of(3)); });
  r.def("reflection_pad1d(Tensor self, int[2] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::reflection_pad1d(c.t(0), c.ints(1)); });
  r.def("reflection_pad2d(Tensor self, int[4] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::reflection_pad2d(c.t(0), c.ints(1)); });
  r.def("replication_pad2d(Tensor self, int[4] padding) -> Tensor", kF32_64,
        [](const Call& c) { return at::replication_pad2d(c.t(0), c.ints(1)); });
  r.def("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", kAll,
        [](const Call& c) { return at::pixel_shuffle(c.t(0), c.i(1)); });
  r.def("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", kAll,
        [](const Call& c) { return at::pixel_unshuffle(c.t(0), c.i(1)); });
  r.def(
      "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
      "float? scales_w=None) -> Tensor",
      kF | bit(at::kByte), [](const Call& c) { return at::upsample_nearest2d(c.t(0), c.ints(1), c.of(2), c.of(3)); });
  r.def(
      "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> "
      "Tensor",
      kF | bit(at::kByte), [](const Call& c) { return at::upsample_nearest2d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
      "float? scales_h=None, float? scales_w=None) -> Tensor",
      kF, [](const Call& c) { return at::upsample_bilinear2d(c.t(0), c.ints(1), c.b(2), c.of(3), c.of(4)); });
  r.def(
      "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF, [](const Call& c) { return at::upsample_bilinear2d(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });

  // Upsampling: each op with its fixed-size overload and the .vec one that F.interpolate
  // records (output_size or scale_factors, the other None).
  r.def("upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor", kF | bit(at::kByte),
        [](const Call& c) { return at::upsample_nearest1d(c.t(0), c.ints(1), c.of(2)); });
  r.def(
      "upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> "
      "Tensor",
      kF | bit(at::kByte), [](const Call& c) { return at::upsample_nearest1d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, "
      "float? scales_h=None, float? scales_w=None) -> Tensor",
      kF | bit(at::kByte),
      [](const Call& c) { return at::upsample_nearest3d(c.t(0), c.ints(1), c.of(2), c.of(3), c.of(4)); });
  r.def(
      "upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> "
      "Tensor",
      kF | bit(at::kByte), [](const Call& c) { return at::upsample_nearest3d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "_upsample_nearest_exact1d.vec(Tensor input, SymInt[]? output_size, "
      "float[]? scale_factors) -> Tensor",
      kF32_64 | bit(at::kByte),
      [](const Call& c) { return at::_upsample_nearest_exact1d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
      "float? scales_w=None) -> Tensor",
      kF32_64 | bit(at::kByte),
      [](const Call& c) { return at::_upsample_nearest_exact2d(c.t(0), c.ints(1), c.of(2), c.of(3)); });
  r.def(
      "_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, "
      "float[]? scale_factors) -> Tensor",
      kF32_64 | bit(at::kByte),
      [](const Call& c) { return at::_upsample_nearest_exact2d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "_upsample_nearest_exact3d.vec(Tensor input, SymInt[]? output_size, "
      "float[]? scale_factors) -> Tensor",
      kF32_64 | bit(at::kByte),
      [](const Call& c) { return at::_upsample_nearest_exact3d(c.t(0), c.oints(1), c.ofloats(2)); });
  r.def(
      "upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, "
      "float? scales=None) -> Tensor",
      kF, [](const Call& c) { return at::upsample_linear1d(c.t(0), c.ints(1), c.b(2), c.of(3)); });
  r.def(
      "upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF, [](const Call& c) { return at::upsample_linear1d(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });
  r.def(
      "upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, "
      "float? scales_h=None, float? scales_w=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::upsample_bicubic2d(c.t(0), c.ints(1), c.b(2), c.of(3), c.of(4)); });
  r.def(
      "upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF32_64, [](const Call& c) { return at::upsample_bicubic2d(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });
  r.def(
      "upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, "
      "float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor",
      kF, [](const Call& c) { return at::upsample_trilinear3d(c.t(0), c.ints(1), c.b(2), c.of(3), c.of(4), c.of(5)); });
  r.def(
      "upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF, [](const Call& c) { return at::upsample_trilinear3d(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });
  // F.interpolate(..., antialias=True)
  r.def(
      "_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF32_64, [](const Call& c) { return at::_upsample_bilinear2d_aa(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });
  r.def(
      "_upsample_bicubic2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor",
      kF32_64, [](const Call& c) { return at::_upsample_bicubic2d_aa(c.t(0), c.oints(1), c.b(2), c.ofloats(3)); });
}

}  // namespace sy_aten
