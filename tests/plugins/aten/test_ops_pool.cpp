// Conformance cases: 3-d and fractional pooling, unpooling, resampling (every upsample
// op, grid sampling), padding, channel shuffle, patches (im2col / col2im).
#include "aten_harness.hpp"

using namespace sy_test;

namespace {
std::vector<at::Tensor> pair(std::tuple<at::Tensor, at::Tensor> r) { return {std::get<0>(r), std::get<1>(r)}; }
at::Tensor channels_last_3d(at::Tensor t) { return t.contiguous(at::MemoryFormat::ChannelsLast3d); }
}  // namespace

// ---- pooling
OP_CASE("aten::max_pool3d", "stride_padding_ceil") {
  at::Tensor x = rnd(dt, {1, 2, 5, 6, 6});
  check("aten::max_pool3d", {x}, Attrs().i("kernel_size", 2), at::max_pool3d(x, 2));
  check("aten::max_pool3d", {channels_last_3d(x)},
        Attrs().i("kernel_size", 3).i("stride", 2).i("padding", 1).b("ceil_mode", true),
        at::max_pool3d(x, 3, 2, 1, 1, true));
}
OP_CASE("aten::max_pool3d_with_indices", "indices") {
  at::Tensor x = rnd(dt, {1, 2, 4, 4, 4});
  check("aten::max_pool3d_with_indices", {x}, Attrs().i("kernel_size", 2), pair(at::max_pool3d_with_indices(x, 2)));
}
OP_CASE("aten::avg_pool3d", "count_include_pad_divisor") {
  at::Tensor x = rnd(dt, {1, 2, 5, 5, 5});
  check("aten::avg_pool3d", {x}, Attrs().i("kernel_size", 2), at::avg_pool3d(x, 2));
  if (dt == at::kLong) return;  // padding with a divisor only makes sense for floats
  check("aten::avg_pool3d", {x},
        Attrs().i("kernel_size", 3).i("stride", 2).i("padding", 1).b("count_include_pad", false),
        at::avg_pool3d(x, 3, 2, 1, false, false));
  check("aten::avg_pool3d", {x}, Attrs().i("kernel_size", 2).i("divisor_override", 3),
        at::avg_pool3d(x, 2, {}, 0, false, true, 3));
}
OP_CASE("aten::adaptive_avg_pool3d", "uneven") {
  at::Tensor x = rnd(dt, {2, 3, 5, 7, 6});
  check("aten::adaptive_avg_pool3d", {x}, Attrs().ints("output_size", {2, 3, 4}),
        at::adaptive_avg_pool3d(x, {2, 3, 4}));
  check("aten::adaptive_avg_pool3d", {channels_last_3d(x)}, Attrs().i("output_size", 1),
        at::adaptive_avg_pool3d(x, {1, 1, 1}));
}
OP_CASE("aten::adaptive_max_pool3d", "uneven") {
  at::Tensor x = rnd(dt, {1, 2, 5, 7, 6});
  check("aten::adaptive_max_pool3d", {x}, Attrs().ints("output_size", {2, 3, 4}),
        pair(at::adaptive_max_pool3d(x, {2, 3, 4})));
}
OP_CASE("aten::max_unpool2d", "roundtrip", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {2, 3, 6, 6});
  auto [v, i] = at::max_pool2d_with_indices(x, {2, 2});
  check("aten::max_unpool2d", {v, i}, Attrs().ints("output_size", {6, 6}), at::max_unpool2d(v, i, {6, 6}));
  check("aten::max_unpool2d", {v, i}, Attrs().ints("output_size", {7, 7}), at::max_unpool2d(v, i, {7, 7}));
}
OP_CASE("aten::max_unpool3d", "roundtrip", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {1, 2, 4, 4, 4});
  auto [v, i] = at::max_pool3d_with_indices(x, {2, 2, 2});
  check("aten::max_unpool3d", {v, i},
        Attrs().ints("output_size", {4, 4, 4}).ints("stride", {2, 2, 2}).ints("padding", {0, 0, 0}),
        at::max_unpool3d(v, i, {4, 4, 4}, {2, 2, 2}, {0, 0, 0}));
}
OP_CASE("aten::fractional_max_pool2d", "given_samples") {
  at::Tensor x = rnd(dt, {2, 3, 9, 9}), s = at::rand({2, 3, 2}).to(dt);
  check("aten::fractional_max_pool2d", {x, s}, Attrs().i("kernel_size", 2).ints("output_size", {4, 5}),
        pair(at::fractional_max_pool2d(x, {2, 2}, {4, 5}, s)));
}
OP_CASE("aten::fractional_max_pool3d", "given_samples") {
  at::Tensor x = rnd(dt, {1, 2, 7, 7, 7}), s = at::rand({1, 2, 3}).to(dt);
  check("aten::fractional_max_pool3d", {x, s}, Attrs().i("kernel_size", 2).i("output_size", 3),
        pair(at::fractional_max_pool3d(x, {2, 2, 2}, {3, 3, 3}, s)));
}

