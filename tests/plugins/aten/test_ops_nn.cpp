// Conformance cases: matrix products, convolution, attention, softmax, normalization,
// pooling, dropout, embedding, padding, resampling.
#include "aten_harness.hpp"

#include <cmath>

using namespace sy_test;

// ---- linear algebra
OP_CASE("aten::linear", "bias_absent_null_strided") {
  at::Tensor x = rnd(dt, {2, 5, 3}), w = rnd(dt, {4, 3}), b = rnd(dt, {4});
  check("aten::linear", {x, w, b}, {}, at::linear(x, w, b));
  check("aten::linear", {x, w}, {}, at::linear(x, w));                // bias left off
  check("aten::linear", {x, w, at::Tensor()}, {}, at::linear(x, w));  // bias NULL
  at::Tensor wt = rnd(dt, {3, 4}).t();                                // strided weight
  check("aten::linear", {x, wt, b}, {}, at::linear(x, wt, b));
}
OP_CASE("aten::matmul", "batched_broadcast") {
  at::Tensor a = rnd(dt, {2, 3, 4}), b = rnd(dt, {4, 5}), v = rnd(dt, {4});
  check("aten::matmul", {a, b}, {}, at::matmul(a, b));
  check("aten::matmul", {a, v}, {}, at::matmul(a, v));
}
OP_CASE("aten::mm", "strided") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {5, 4}).t();
  check("aten::mm", {a, b}, {}, at::mm(a, b));
}
OP_CASE("aten::bmm", "strided") {
  at::Tensor a = rnd(dt, {2, 3, 4}), b = rnd(dt, {2, 5, 4}).transpose(1, 2);
  check("aten::bmm", {a, b}, {}, at::bmm(a, b));
}
OP_CASE("aten::mv", "plain") {
  at::Tensor a = rnd(dt, {3, 4}), v = rnd(dt, {4});
  check("aten::mv", {a, v}, {}, at::mv(a, v));
}
OP_CASE("aten::dot", "plain") {
  at::Tensor a = rnd(dt, {4}), b = rnd(dt, {4});
  check("aten::dot", {a, b}, {}, at::dot(a, b));
}
OP_CASE("aten::outer", "plain") {
  at::Tensor a = rnd(dt, {3}), b = rnd(dt, {4});
  check("aten::outer", {a, b}, {}, at::outer(a, b));
}
OP_CASE("aten::addmm", "beta_alpha") {
  at::Tensor c = rnd(dt, {5}), a = rnd(dt, {3, 4}), b = rnd(dt, {4, 5});
  check("aten::addmm", {c, a, b}, {}, at::addmm(c, a, b));
  check("aten::addmm", {c, a, b}, Attrs().i("beta", 2).i("alpha", 3), at::addmm(c, a, b, 2, 3));
}
OP_CASE("aten::baddbmm", "beta_alpha") {
  at::Tensor c = rnd(dt, {5}), a = rnd(dt, {2, 3, 4}), b = rnd(dt, {2, 4, 5});
  check("aten::baddbmm", {c, a, b}, Attrs().i("alpha", 2), at::baddbmm(c, a, b, 1, 2));
}
OP_CASE("aten::addmv", "plain") {
  at::Tensor c = rnd(dt, {3}), a = rnd(dt, {3, 4}), v = rnd(dt, {4});
  check("aten::addmv", {c, a, v}, {}, at::addmv(c, a, v));
}
OP_CASE("aten::einsum", "tensor_list_after_attr") {
  at::Tensor a = rnd(dt, {2, 3, 4}), b = rnd(dt, {2, 4, 5});
  check("aten::einsum", {a, b}, Attrs().s("equation", "bij,bjk->bik"), at::einsum("bij,bjk->bik", {a, b}));
}
OP_CASE("aten::tensordot", "dims") {
  at::Tensor a = rnd(dt, {3, 4, 5}), b = rnd(dt, {4, 5, 2});
  check("aten::tensordot", {a, b}, Attrs().ints("dims_self", {1, 2}).ints("dims_other", {0, 1}),
        at::tensordot(a, b, {1, 2}, {0, 1}));
}

