// aten plugin: softmax, normalization, dropout, embedding, distances.
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
  r.def("log_sigmoid(Tensor self) -> Tensor", kF, [](const Call& c) { return at::log_sigmoid(c.t(0)); });

  r.family("norm");
  // The host's pattern pass writes a trace's RMSNorm as this op (host/src/ir/patterns.hpp):
  // the reference computes it as the trace did, op by op.
  r.def("switchyard::rms_norm(Tensor input, Tensor weight, float eps) -> Tensor", kF, [](const Call& c) {
    const at::Tensor x = c.t(0);
    return c.t(1) * (x * at::rsqrt(x.pow(2).mean({-1}, true) + c.f(2)));
  });
  // ... rotary position embeddings as this one ...
  r.def("switchyard::rotary(Tensor input, Tensor cos, Tensor sin, int dim, int cat_dim, int half) -> Tensor", kF,
        [](const Call& c) {
          const at::Tensor x = c.t(0);
          const int64_t dim = c.i(3), half = c.i(5);
          const at::Tensor rotated = at::cat({-x.slice(dim, half), x.slice(dim, 0, half)}, c.i(4));
          return x * c.t(1) + rotated * c.t(2);
        });
  // ... and a Llama MLP's gate and up projections as this one (two products: linalg).
  r.family("linalg");
  r.def("switchyard::swiglu(Tensor input, Tensor gate_weight, Tensor up_weight) -> Tensor", kF,
        [](const Call& c) { return at::silu(at::linear(c.t(0), c.t(1))) * at::linear(c.t(0), c.t(2)); });
  r.family("norm");
  r.def(
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1e-05, bool cudnn_enable=True) -> Tensor",
      kF, [](const Call& c) { return at::layer_norm(c.t(0), c.ints(1), c.ot(2), c.ot(3), c.f(4), c.b(5)); });
  r.def(
      "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
      "float eps) -> (Tensor, Tensor, Tensor)",
      kF, [](const Call& c) { return outs(at::native_layer_norm(c.t(0), c.ints(1), c.ot(2), c.ot(3), c.f(4))); });
  r.def(
      "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
      "Tensor",
      kF, rms_norm);
  r.def(
      "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool training=False, float momentum=0.1, float eps=1e-05, "
      "bool cudnn_enabled=True) -> Tensor",
      kF, [](const Call& c) {
        return at::batch_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5), c.f(6), c.f(7), c.b(8));
      });
  r.def(
      "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
      kF, [](const Call& c) {
        return outs(at::native_batch_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5), c.f(6), c.f(7)));
      });
  // PyTorch 2.x export spelling of eval-mode batch norm.
  r.def(
      "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor running_mean, Tensor running_var, float momentum, float eps) -> "
      "(Tensor, Tensor, Tensor)",
      kF, [](const Call& c) {
        return outs(at::native_batch_norm(c.t(0), c.ot(1), c.ot(2), c.t(3), c.t(4), false, c.f(5), c.f(6)));
      });
  r.def(
      "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
      kF, [](const Call& c) { return at::group_norm(c.t(0), c.i(1), c.ot(2), c.ot(3), c.f(4), c.b(5)); });
  r.def(
      "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool use_input_stats=True, float momentum=0.1, float eps=1e-05, "
      "bool cudnn_enabled=True) -> Tensor",
      kF, [](const Call& c) {
        return at::instance_norm(c.t(0), c.ot(1), c.ot(2), c.ot(3), c.ot(4), c.b(5), c.f(6), c.f(7), c.b(8));
      });

  r.family("misc");
  // Eval mode (train=False) returns the input: the result is then a copy (see run()).
  r.def("dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll, dropout);
  r.def("dropout_(Tensor(a!) self, float p=0.5, bool train=False) -> Tensor(a!)", kAll, dropout);
  r.def("feature_dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll,
        [](const Call& c) { return at::feature_dropout(c.t(0), c.f(1), c.b(2)); });
  r.def("alpha_dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll,
        [](const Call& c) { return at::alpha_dropout(c.t(0), c.f(1), c.b(2)); });
  r.def("feature_alpha_dropout(Tensor input, float p=0.5, bool train=False) -> Tensor", kAll,
        [](const Call& c) { return at::feature_alpha_dropout(c.t(0), c.f(1), c.b(2)); });
  r.def("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor", kF,
        [](const Call& c) { return at::cosine_similarity(c.t(0), c.t(1), c.i(2), c.f(3)); });

  r.family("indexing");
  r.def(
      "embedding(Tensor weight, Tensor<idx> indices, int padding_idx=-1, "
      "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
      kAll, [](const Call& c) { return at::embedding(c.t(0), c.t(1), c.i(2), c.b(3), c.b(4)); });
  // mode 0/1/2 = sum/mean/max; outputs: result, offset2bag, bag_size, max_indices.
  r.def(
      "embedding_bag(Tensor weight, Tensor<idx> indices, Tensor<idx> offsets, "
      "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
      "Tensor? per_sample_weights=None, bool include_last_offset=False) -> "
      "(Tensor, Tensor, Tensor, Tensor)",
      kF32_64, [](const Call& c) {
        auto r = at::embedding_bag(c.t(0), c.t(1), c.t(2), c.b(3), c.i(4), c.b(5), c.ot(6), c.b(7));
        return std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)};
      });
  r.def(
      "embedding_bag.padding_idx(Tensor weight, Tensor<idx> indices, Tensor<idx> offsets, "
      "bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, "
      "bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)",
      kF32_64, [](const Call& c) {
        auto r = at::embedding_bag(c.t(0), c.t(1), c.t(2), c.b(3), c.i(4), c.b(5), c.ot(6), c.b(7), c.oi(8));
        return std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)};
      });
  r.def("one_hot(Tensor self, int num_classes=-1) -> Tensor", bit(at::kLong),
        [](const Call& c) { return at::one_hot(c.t(0), c.i(1)); });
}

}  // namespace sy_aten