// ---- padding, shuffles, patches
OP_CASE("aten::reflection_pad3d", "asymmetric") {
  at::Tensor x = rnd(dt, {1, 2, 3, 4, 5});
  check("aten::reflection_pad3d", {x}, Attrs().ints("padding", {1, 2, 0, 1, 2, 1}),
        at::reflection_pad3d(x, {1, 2, 0, 1, 2, 1}));
}
OP_CASE("aten::replication_pad1d", "asymmetric") {
  at::Tensor x = rnd(dt, {2, 3, 5}).transpose(1, 2).contiguous().transpose(1, 2);
  check("aten::replication_pad1d", {x}, Attrs().ints("padding", {2, 1}), at::replication_pad1d(x, {2, 1}));
}
OP_CASE("aten::replication_pad3d", "asymmetric") {
  at::Tensor x = rnd(dt, {1, 2, 3, 4, 5});
  check("aten::replication_pad3d", {x}, Attrs().ints("padding", {1, 0, 2, 1, 0, 3}),
        at::replication_pad3d(x, {1, 0, 2, 1, 0, 3}));
}
OP_CASE("aten::channel_shuffle", "groups") {
  at::Tensor x = rnd(dt, {2, 6, 3, 3});
  check("aten::channel_shuffle", {x}, Attrs().i("groups", 3), at::channel_shuffle(x, 3));
}
OP_CASE("aten::native_channel_shuffle", "groups") {
  at::Tensor x = rnd(dt, {2, 6, 3, 3});
  check("aten::native_channel_shuffle", {x}, Attrs().i("groups", 2), at::native_channel_shuffle(x, 2));
  // LibTorch's own kernel would stop the process here (a division by zero).
  check("aten::native_channel_shuffle", {rnd(dt, {0, 6, 3, 3})}, Attrs().i("groups", 2), rnd(dt, {0, 6, 3, 3}));
}
OP_CASE("aten::im2col", "dilation_padding_stride") {
  at::Tensor x = rnd(dt, {2, 3, 7, 8});
  Attrs a = Attrs().ints("kernel_size", {3, 2}).ints("dilation", {1, 2}).ints("padding", {1, 0}).ints("stride", {2, 1});
  check("aten::im2col", {x}, a, at::im2col(x, {3, 2}, {1, 2}, {1, 0}, {2, 1}));
}
OP_CASE("aten::col2im", "inverse_layout") {
  at::Tensor cols = rnd(dt, {2, 3 * 4, 9});
  Attrs a = Attrs()
                .ints("output_size", {4, 4})
                .ints("kernel_size", {2, 2})
                .ints("dilation", {1, 1})
                .ints("padding", {0, 0})
                .ints("stride", {1, 1});
  check("aten::col2im", {cols}, a, at::col2im(cols, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}));
}