// ---- convolution
OP_CASE("aten::conv2d", "defaults_bias_null_int_attrs") {
  at::Tensor x = rnd(dt, {2, 3, 8, 8}), w = rnd(dt, {4, 3, 3, 3}), b = rnd(dt, {4});
  check("aten::conv2d", {x, w, b}, {}, at::conv2d(x, w, b));
  check("aten::conv2d", {x, w}, Attrs().i("stride", 2).i("padding", 1), at::conv2d(x, w, {}, {2, 2}, {1, 1}));
  check("aten::conv2d", {x, w, at::Tensor()},
        Attrs().ints("stride", {1, 2}).ints("padding", {1, 0}).ints("dilation", {2, 1}),
        at::conv2d(x, w, {}, {1, 2}, {1, 0}, {2, 1}));
}
OP_CASE("aten::conv2d", "groups_channels_last_padding_same", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {1, 4, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor w = rnd(dt, {4, 2, 3, 3});
  check("aten::conv2d", {x, w}, Attrs().i("groups", 2),
        at::conv2d(x, w, {}, at::IntArrayRef{1, 1}, at::IntArrayRef{0, 0}, at::IntArrayRef{1, 1}, 2));
  check("aten::conv2d", {x, w}, Attrs().s("padding", "same").i("groups", 2), at::conv2d(x, w, {}, 1, "same", 1, 2));
}
OP_CASE("aten::conv1d", "stride_padding") {
  at::Tensor x = rnd(dt, {2, 3, 10}), w = rnd(dt, {4, 3, 3}), b = rnd(dt, {4});
  check("aten::conv1d", {x, w, b}, Attrs().i("stride", 2).i("padding", 1), at::conv1d(x, w, b, 2, 1));
  check("aten::conv1d", {x, w}, Attrs().s("padding", "same"), at::conv1d(x, w, {}, 1, "same"));
}
OP_CASE("aten::conv3d", "plain") {
  at::Tensor x = rnd(dt, {1, 2, 5, 5, 5}), w = rnd(dt, {3, 2, 3, 3, 3});
  check("aten::conv3d", {x, w}, Attrs().i("padding", 1), at::conv3d(x, w, {}, 1, 1));
}
OP_CASE("aten::conv_transpose1d", "stride") {
  at::Tensor x = rnd(dt, {1, 3, 6}), w = rnd(dt, {3, 2, 3}), b = rnd(dt, {2});
  check("aten::conv_transpose1d", {x, w, b}, Attrs().i("stride", 2), at::conv_transpose1d(x, w, b, 2));
}
OP_CASE("aten::conv_transpose2d", "stride_output_padding") {
  at::Tensor x = rnd(dt, {1, 3, 5, 5}), w = rnd(dt, {3, 2, 3, 3}), b = rnd(dt, {2});
  check("aten::conv_transpose2d", {x, w, b}, Attrs().i("stride", 2).i("output_padding", 1),
        at::conv_transpose2d(x, w, b, 2, 0, 1));
}
OP_CASE("aten::convolution", "plain_and_transposed") {
  at::Tensor x = rnd(dt, {1, 3, 6, 6}), w = rnd(dt, {4, 3, 3, 3}), b = rnd(dt, {4});
  Attrs a = Attrs()
                .ints("stride", {1, 1})
                .ints("padding", {1, 1})
                .ints("dilation", {1, 1})
                .b("transposed", false)
                .ints("output_padding", {0, 0})
                .i("groups", 1);
  check("aten::convolution", {x, w, b}, a, at::convolution(x, w, b, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1));
  at::Tensor wt = rnd(dt, {3, 2, 3, 3});
  check("aten::convolution", {x, wt, at::Tensor()}, Attrs(a).b("transposed", true),
        at::convolution(x, wt, {}, {1, 1}, {1, 1}, {1, 1}, true, {0, 0}, 1));
}
OP_CASE("aten::_convolution", "traced_flags") {
  at::Tensor x = rnd(dt, {1, 3, 6, 6}), w = rnd(dt, {4, 3, 3, 3});
  Attrs a = Attrs()
                .ints("stride", {2, 2})
                .ints("padding", {0, 0})
                .ints("dilation", {1, 1})
                .b("transposed", false)
                .ints("output_padding", {0, 0})
                .i("groups", 1)
                .b("benchmark", false)
                .b("deterministic", false)
                .b("cudnn_enabled", true)
                .b("allow_tf32", true);
  check("aten::_convolution", {x, w, at::Tensor()}, a, at::conv2d(x, w, {}, 2));
}

// ---- attention
// Attention kernels also claim bool (for masks): the query dtypes are listed.
#define SY_ATTN_DTYPES at::kFloat, at::kDouble, at::kBFloat16
OP_CASE("aten::scaled_dot_product_attention", "mask_causal", SY_ATTN_DTYPES) {
  at::Tensor q = rnd(dt, {1, 2, 4, 8}), k = rnd(dt, {1, 2, 4, 8}), v = rnd(dt, {1, 2, 4, 8});
  auto ref = [&](const c10::optional<at::Tensor>& m, bool causal) {
    return std::get<0>(at::_scaled_dot_product_attention(q, k, v, m, 0.0, false, causal));
  };
  check("aten::scaled_dot_product_attention", {q, k, v}, {}, ref({}, false));
  check("aten::scaled_dot_product_attention", {q, k, v}, Attrs().b("is_causal", true), ref({}, true));
  at::Tensor mask = rnd(at::kBool, {4, 4}).logical_or(at::eye(4, at::kBool));
  check("aten::scaled_dot_product_attention", {q, k, v, mask}, {}, ref(mask, false));
}
OP_CASE("aten::scaled_dot_product_attention", "explicit_scale", at::kFloat, at::kDouble) {
  at::Tensor q = rnd(dt, {1, 2, 4, 8}), k = rnd(dt, {1, 2, 4, 8}), v = rnd(dt, {1, 2, 4, 8});
  at::Tensor want = at::softmax(at::matmul(q, k.transpose(-2, -1)) * 0.3, -1).matmul(v);
  check("aten::scaled_dot_product_attention", {q, k, v}, Attrs().f("scale", 0.3), want);
}
OP_CASE("aten::scaled_dot_product_attention", "grouped_query", at::kFloat, at::kDouble) {
  at::Tensor q = rnd(dt, {1, 4, 3, 8}), k = rnd(dt, {1, 2, 5, 8}), v = rnd(dt, {1, 2, 5, 8});
  const at::Tensor kr = k.repeat_interleave(2, 1), vr = v.repeat_interleave(2, 1);  // heads 0, 1 read kv head 0
  at::Tensor want = at::softmax(at::matmul(q, kr.transpose(-2, -1)) / std::sqrt(8.0), -1).matmul(vr);
  check("aten::scaled_dot_product_attention", {q, k, v}, Attrs().b("enable_gqa", true), want);
}
OP_CASE("aten::_scaled_dot_product_attention", "weights_masks", SY_ATTN_DTYPES) {
  at::Tensor q = rnd(dt, {2, 4, 8}), k = rnd(dt, {2, 4, 8}), v = rnd(dt, {2, 4, 8});
  auto r = at::_scaled_dot_product_attention(q, k, v, {}, 0.0, true, false);
  check("aten::_scaled_dot_product_attention", {q, k, v}, Attrs().b("need_attn_weights", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
  at::Tensor bool_mask = rnd(at::kBool, {4, 4}).logical_or(at::eye(4, at::kBool));
  at::Tensor float_mask = rnd(dt, {4, 4});
  for (const at::Tensor& m : {bool_mask, float_mask})
    check("aten::_scaled_dot_product_attention", {q, k, v, m}, {},
          std::get<0>(at::_scaled_dot_product_attention(q, k, v, m, 0.0, false, false)));
}
OP_CASE("aten::_native_multi_head_attention", "fast_path", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {2, 4, 8}), qkv_w = rnd(dt, {24, 8}), qkv_b = rnd(dt, {24});
  at::Tensor pw = rnd(dt, {8, 8}), pb = rnd(dt, {8});
  auto a = Attrs().i("embed_dim", 8).i("num_head", 2).b("need_weights", false);
  auto r = at::_native_multi_head_attention(x, x, x, 8, 2, qkv_w, qkv_b, pw, pb, {}, false);
  check("aten::_native_multi_head_attention", {x, x, x, qkv_w, qkv_b, pw, pb}, a, std::get<0>(r));
  // Two outputs with need_weights=False: the absent weights come back as an empty tensor.
  Result two = run("aten::_native_multi_head_attention", {x, x, x, qkv_w, qkv_b, pw, pb}, a, 2);
  ASSERT_TRUE(two.ok()) << two.message;
  EXPECT_EQ(two.outputs[1].numel(), 0);
  auto rw = at::_native_multi_head_attention(x, x, x, 8, 2, qkv_w, qkv_b, pw, pb, {}, true);
  check("aten::_native_multi_head_attention", {x, x, x, qkv_w, qkv_b, pw, pb},
        Attrs().i("embed_dim", 8).i("num_head", 2), std::vector<at::Tensor>{std::get<0>(rw), std::get<1>(rw)});
  // key padding mask (mask_type 1)
  at::Tensor kpm = at::tensor({0, 0, 1, 1, 0, 1, 0, 0}, at::kLong).to(at::kBool).view({2, 4});
  auto rm = at::_native_multi_head_attention(x, x, x, 8, 2, qkv_w, qkv_b, pw, pb, kpm, false, true, 1);
  check("aten::_native_multi_head_attention", {x, x, x, qkv_w, qkv_b, pw, pb, kpm}, Attrs(a).i("mask_type", 1),
        std::get<0>(rm));
}
OP_CASE("aten::_transformer_encoder_layer_fwd", "post_norm_relu_masked", at::kFloat, at::kDouble) {
  int64_t E = 8, F = 16;
  at::Tensor src = rnd(dt, {2, 4, E});
  std::vector<at::Tensor> w = {rnd(dt, {3 * E, E}), rnd(dt, {3 * E}), rnd(dt, {E, E}), rnd(dt, {E}),
                               rnd(dt, {E}),        rnd(dt, {E}),     rnd(dt, {E}),    rnd(dt, {E}),
                               rnd(dt, {F, E}),     rnd(dt, {F}),     rnd(dt, {E, F}), rnd(dt, {E})};
  at::Tensor want = at::_transformer_encoder_layer_fwd(src, E, 2, w[0], w[1], w[2], w[3], false, false, 1e-5, w[4],
                                                       w[5], w[6], w[7], w[8], w[9], w[10], w[11]);
  std::vector<at::Tensor> in = {src};
  in.insert(in.end(), w.begin(), w.end());
  Attrs a = Attrs().i("embed_dim", E).i("num_heads", 2).b("use_gelu", false).b("norm_first", false).f("eps", 1e-5);
  check("aten::_transformer_encoder_layer_fwd", in, a, want);
  at::Tensor kpm = at::tensor({0, 0, 1, 1, 0, 1, 0, 0}, at::kLong).to(at::kBool).view({2, 4});
  at::Tensor want_masked = at::_transformer_encoder_layer_fwd(src, E, 2, w[0], w[1], w[2], w[3], false, false, 1e-5,
                                                              w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], kpm, 1);
  in.push_back(kpm);
  check("aten::_transformer_encoder_layer_fwd", in, Attrs(a).i("mask_type", 1), want_masked);
}

// ---- softmax
OP_CASE("aten::softmax", "dim_dtype_strided") {
  at::Tensor x = rnd(dt, {4, 3}).t();
  check("aten::softmax", {x}, Attrs().i("dim", 1), at::softmax(x, 1));
  check("aten::softmax", {x}, Attrs().i("dim", -2).none("dtype"), at::softmax(x, -2));
  check("aten::softmax", {x}, Attrs().i("dim", 0).dtype("dtype", at::kDouble), at::softmax(x, 0, at::kDouble));
}
OP_CASE("aten::log_softmax", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::log_softmax", {x}, Attrs().i("dim", 1), at::log_softmax(x, 1));
}
OP_CASE("aten::_softmax", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::_softmax", {x}, Attrs().i("dim", 1).b("half_to_float", false), at::_softmax(x, 1, false));
}
OP_CASE("aten::_log_softmax", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::_log_softmax", {x}, Attrs().i("dim", 0), at::_log_softmax(x, 0, false));
}

// ---- normalization
// The host's pattern ops (host/src/ir/patterns.hpp), computed op by op as a trace does.
OP_CASE("switchyard::rms_norm", "last_dim") {
  at::Tensor x = rnd(dt, {2, 3, 8}), w = rnd(dt, {8});
  check("switchyard::rms_norm", {x, w}, Attrs().f("eps", 1e-6), w * (x * at::rsqrt(x.pow(2).mean({-1}, true) + 1e-6)));
}
OP_CASE("switchyard::rotary", "heads") {
  at::Tensor x = rnd(dt, {2, 3, 5, 8}), cos = rnd(dt, {1, 1, 5, 8}), sin = rnd(dt, {1, 1, 5, 8});
  const at::Tensor rotated = at::cat({-x.slice(3, 4), x.slice(3, 0, 4)}, -1);
  check("switchyard::rotary", {x, cos, sin}, Attrs().i("dim", 3).i("cat_dim", -1).i("half", 4),
        x * cos + rotated * sin);
}
OP_CASE("switchyard::swiglu", "gate_and_up") {
  at::Tensor x = rnd(dt, {2, 3, 8}), wg = rnd(dt, {5, 8}), wu = rnd(dt, {5, 8});
  check("switchyard::swiglu", {x, wg, wu}, Attrs(), at::silu(at::linear(x, wg)) * at::linear(x, wu));
}
OP_CASE("aten::layer_norm", "affine_and_not") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {3, 4}), b = rnd(dt, {3, 4});
  check("aten::layer_norm", {x, w, b}, Attrs().ints("normalized_shape", {3, 4}).f("eps", 1e-5),
        at::layer_norm(x, {3, 4}, w, b, 1e-5));
  check("aten::layer_norm", {x}, Attrs().i("normalized_shape", 4), at::layer_norm(x, {4}));
  at::Tensor w4 = rnd(dt, {4});
  check("aten::layer_norm", {x, w4, at::Tensor()}, Attrs().ints("normalized_shape", {4}), at::layer_norm(x, {4}, w4));
}
OP_CASE("aten::native_layer_norm", "three_outputs") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {4}), b = rnd(dt, {4});
  auto r = at::native_layer_norm(x, {4}, w, b, 1e-5);
  check("aten::native_layer_norm", {x, w, b}, Attrs().ints("normalized_shape", {4}).f("eps", 1e-5),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r)});
}
OP_CASE("aten::rms_norm", "weight_eps") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {4});
  at::Tensor want = x * at::rsqrt(x.pow(2).mean({-1}, true) + 1e-6) * w;
  check("aten::rms_norm", {x, w}, Attrs().ints("normalized_shape", {4}).f("eps", 1e-6), want);
}
OP_CASE("aten::rms_norm", "default_eps", at::kFloat) {
  at::Tensor x = rnd(dt, {2, 3, 4});
  at::Tensor want = x * at::rsqrt(x.pow(2).mean({-2, -1}, true) + 1.1920928955078125e-07);
  check("aten::rms_norm", {x}, Attrs().ints("normalized_shape", {3, 4}), want);
}
OP_CASE("aten::batch_norm", "eval") {
  at::Tensor x = rnd(dt, {2, 3, 4, 4}), w = rnd(dt, {3}), b = rnd(dt, {3});
  at::Tensor rm = rnd(dt, {3}), rv = rnd_pos(dt, {3}) + 0.5;
  check("aten::batch_norm", {x, w, b, rm, rv},
        Attrs().b("training", false).f("momentum", 0.1).f("eps", 1e-5).b("cudnn_enabled", true),
        at::batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5, true));
  check("aten::batch_norm", {x, at::Tensor(), at::Tensor(), rm, rv}, {},
        at::batch_norm(x, {}, {}, rm, rv, false, 0.1, 1e-5, true));
}
OP_CASE("aten::native_batch_norm", "eval") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {3}), b = rnd(dt, {3});
  at::Tensor rm = rnd(dt, {3}), rv = rnd_pos(dt, {3}) + 0.5;
  auto r = at::native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
  check("aten::native_batch_norm", {x, w, b, rm, rv}, Attrs().b("training", false).f("momentum", 0.1).f("eps", 1e-5),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r)});
}
OP_CASE("aten::_native_batch_norm_legit_no_training", "first_output") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {3}), b = rnd(dt, {3});
  at::Tensor rm = rnd(dt, {3}), rv = rnd_pos(dt, {3}) + 0.5;
  auto r = at::native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
  check("aten::_native_batch_norm_legit_no_training", {x, w, b, rm, rv}, Attrs().f("momentum", 0.1).f("eps", 1e-5),
        std::get<0>(r));
}
OP_CASE("aten::group_norm", "affine") {
  at::Tensor x = rnd(dt, {2, 4, 3}), w = rnd(dt, {4}), b = rnd(dt, {4});
  check("aten::group_norm", {x, w, b}, Attrs().i("num_groups", 2), at::group_norm(x, 2, w, b));
  check("aten::group_norm", {x}, Attrs().i("num_groups", 4).f("eps", 1e-3), at::group_norm(x, 4, {}, {}, 1e-3));
}
OP_CASE("aten::instance_norm", "input_stats") {
  at::Tensor x = rnd(dt, {2, 3, 5}), w = rnd(dt, {3}), b = rnd(dt, {3});
  check("aten::instance_norm", {x, w, b, at::Tensor(), at::Tensor()},
        Attrs().b("use_input_stats", true).f("momentum", 0.1).f("eps", 1e-5),
        at::instance_norm(x, w, b, {}, {}, true, 0.1, 1e-5, false));
}

