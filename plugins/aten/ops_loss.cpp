// aten plugin: loss functions (scores, distillation and evaluation at inference time).
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
// `reduction` is ATen's int code: 0 none, 1 mean (the default), 2 sum.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

}  // namespace

void register_loss_ops(Registry& r) {
  r.family("loss");
  // Class targets (int64) or class probabilities (the input's dtype).
  r.def(
      "cross_entropy_loss(Tensor self, Tensor<long|main> target, Tensor? weight=None, "
      "int reduction=1, int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
      kF, [](const Call& c) { return at::cross_entropy_loss(c.t(0), c.t(1), c.ot(2), c.i(3), c.i(4), c.f(5)); });
  r.def(
      "nll_loss(Tensor self, Tensor<long> target, Tensor? weight=None, int reduction=1, "
      "int ignore_index=-100) -> Tensor",
      kF, [](const Call& c) { return at::nll_loss(c.t(0), c.t(1), c.ot(2), c.i(3), c.i(4)); });
  r.def(
      "nll_loss_nd(Tensor self, Tensor<long> target, Tensor? weight=None, int reduction=1, "
      "int ignore_index=-100) -> Tensor",
      kF, [](const Call& c) { return at::nll_loss_nd(c.t(0), c.t(1), c.ot(2), c.i(3), c.i(4)); });
  r.def(
      "nll_loss2d(Tensor self, Tensor<long> target, Tensor? weight=None, int reduction=1, "
      "int ignore_index=-100) -> Tensor",
      kF32_64, [](const Call& c) { return at::nll_loss2d(c.t(0), c.t(1), c.ot(2), c.i(3), c.i(4)); });
  r.def("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kF32_64,
        [](const Call& c) { return at::mse_loss(c.t(0), c.t(1), c.i(2)); });
  r.def("l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kF,
        [](const Call& c) { return at::l1_loss(c.t(0), c.t(1), c.i(2)); });
  r.def("smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor", kF,
        [](const Call& c) { return at::smooth_l1_loss(c.t(0), c.t(1), c.i(2), c.f(3)); });
  r.def("huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor", kF,
        [](const Call& c) { return at::huber_loss(c.t(0), c.t(1), c.i(2), c.f(3)); });
  r.def(
      "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> "
      "Tensor",
      kF32_64, [](const Call& c) { return at::binary_cross_entropy(c.t(0), c.t(1), c.ot(2), c.i(3)); });
  r.def(
      "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
      "Tensor? pos_weight=None, int reduction=1) -> Tensor",
      kF, [](const Call& c) { return at::binary_cross_entropy_with_logits(c.t(0), c.t(1), c.ot(2), c.ot(3), c.i(4)); });
  r.def("kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor", kF,
        [](const Call& c) { return at::kl_div(c.t(0), c.t(1), c.i(2), c.b(3)); });
  r.def(
      "poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, "
      "int reduction) -> Tensor",
      kF, [](const Call& c) { return at::poisson_nll_loss(c.t(0), c.t(1), c.b(2), c.b(3), c.f(4), c.i(5)); });
  r.def("soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kF,
        [](const Call& c) { return at::soft_margin_loss(c.t(0), c.t(1), c.i(2)); });
  r.def(
      "hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=1) -> "
      "Tensor",
      kF, [](const Call& c) { return at::hinge_embedding_loss(c.t(0), c.t(1), c.f(2), c.i(3)); });
  r.def(
      "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
      "int reduction=1) -> Tensor",
      kF, [](const Call& c) { return at::margin_ranking_loss(c.t(0), c.t(1), c.t(2), c.f(3), c.i(4)); });
  r.def(
      "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
      "int reduction=1) -> Tensor",
      kF, [](const Call& c) { return at::cosine_embedding_loss(c.t(0), c.t(1), c.t(2), c.f(3), c.i(4)); });
  r.def(
      "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, "
      "float p=2, float eps=1e-06, bool swap=False, int reduction=1) -> Tensor",
      kF, [](const Call& c) {
        return at::triplet_margin_loss(c.t(0), c.t(1), c.t(2), c.f(3), c.f(4), c.f(5), c.b(6), c.i(7));
      });
  r.def(
      "multi_margin_loss(Tensor self, Tensor<long> target, Scalar p=1, Scalar margin=1, "
      "Tensor? weight=None, int reduction=1) -> Tensor",
      kF32_64,
      [](const Call& c) { return at::multi_margin_loss(c.t(0), c.t(1), c.scalar(2), c.scalar(3), c.ot(4), c.i(5)); });
  r.def("multilabel_margin_loss(Tensor self, Tensor<long> target, int reduction=1) -> Tensor", kF32_64,
        [](const Call& c) { return at::multilabel_margin_loss(c.t(0), c.t(1), c.i(2)); });
}

}  // namespace sy_aten