// ---- grid sampling
OP_CASE("aten::grid_sampler", "modes_padding_align") {
  at::Tensor x = rnd(dt, {2, 3, 5, 6}), grid = (at::rand({2, 4, 7, 2}) * 2.4 - 1.2).to(dt);
  for (int64_t mode : {0, 1, 2})
    for (int64_t pad : {0, 1, 2})
      for (bool align : {false, true}) {
        SCOPED_TRACE(std::to_string(mode) + "/" + std::to_string(pad) + "/" + std::to_string(align));
        check("aten::grid_sampler", {x, grid},
              Attrs().i("interpolation_mode", mode).i("padding_mode", pad).b("align_corners", align),
              at::grid_sampler(x, grid, mode, pad, align));
      }
}
OP_CASE("aten::grid_sampler", "volumetric") {
  at::Tensor x = rnd(dt, {1, 2, 4, 5, 6}), grid = (at::rand({1, 3, 3, 3, 3}) * 2 - 1).to(dt);
  check("aten::grid_sampler", {x, grid},
        Attrs().i("interpolation_mode", 0).i("padding_mode", 1).b("align_corners", false),
        at::grid_sampler(x, grid, 0, 1, false));
}
OP_CASE("aten::grid_sampler_2d", "bilinear") {
  at::Tensor x = rnd(dt, {1, 2, 5, 5}), grid = (at::rand({1, 3, 3, 2}) * 2 - 1).to(dt);
  check("aten::grid_sampler_2d", {x, grid},
        Attrs().i("interpolation_mode", 0).i("padding_mode", 0).b("align_corners", true),
        at::grid_sampler_2d(x, grid, 0, 0, true));
}
OP_CASE("aten::grid_sampler_3d", "nearest") {
  at::Tensor x = rnd(dt, {1, 2, 4, 4, 4}), grid = (at::rand({1, 2, 2, 2, 3}) * 2 - 1).to(dt);
  check("aten::grid_sampler_3d", {x, grid},
        Attrs().i("interpolation_mode", 1).i("padding_mode", 2).b("align_corners", false),
        at::grid_sampler_3d(x, grid, 1, 2, false));
}
OP_CASE("aten::affine_grid_generator", "2d_3d") {
  at::Tensor t2 = rnd(dt, {2, 2, 3}), t3 = rnd(dt, {1, 3, 4});
  check("aten::affine_grid_generator", {t2}, Attrs().ints("size", {2, 3, 4, 5}).b("align_corners", false),
        at::affine_grid_generator(t2, {2, 3, 4, 5}, false));
  check("aten::affine_grid_generator", {t3}, Attrs().ints("size", {1, 1, 2, 3, 4}).b("align_corners", true),
        at::affine_grid_generator(t3, {1, 1, 2, 3, 4}, true));
}