// ---- pooling
OP_CASE("aten::max_pool2d", "kernel_stride_padding") {
  at::Tensor x = rnd(dt, {2, 3, 7, 7});
  check("aten::max_pool2d", {x}, Attrs().ints("kernel_size", {2, 2}), at::max_pool2d(x, {2, 2}));
  check("aten::max_pool2d", {x}, Attrs().i("kernel_size", 3).i("stride", 2).i("padding", 1).b("ceil_mode", true),
        at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true));
  at::Tensor cl = x.contiguous(at::MemoryFormat::ChannelsLast);
  check("aten::max_pool2d", {cl}, Attrs().i("kernel_size", 2), at::max_pool2d(cl, {2, 2}));
}
OP_CASE("aten::max_pool1d", "kernel") {
  at::Tensor x = rnd(dt, {2, 3, 9});
  check("aten::max_pool1d", {x}, Attrs().i("kernel_size", 3), at::max_pool1d(x, {3}));
}
OP_CASE("aten::max_pool2d_with_indices", "two_outputs") {
  at::Tensor x = rnd(dt, {1, 2, 6, 6});
  auto r = at::max_pool2d_with_indices(x, {2, 2});
  check("aten::max_pool2d_with_indices", {x}, Attrs().i("kernel_size", 2),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::avg_pool2d", "padding_divisor") {
  at::Tensor x = rnd(dt, {2, 3, 6, 6});
  check("aten::avg_pool2d", {x}, Attrs().i("kernel_size", 2), at::avg_pool2d(x, {2, 2}));
  check("aten::avg_pool2d", {x},
        Attrs().i("kernel_size", 3).i("stride", 1).i("padding", 1).b("count_include_pad", false),
        at::avg_pool2d(x, {3, 3}, {1, 1}, {1, 1}, false, false));
}
OP_CASE("aten::avg_pool1d", "kernel") {
  at::Tensor x = rnd(dt, {2, 3, 8});
  check("aten::avg_pool1d", {x}, Attrs().i("kernel_size", 2), at::avg_pool1d(x, {2}));
}
OP_CASE("aten::adaptive_avg_pool2d", "sizes") {
  at::Tensor x = rnd(dt, {2, 3, 7, 5});
  check("aten::adaptive_avg_pool2d", {x}, Attrs().ints("output_size", {1, 1}), at::adaptive_avg_pool2d(x, {1, 1}));
  check("aten::adaptive_avg_pool2d", {x}, Attrs().i("output_size", 3), at::adaptive_avg_pool2d(x, {3, 3}));
}
OP_CASE("aten::adaptive_avg_pool1d", "size") {
  at::Tensor x = rnd(dt, {2, 3, 7});
  check("aten::adaptive_avg_pool1d", {x}, Attrs().i("output_size", 2), at::adaptive_avg_pool1d(x, {2}));
}
OP_CASE("aten::adaptive_max_pool1d", "two_outputs") {
  at::Tensor x = rnd(dt, {2, 3, 7});
  auto r = at::adaptive_max_pool1d(x, {2});
  check("aten::adaptive_max_pool1d", {x}, Attrs().i("output_size", 2),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::adaptive_max_pool2d", "two_outputs") {
  at::Tensor x = rnd(dt, {2, 3, 7, 5});
  auto r = at::adaptive_max_pool2d(x, {2, 2});
  check("aten::adaptive_max_pool2d", {x}, Attrs().ints("output_size", {2, 2}),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}

// ---- dropout (eval: identity), similarity, embedding
#define SY_DROPOUT_CASE(NAME)                                             \
  OP_CASE("aten::" #NAME, "eval_identity") {                              \
    at::Tensor x = rnd(dt, {3, 4});                                       \
    check("aten::" #NAME, {x}, Attrs().f("p", 0.5).b("train", false), x); \
    check("aten::" #NAME, {x}, {}, x);                                    \
  }
SY_DROPOUT_CASE(dropout)
SY_DROPOUT_CASE(dropout_)
SY_DROPOUT_CASE(feature_dropout)
SY_DROPOUT_CASE(alpha_dropout)

OP_CASE("aten::cosine_similarity", "dim") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {3, 4});
  check("aten::cosine_similarity", {a, b}, {}, at::cosine_similarity(a, b));
  check("aten::cosine_similarity", {a, b}, Attrs().i("dim", 0), at::cosine_similarity(a, b, 0));
}
OP_CASE("aten::embedding", "int64_int32_padding") {
  at::Tensor w = rnd(dt, {10, 4}), idx = at::randint(0, 10, {2, 3}, at::kLong);
  check("aten::embedding", {w, idx}, {}, at::embedding(w, idx));
  check("aten::embedding", {w, idx.to(at::kInt)}, Attrs().i("padding_idx", 0), at::embedding(w, idx.to(at::kInt), 0));
}
OP_CASE("aten::one_hot", "classes") {
  at::Tensor x = at::randint(0, 5, {4}, at::kLong).to(dt);
  check("aten::one_hot", {x}, Attrs().i("num_classes", 6), at::one_hot(x, 6));
}

// ---- padding, resampling
OP_CASE("aten::constant_pad_nd", "value") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::constant_pad_nd", {x}, Attrs().ints("pad", {1, 2, 0, 1}), at::constant_pad_nd(x, {1, 2, 0, 1}));
  check("aten::constant_pad_nd", {x}, Attrs().ints("pad", {1, 1}).i("value", 1), at::constant_pad_nd(x, {1, 1}, 1));
}
OP_CASE("aten::pad", "modes") {
  at::Tensor x = rnd(dt, {1, 2, 4, 4});
  check("aten::pad", {x}, Attrs().ints("pad", {1, 1}).f("value", 2.0), at::pad(x, {1, 1}, "constant", 2.0));
  if (dt != at::kBFloat16)
    check("aten::pad", {x}, Attrs().ints("pad", {1, 1, 2, 2}).s("mode", "reflect"),
          at::pad(x, {1, 1, 2, 2}, "reflect"));
}
OP_CASE("aten::pad", "replicate", at::kFloat) {
  at::Tensor x = rnd(dt, {1, 2, 4, 4});
  check("aten::pad", {x}, Attrs().ints("pad", {1, 1, 2, 2}).s("mode", "replicate"),
        at::pad(x, {1, 1, 2, 2}, "replicate"));
}
OP_CASE("aten::reflection_pad1d", "padding") {
  at::Tensor x = rnd(dt, {1, 2, 5});
  check("aten::reflection_pad1d", {x}, Attrs().ints("padding", {2, 1}), at::reflection_pad1d(x, {2, 1}));
}
OP_CASE("aten::reflection_pad2d", "padding") {
  at::Tensor x = rnd(dt, {1, 2, 5, 5});
  check("aten::reflection_pad2d", {x}, Attrs().i("padding", 1), at::reflection_pad2d(x, {1, 1, 1, 1}));
}
OP_CASE("aten::replication_pad2d", "padding") {
  at::Tensor x = rnd(dt, {1, 2, 5, 5});
  check("aten::replication_pad2d", {x}, Attrs().ints("padding", {1, 0, 2, 1}), at::replication_pad2d(x, {1, 0, 2, 1}));
}
OP_CASE("aten::pixel_shuffle", "factor") {
  at::Tensor x = rnd(dt, {1, 8, 2, 3});
  check("aten::pixel_shuffle", {x}, Attrs().i("upscale_factor", 2), at::pixel_shuffle(x, 2));
}
OP_CASE("aten::pixel_unshuffle", "factor") {
  at::Tensor x = rnd(dt, {1, 2, 4, 6});
  check("aten::pixel_unshuffle", {x}, Attrs().i("downscale_factor", 2), at::pixel_unshuffle(x, 2));
}
OP_CASE("aten::upsample_nearest2d", "size_and_scale") {
  at::Tensor x = rnd(dt, {1, 2, 3, 4});
  check("aten::upsample_nearest2d", {x}, Attrs().ints("output_size", {6, 8}), at::upsample_nearest2d(x, {6, 8}));
  check("aten::upsample_nearest2d", {x}, Attrs().none("output_size").floats("scale_factors", {2.0, 3.0}),
        at::upsample_nearest2d(x, c10::nullopt, at::ArrayRef<double>({2.0, 3.0})));
}
OP_CASE("aten::upsample_bilinear2d", "align_corners") {
  at::Tensor x = rnd(dt, {1, 2, 3, 4});
  check("aten::upsample_bilinear2d", {x}, Attrs().ints("output_size", {6, 8}).b("align_corners", false),
        at::upsample_bilinear2d(x, {6, 8}, false));
  check("aten::upsample_bilinear2d", {x},
        Attrs().none("output_size").b("align_corners", true).floats("scale_factors", {2.0, 2.0}),
        at::upsample_bilinear2d(x, c10::nullopt, true, at::ArrayRef<double>({2.0, 2.0})));
}
