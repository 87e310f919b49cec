// aten plugin: softmax, normalization, pooling, dropout, embedding, padding, resampling.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

at::Tensor dropout(const Call& c) { return at::dropout(c.t(0), c.f(1), c.b(2)); }

// PyTorch 2.4's rms_norm (not in 1.13): x / sqrt(mean(x^2 over normalized_shape) + eps) * w.
at::Tensor rms_norm(const Call& c) {
  const at::Tensor& x = c.t(0);
  auto n = static_cast<int64_t>(c.ints(1).size());
  if (n < 1 || n > x.dim()) throw sy::Error("rms_norm: bad normalized_shape");
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - n; d < x.dim(); ++d) dims.push_back(d);
  double eps = c.none(3) ? std::numeric_limits<float>::epsilon() : c.f(3);
  if (c.none(3) && x.scalar_type() == at::kDouble) eps = std::numeric_limits<double>::epsilon();
  if (c.none(3) && x.scalar_type() == at::kBFloat16) eps = 0.0078125;  // torch.finfo(bf16).eps
  at::Tensor y = x * at::rsqrt(x.pow(2).mean(dims, /*keepdim=*/true) + eps);
  return c.is_tensor(2) ? y * c.t(2) : y;
}

}  // namespace

void register_nn_ops(Registry& r) {
  r.family("activation");
  r.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kF,
        [](const Call& c) { return at::softmax(c.t(0), c.i(1), c.dtype(2)); });
  r.def("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kF,
        [](const Call& c) { return at::log_softmax(c.t(0), c.i(1), c.dtype(2)); });
  r.def("_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor", kF,
        [](const Call& c) { return at::_softmax(c.t(0), c.i(1), c.b(2)); });
  r.def("_log_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor", kF,
        [](const Call& c) { return at::_log_softmax(c.t(0), c.i(1), c.b(2)); });
  r.def("log_sigmoid(Tensor self) -> Tensor", kF,
        [](const Call& c) { return at::log_sigmoid(c.t(0)); });

  r.family("norm");
  r.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
        "float eps=1e-05, bool cudnn_enable=True) -> Tensor", kF, [](const Call& c) {
          return at::layer_norm(c.t(0), c.ints(1), c.ot(2), c.ot(3), c.f(4), c.b(5));
        });
  r.def("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
        "float eps) -> (Tensor, Tensor, Tensor)", kF, [](const Call& c) {
          return outs(at::native_layer_norm(c.t(0), c.ints(1), c.ot(2), c.ot(3), c.f(4)));
        });
  r.def("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
        "Tensor", kF, rms_norm);
  r.def("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
        "Tensor? running_var, bool training=False, float momentum=0.1, float eps=1e-05, "
        "bool cudnn_enabled=True) -> Tensor", kF, [](const Call& c) {
          return at::batch_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5), c.f(6), c.f(7),
                                c.b(8));
        });
  r.def("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
        "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
        kF, [](const Call& c) {
          return outs(at::native_batch_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5),
                                            c.f(6), c.f(7)));
        });
  // PyTorch 2.x export spelling of eval-mode batch norm.
  r.def("_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
        "Tensor running_mean, Tensor running_var, float momentum, float eps) -> "
        "(Tensor, Tensor, Tensor)", kF, [](const Call& c) {
          return outs(at::native_batch_norm(c.t(0), c.ot(1), c.ot(2), c.t(3), c.t(4), false,
                                            c.f(5), c.f(6)));
        });
  r.def("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
        "float eps=1e-05, bool cudnn_enabled=True) -> Tensor", kF, [](const Call& c) {
          return at::group_norm(c.t(0), c.i(1), c.ot(2), c.ot(3), c.f(4), c.b(5));
        });
  r.def("instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
        "Tensor? running_var, bool use_input_stats=True, float momentum=0.1, float eps=1e-05, "
        "bool cudnn_enabled=True) -> Tensor", kF, [](const Call& c) {
          return at::instance_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5), c.f(6),
                                   c.f(7), c.b(8));
        });

  r.family("pool");
  r.def("max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
        "int[1] dilation=[1], bool ceil_mode=False) -> Tensor", kF, [](const Call& c) {
          return at::max_pool1d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5));
        });
  r.def("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
        "int[2] dilation=1, bool ceil_mode=False) -> Tensor", kF, [](const Call& c) {
          return at::max_pool2d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.b(5));
        });
  r.def("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
        "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", kF,
        [](const Call& c) {
          return outs(at::max_pool2d_with_indices(c.t(0), c.ints(1), c.ints(2), c.ints(3),
                                                  c.ints(4), c.b(5)));
        });
  r.def("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
        "bool ceil_mode=False, bool count_include_pad=True) -> Tensor", kF | bit(at::kLong),
        [](const Call& c) {
          return at::avg_pool1d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.b(4), c.b(5));
        });
  r.def("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
        "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
        kF | bit(at::kLong), [](const Call& c) {
          return at::avg_pool2d(c.t(0), c.ints(1), c.ints(2), c.ints(3), c.b(4), c.b(5), c.oi(6));
        });
  r.def("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor", kF,
        [](const Call& c) { return at::adaptive_avg_pool1d(c.t(0), c.ints(1)); });
  r.def("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", kF,
        [](const Call& c) { return at::adaptive_avg_pool2d(c.t(0), c.ints(1)); });
  r.def("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)", kF,
        [](const Call& c) { return outs(at::adaptive_max_pool1d(c.t(0), c.ints(1))); });
  r.def("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", kF,
        [](const Call& c) { return outs(at::adaptive_max_pool2d(c.t(0), c.ints(1))); });

  r.family("misc");
  // Eval mode (train=False) returns the input: the result is then a copy (see run()).
  r.def("dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll, dropout);
  r.def("dropout_(Tensor(a!) self, float p=0.5, bool train=False) -> Tensor(a!)", kAll, dropout);
  r.def("feature_dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll,
        [](const Call& c) { return at::feature_dropout(c.t(0), c.f(1), c.b(2)); });
  r.def("alpha_dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll,
        [](const Call& c) { return at::alpha_dropout(c.t(0), c.f(1), c.b(2)); });
  r.def("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor", kF,
        [](const Call& c) { return at::cosine_similarity(c.t(0), c.t(1), c.i(2), c.f(3)); });

  r.family("indexing");
  r.def("embedding(Tensor weight, Tensor<idx> indices, int padding_idx=-1, "
        "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", kAll, [](const Call& c) {
          return at::embedding(c.t(0), c.t(1), c.i(2), c.b(3), c.b(4));
        });
  r.def("one_hot(Tensor self, int num_classes=-1) -> Tensor", bit(at::kLong),
        [](const Call& c) { return at::one_hot(c.t(0), c.i(1)); });

  r.family("resample");
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
  r.def("upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
        "float? scales_w=None) -> Tensor", kF | bit(at::kByte), [](const Call& c) {
          return at::upsample_nearest2d(c.t(0), c.ints(1), c.of(2), c.of(3));
        });
  r.def("upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> "
        "Tensor", kF | bit(at::kByte), [](const Call& c) {
          return at::upsample_nearest2d(c.t(0), c.oints(1), c.ofloats(2));
        });
  r.def("upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
        "float? scales_h=None, float? scales_w=None) -> Tensor", kF, [](const Call& c) {
          return at::upsample_bilinear2d(c.t(0), c.ints(1), c.b(2), c.of(3), c.of(4));
        });
  r.def("upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
        "float[]? scale_factors) -> Tensor", kF, [](const Call& c) {
          return at::upsample_bilinear2d(c.t(0), c.oints(1), c.b(2), c.ofloats(3));
        });
}

}  // namespace sy_aten
