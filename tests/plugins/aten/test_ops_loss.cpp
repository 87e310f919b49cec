// Conformance cases: loss functions, with every reduction (0 none, 1 mean, 2 sum).
#include "aten_harness.hpp"

using namespace sy_test;

namespace {
at::Tensor classes(at::IntArrayRef shape, int64_t n) { return at::randint(0, n, shape, at::kLong); }
at::Tensor unit(at::ScalarType dt, at::IntArrayRef shape) { return at::rand(shape).clamp(0.05, 0.95).to(dt); }
at::Tensor signs(at::ScalarType dt, at::IntArrayRef shape) {
  return (at::randint(0, 2, shape, at::kLong) * 2 - 1).to(dt);
}
}  // namespace

// Losses with class-index targets also claim int64 (the target's dtype): the input dtypes.
#define SY_LOSS_DTYPES at::kFloat, at::kDouble
#define SY_LOSS_DTYPES_BF16 at::kFloat, at::kDouble, at::kBFloat16

// Every reduction of a two-input loss.
#define SY_LOSS2_CASE(NAME, MAKE_TARGET)                                                                           \
  OP_CASE("aten::" #NAME, "reductions") {                                                                          \
    at::Tensor x = rnd(dt, {3, 5}), t = MAKE_TARGET;                                                               \
    for (int64_t red : {0, 1, 2}) check("aten::" #NAME, {x, t}, Attrs().i("reduction", red), at::NAME(x, t, red)); \
  }
SY_LOSS2_CASE(mse_loss, rnd(dt, {3, 5}))
SY_LOSS2_CASE(l1_loss, rnd(dt, {5}).expand({3, 5}))
SY_LOSS2_CASE(soft_margin_loss, signs(dt, {3, 5}))

OP_CASE("aten::smooth_l1_loss", "beta") {
  at::Tensor x = rnd(dt, {3, 5}), t = rnd(dt, {3, 5});
  check("aten::smooth_l1_loss", {x, t}, {}, at::smooth_l1_loss(x, t));
  check("aten::smooth_l1_loss", {x, t}, Attrs().i("reduction", 0).f("beta", 0.5), at::smooth_l1_loss(x, t, 0, 0.5));
}
OP_CASE("aten::huber_loss", "delta") {
  at::Tensor x = rnd(dt, {3, 5}), t = rnd(dt, {3, 5});
  check("aten::huber_loss", {x, t}, Attrs().i("reduction", 2).f("delta", 0.3), at::huber_loss(x, t, 2, 0.3));
}
OP_CASE("aten::cross_entropy_loss", "indices_weights_smoothing_probs", SY_LOSS_DTYPES_BF16) {
  at::Tensor x = rnd(dt, {4, 5}), t = classes({4}, 5), w = rnd_pos(dt, {5});
  t[1] = -100;
  check("aten::cross_entropy_loss", {x, t}, {}, at::cross_entropy_loss(x, t));
  check("aten::cross_entropy_loss", {x, t, w}, Attrs().i("reduction", 2).f("label_smoothing", 0.1),
        at::cross_entropy_loss(x, t, w, 2, -100, 0.1));
  at::Tensor p = rnd(dt, {4, 5}).softmax(1);
  check("aten::cross_entropy_loss", {x, p}, {}, at::cross_entropy_loss(x, p));
  at::Tensor img = rnd(dt, {2, 5, 3, 3}), ti = classes({2, 3, 3}, 5);
  check("aten::cross_entropy_loss", {img, ti}, Attrs().i("reduction", 0).i("ignore_index", 2),
        at::cross_entropy_loss(img, ti, {}, 0, 2));
}
OP_CASE("aten::nll_loss", "weights_ignore", SY_LOSS_DTYPES_BF16) {
  at::Tensor x = rnd(dt, {4, 5}).log_softmax(1), t = classes({4}, 5), w = rnd_pos(dt, {5});
  check("aten::nll_loss", {x, t}, {}, at::nll_loss(x, t));
  check("aten::nll_loss", {x, t, w}, Attrs().i("reduction", 0).i("ignore_index", 1), at::nll_loss(x, t, w, 0, 1));
}
OP_CASE("aten::nll_loss_nd", "image", SY_LOSS_DTYPES_BF16) {
  at::Tensor x = rnd(dt, {2, 5, 3, 4}).log_softmax(1), t = classes({2, 3, 4}, 5);
  check("aten::nll_loss_nd", {x, t}, Attrs().i("reduction", 2), at::nll_loss_nd(x, t, {}, 2));
}
OP_CASE("aten::nll_loss2d", "image", SY_LOSS_DTYPES) {
  at::Tensor x = rnd(dt, {2, 5, 3, 4}).log_softmax(1), t = classes({2, 3, 4}, 5);
  check("aten::nll_loss2d", {x, t}, {}, at::nll_loss2d(x, t));
}
OP_CASE("aten::binary_cross_entropy", "weights") {
  at::Tensor x = unit(dt, {3, 4}), t = unit(dt, {3, 4}), w = rnd_pos(dt, {4});
  check("aten::binary_cross_entropy", {x, t}, {}, at::binary_cross_entropy(x, t));
  check("aten::binary_cross_entropy", {x, t, w}, Attrs().i("reduction", 0), at::binary_cross_entropy(x, t, w, 0));
}
OP_CASE("aten::binary_cross_entropy_with_logits", "weights_pos_weight") {
  at::Tensor x = rnd(dt, {3, 4}), t = unit(dt, {3, 4}), w = rnd_pos(dt, {4}), pw = rnd_pos(dt, {4});
  check("aten::binary_cross_entropy_with_logits", {x, t}, {}, at::binary_cross_entropy_with_logits(x, t));
  check("aten::binary_cross_entropy_with_logits", {x, t, at::Tensor(), pw}, Attrs().i("reduction", 2),
        at::binary_cross_entropy_with_logits(x, t, {}, pw, 2));
  check("aten::binary_cross_entropy_with_logits", {x, t, w, pw}, Attrs().i("reduction", 0),
        at::binary_cross_entropy_with_logits(x, t, w, pw, 0));
}
OP_CASE("aten::kl_div", "log_target") {
  at::Tensor x = rnd(dt, {3, 4}).log_softmax(1), t = rnd(dt, {3, 4}).softmax(1);
  check("aten::kl_div", {x, t}, {}, at::kl_div(x, t));
  check("aten::kl_div", {x, t.log()}, Attrs().i("reduction", 2).b("log_target", true), at::kl_div(x, t.log(), 2, true));
}
OP_CASE("aten::poisson_nll_loss", "log_input_full") {
  at::Tensor x = rnd(dt, {3, 4}), t = rnd_pos(dt, {3, 4});
  for (bool log_input : {true, false})
    check("aten::poisson_nll_loss", {log_input ? x : x.abs(), t},
          Attrs().b("log_input", log_input).b("full", !log_input).f("eps", 1e-8).i("reduction", 1),
          at::poisson_nll_loss(log_input ? x : x.abs(), t, log_input, !log_input, 1e-8, 1));
}
OP_CASE("aten::hinge_embedding_loss", "margin") {
  at::Tensor x = rnd(dt, {3, 4}), t = signs(dt, {3, 4});
  check("aten::hinge_embedding_loss", {x, t}, Attrs().f("margin", 0.5).i("reduction", 0),
        at::hinge_embedding_loss(x, t, 0.5, 0));
}
OP_CASE("aten::margin_ranking_loss", "margin") {
  at::Tensor a = rnd(dt, {6}), b = rnd(dt, {6}), y = signs(dt, {6});
  check("aten::margin_ranking_loss", {a, b, y}, Attrs().f("margin", 0.2), at::margin_ranking_loss(a, b, y, 0.2));
}
OP_CASE("aten::cosine_embedding_loss", "margin") {
  at::Tensor a = rnd(dt, {3, 8}), b = rnd(dt, {3, 8}), y = signs(dt, {3});
  check("aten::cosine_embedding_loss", {a, b, y}, Attrs().f("margin", 0.1).i("reduction", 0),
        at::cosine_embedding_loss(a, b, y, 0.1, 0));
}
OP_CASE("aten::triplet_margin_loss", "p_swap") {
  at::Tensor a = rnd(dt, {3, 8}), p = rnd(dt, {3, 8}), n = rnd(dt, {3, 8});
  check("aten::triplet_margin_loss", {a, p, n}, {}, at::triplet_margin_loss(a, p, n));
  check("aten::triplet_margin_loss", {a, p, n}, Attrs().f("p", 1).b("swap", true).i("reduction", 0),
        at::triplet_margin_loss(a, p, n, 1.0, 1, 1e-6, true, 0));
}
OP_CASE("aten::multi_margin_loss", "p_margin_weight", SY_LOSS_DTYPES) {
  at::Tensor x = rnd(dt, {4, 5}), t = classes({4}, 5), w = rnd_pos(dt, {5});
  check("aten::multi_margin_loss", {x, t}, {}, at::multi_margin_loss(x, t));
  check("aten::multi_margin_loss", {x, t, w}, Attrs().i("p", 2).f("margin", 0.5).i("reduction", 0),
        at::multi_margin_loss(x, t, 2, 0.5, w, 0));
}
OP_CASE("aten::multilabel_margin_loss", "padded_targets", SY_LOSS_DTYPES) {
  at::Tensor x = rnd(dt, {2, 4}), t = at::tensor({3, 0, -1, 1, 1, 2, 3, -1}, at::kLong).view({2, 4});
  check("aten::multilabel_margin_loss", {x, t}, {}, at::multilabel_margin_loss(x, t));
}