// ---- upsampling: the fixed-size overload and the .vec one (size or scale factors)
OP_CASE("aten::upsample_nearest1d", "size_and_scale") {
  at::Tensor x = rnd(dt, {2, 3, 5});
  check("aten::upsample_nearest1d", {x}, Attrs().ints("output_size", {9}), at::upsample_nearest1d(x, {9}));
  check("aten::upsample_nearest1d", {x}, Attrs().none("output_size").floats("scale_factors", {2.5}),
        at::upsample_nearest1d(x, c10::nullopt, at::ArrayRef<double>{2.5}));
}
OP_CASE("aten::upsample_nearest3d", "size_and_scale") {
  at::Tensor x = rnd(dt, {1, 2, 2, 3, 4});
  check("aten::upsample_nearest3d", {x}, Attrs().ints("output_size", {3, 5, 6}), at::upsample_nearest3d(x, {3, 5, 6}));
  check("aten::upsample_nearest3d", {x}, Attrs().none("output_size").floats("scale_factors", {2, 2, 2}),
        at::upsample_nearest3d(x, c10::nullopt, at::ArrayRef<double>{2, 2, 2}));
}
OP_CASE("aten::_upsample_nearest_exact1d", "scale") {
  at::Tensor x = rnd(dt, {2, 3, 5});
  check("aten::_upsample_nearest_exact1d", {x}, Attrs().ints("output_size", {7}).none("scale_factors"),
        at::_upsample_nearest_exact1d(x, at::IntArrayRef{7}, c10::nullopt));
}
OP_CASE("aten::_upsample_nearest_exact2d", "size_and_scale") {
  at::Tensor x = rnd(dt, {1, 2, 4, 5});
  check("aten::_upsample_nearest_exact2d", {x}, Attrs().ints("output_size", {7, 3}),
        at::_upsample_nearest_exact2d(x, {7, 3}));
  check("aten::_upsample_nearest_exact2d", {x}, Attrs().none("output_size").floats("scale_factors", {1.5, 2}),
        at::_upsample_nearest_exact2d(x, c10::nullopt, at::ArrayRef<double>{1.5, 2}));
}
OP_CASE("aten::_upsample_nearest_exact3d", "size") {
  at::Tensor x = rnd(dt, {1, 2, 2, 3, 4});
  check("aten::_upsample_nearest_exact3d", {x}, Attrs().ints("output_size", {3, 4, 5}).none("scale_factors"),
        at::_upsample_nearest_exact3d(x, at::IntArrayRef{3, 4, 5}, c10::nullopt));
}
OP_CASE("aten::upsample_linear1d", "align_corners") {
  at::Tensor x = rnd(dt, {2, 3, 5});
  check("aten::upsample_linear1d", {x}, Attrs().ints("output_size", {9}).b("align_corners", true),
        at::upsample_linear1d(x, {9}, true));
  check("aten::upsample_linear1d", {x},
        Attrs().none("output_size").b("align_corners", false).floats("scale_factors", {2}),
        at::upsample_linear1d(x, c10::nullopt, false, at::ArrayRef<double>{2}));
}
OP_CASE("aten::upsample_bicubic2d", "align_corners") {
  at::Tensor x = rnd(dt, {1, 2, 4, 5});
  check("aten::upsample_bicubic2d", {x}, Attrs().ints("output_size", {7, 8}).b("align_corners", false),
        at::upsample_bicubic2d(x, {7, 8}, false));
  check("aten::upsample_bicubic2d", {x},
        Attrs().none("output_size").b("align_corners", true).floats("scale_factors", {2, 2}),
        at::upsample_bicubic2d(x, c10::nullopt, true, at::ArrayRef<double>{2, 2}));
}
OP_CASE("aten::upsample_trilinear3d", "align_corners") {
  at::Tensor x = rnd(dt, {1, 2, 2, 3, 4});
  check("aten::upsample_trilinear3d", {x}, Attrs().ints("output_size", {3, 5, 6}).b("align_corners", true),
        at::upsample_trilinear3d(x, {3, 5, 6}, true));
  check("aten::upsample_trilinear3d", {x},
        Attrs().none("output_size").b("align_corners", false).floats("scale_factors", {2, 1.5, 2}),
        at::upsample_trilinear3d(x, c10::nullopt, false, at::ArrayRef<double>{2, 1.5, 2}));
}
OP_CASE("aten::_upsample_bilinear2d_aa", "downscale") {
  at::Tensor x = rnd(dt, {1, 2, 9, 8});
  check("aten::_upsample_bilinear2d_aa", {x},
        Attrs().ints("output_size", {4, 3}).b("align_corners", false).none("scale_factors"),
        at::_upsample_bilinear2d_aa(x, at::IntArrayRef{4, 3}, false, c10::nullopt));
}
OP_CASE("aten::_upsample_bicubic2d_aa", "downscale") {
  at::Tensor x = rnd(dt, {1, 2, 9, 8});
  check("aten::_upsample_bicubic2d_aa", {x},
        Attrs().ints("output_size", {4, 3}).b("align_corners", false).none("scale_factors"),
        at::_upsample_bicubic2d_aa(x, at::IntArrayRef{4, 3}, false, c10::nullopt));
}
