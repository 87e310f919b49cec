// Conformance cases: more matrix products, solvers, distances, 3-d/transposed/string-padded
// convolution, bilinear, embedding bags, feature dropout.
#include "aten_harness.hpp"

using namespace sy_test;

namespace {
// Well-conditioned square matrices (solvers are compared at float tolerance).
at::Tensor spd(at::ScalarType dt, int64_t n) {
  at::Tensor a = at::randn({n, n}, at::kDouble);
  return (a.matmul(a.t()) + n * at::eye(n, at::kDouble)).to(dt);
}
}  // namespace

// ---- products
OP_CASE("aten::addbmm", "beta_alpha") {
  at::Tensor c = rnd(dt, {3, 5}), a = rnd(dt, {2, 3, 4}), b = rnd(dt, {2, 4, 5});
  check("aten::addbmm", {c, a, b}, {}, at::addbmm(c, a, b));
  check("aten::addbmm", {c, a, b}, Attrs().i("beta", 2).i("alpha", 3), at::addbmm(c, a, b, 2, 3));
}
OP_CASE("aten::addr", "beta_alpha") {
  at::Tensor c = rnd(dt, {3, 4}), a = rnd(dt, {3}), b = rnd(dt, {4});
  check("aten::addr", {c, a, b}, Attrs().i("beta", 1).i("alpha", 2), at::addr(c, a, b, 1, 2));
}
OP_CASE("aten::inner", "nd") {
  at::Tensor a = rnd(dt, {2, 3, 4}), b = rnd(dt, {5, 4});
  check("aten::inner", {a, b}, {}, at::inner(a, b));
}
OP_CASE("aten::vdot", "vectors") {
  at::Tensor a = rnd(dt, {6}), b = rnd(dt, {12}).slice(0, 0, 12, 2);  // strided
  check("aten::vdot", {a, b}, {}, at::vdot(a, b));
}
OP_CASE("aten::kron", "matrices") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {3, 2});
  check("aten::kron", {a, b}, {}, at::kron(a, b));
}
OP_CASE("aten::linalg_vecdot", "dim") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::linalg_vecdot", {a, b}, {}, at::linalg_vecdot(a, b));
  check("aten::linalg_vecdot", {a.t(), a.t()}, Attrs().i("dim", 0), at::linalg_vecdot(a.t(), a.t(), 0));
}
OP_CASE("aten::linalg_cross", "dim") {
  at::Tensor a = rnd(dt, {4, 3}), b = rnd(dt, {4, 3});
  check("aten::linalg_cross", {a, b}, {}, at::linalg_cross(a, b));
  check("aten::linalg_cross", {a.t(), b.t()}, Attrs().i("dim", 0), at::linalg_cross(a.t(), b.t(), 0));
}
OP_CASE("aten::cross", "default_dim") {
  at::Tensor a = rnd(dt, {3, 5}), b = rnd(dt, {3, 5});
  check("aten::cross", {a, b}, {}, at::cross(a, b));
}
OP_CASE("aten::linalg_multi_dot", "three") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {3, 4}), c = rnd(dt, {4, 2});
  check("aten::linalg_multi_dot", {a, b, c}, {}, at::linalg_multi_dot({a, b, c}));
}
OP_CASE("aten::chain_matmul", "three") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {3, 4}), c = rnd(dt, {4, 2});
  check("aten::chain_matmul", {a, b, c}, {}, at::chain_matmul({a, b, c}));
}
OP_CASE("aten::bilinear", "bias") {
  at::Tensor a = rnd(dt, {4, 3}), b = rnd(dt, {4, 5}), w = rnd(dt, {2, 3, 5}), bias = rnd(dt, {2});
  check("aten::bilinear", {a, b, w, bias}, {}, at::bilinear(a, b, w, bias));
  check("aten::bilinear", {a, b, w}, {}, at::bilinear(a, b, w));
}

// ---- solvers
#define SY_SQUARE_CASE(NAME)                     \
  OP_CASE("aten::" #NAME, "well_conditioned") {  \
    at::Tensor a = spd(dt, 4);                   \
    check("aten::" #NAME, {a}, {}, at::NAME(a)); \
  }
SY_SQUARE_CASE(linalg_det)
SY_SQUARE_CASE(det)
SY_SQUARE_CASE(logdet)
SY_SQUARE_CASE(linalg_inv)
SY_SQUARE_CASE(inverse)
OP_CASE("aten::linalg_slogdet", "batched") {
  at::Tensor a = at::stack({spd(dt, 3), -spd(dt, 3)});
  auto r = at::linalg_slogdet(a);
  check("aten::linalg_slogdet", {a}, {}, std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::slogdet", "plain") {
  at::Tensor a = spd(dt, 3);
  auto r = at::slogdet(a);
  check("aten::slogdet", {a}, {}, std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::linalg_solve", "left_right") {
  at::Tensor a = spd(dt, 4), b = rnd(dt, {4, 2}), c = rnd(dt, {2, 4});
  check("aten::linalg_solve", {a, b}, {}, at::linalg_solve(a, b));
  check("aten::linalg_solve", {a, c}, Attrs().b("left", false), at::linalg_solve(a, c, false));
}
OP_CASE("aten::linalg_matrix_power", "positive_negative") {
  at::Tensor a = spd(dt, 3) / 3;
  check("aten::linalg_matrix_power", {a}, Attrs().i("n", 3), at::linalg_matrix_power(a, 3));
  check("aten::linalg_matrix_power", {a}, Attrs().i("n", -2), at::linalg_matrix_power(a, -2));
}
OP_CASE("aten::matrix_power", "n") {
  at::Tensor a = spd(dt, 3) / 3;
  check("aten::matrix_power", {a}, Attrs().i("n", 2), at::matrix_power(a, 2));
}
OP_CASE("aten::linalg_cholesky", "upper") {
  at::Tensor a = spd(dt, 4);
  check("aten::linalg_cholesky", {a}, {}, at::linalg_cholesky(a));
  check("aten::linalg_cholesky", {a}, Attrs().b("upper", true), at::linalg_cholesky(a, true));
}
OP_CASE("aten::linalg_pinv", "rcond") {
  at::Tensor a = rnd(dt, {4, 3});
  check("aten::linalg_pinv", {a}, Attrs().f("rcond", 1e-6), at::linalg_pinv(a, 1e-6));
}
OP_CASE("aten::pinverse", "default") {
  at::Tensor a = rnd(dt, {3, 4});
  check("aten::pinverse", {a}, {}, at::pinverse(a));
}

// ---- distances
OP_CASE("aten::cdist", "p_and_compute_mode") {
  at::Tensor a = rnd(dt, {2, 5, 3}), b = rnd(dt, {2, 4, 3});
  check("aten::cdist", {a, b}, {}, at::cdist(a, b));
  check("aten::cdist", {a, b}, Attrs().f("p", 1), at::cdist(a, b, 1));
  check("aten::cdist", {a, b}, Attrs().i("compute_mode", 2), at::cdist(a, b, 2, 2));
}
OP_CASE("aten::pdist", "p") {
  at::Tensor a = rnd(dt, {5, 3});
  check("aten::pdist", {a}, {}, at::pdist(a));
  check("aten::pdist", {a}, Attrs().f("p", 3), at::pdist(a, 3));
}
OP_CASE("aten::pairwise_distance", "p_keepdim") {
  at::Tensor a = rnd(dt, {4, 6}), b = rnd(dt, {6});
  check("aten::pairwise_distance", {a, b}, {}, at::pairwise_distance(a, b));
  check("aten::pairwise_distance", {a, b}, Attrs().f("p", 1).b("keepdim", true),
        at::pairwise_distance(a, b, 1, 1e-6, true));
}

// ---- convolution
OP_CASE("aten::conv_transpose3d", "stride_groups") {
  at::Tensor x = rnd(dt, {1, 4, 3, 3, 3}), w = rnd(dt, {4, 1, 2, 2, 2}), b = rnd(dt, {2});
  check("aten::conv_transpose3d", {x, w, b}, Attrs().i("stride", 2).i("groups", 2),
        at::conv_transpose3d(x, w, b, 2, 0, 0, 2));
}
OP_CASE("aten::_convolution_mode", "same_valid") {
  at::Tensor x = rnd(dt, {1, 2, 7, 7}), w = rnd(dt, {4, 2, 3, 3}), b = rnd(dt, {4});
  Attrs same = Attrs().ints("stride", {1, 1}).s("padding", "same").ints("dilation", {2, 2}).i("groups", 1);
  check("aten::_convolution_mode", {x, w, b}, same, at::_convolution_mode(x, w, b, {1, 1}, "same", {2, 2}, 1));
  Attrs valid = Attrs(same).s("padding", "valid").ints("dilation", {1, 1});
  check("aten::_convolution_mode", {x, w, at::Tensor()}, valid,
        at::_convolution_mode(x, w, {}, {1, 1}, "valid", {1, 1}, 1));
}
OP_CASE("aten::conv_tbc", "pad") {
  at::Tensor x = rnd(dt, {6, 2, 3}), w = rnd(dt, {3, 3, 4}), b = rnd(dt, {4});
  check("aten::conv_tbc", {x, w, b}, Attrs().i("pad", 1), at::conv_tbc(x, w, b, 1));
}

// ---- embedding bags and dropout
// Only the bag values (and max mode's argmax) are compared: ATen leaves the other outputs
// (offset2bag, bag_size) partly unset in some modes.
OP_CASE("aten::embedding_bag", "modes_offsets_weights", at::kFloat, at::kDouble) {
  at::Tensor w = rnd(dt, {10, 3}), idx = at::randint(0, 10, {8}, at::kLong);
  at::Tensor off = at::tensor({0, 3, 3, 5}, at::kLong), psw = rnd(dt, {8});
  for (int64_t mode : {0, 1, 2})
    check("aten::embedding_bag", {w, idx, off}, Attrs().i("mode", mode),
          std::get<0>(at::embedding_bag(w, idx, off, false, mode)));
  Result max = run("aten::embedding_bag", {w, idx, off}, Attrs().i("mode", 2), 4);
  ASSERT_TRUE(max.ok()) << max.message;
  EXPECT_TRUE(same(max.outputs[3], std::get<3>(at::embedding_bag(w, idx, off, false, 2))));
  check("aten::embedding_bag", {w, idx, off, psw}, Attrs().i("mode", 0),
        std::get<0>(at::embedding_bag(w, idx, off, false, 0, false, psw)));
  at::Tensor off_last = at::tensor({0, 3, 8}, at::kInt);
  check("aten::embedding_bag", {w, idx.to(at::kInt), off_last}, Attrs().i("mode", 1).b("include_last_offset", true),
        std::get<0>(at::embedding_bag(w, idx.to(at::kInt), off_last, false, 1, false, {}, true)));
  // The .padding_idx overload (what nn.EmbeddingBag records).
  Attrs pad = Attrs()
                  .b("scale_grad_by_freq", false)
                  .i("mode", 1)
                  .b("sparse", false)
                  .b("include_last_offset", false)
                  .i("padding_idx", 2);
  check("aten::embedding_bag", {w, idx, off, at::Tensor()}, pad,
        std::get<0>(at::embedding_bag(w, idx, off, false, 1, false, {}, false, 2)));
}
OP_CASE("aten::feature_alpha_dropout", "eval_identity") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::feature_alpha_dropout", {x}, {}, x);
  check("aten::feature_alpha_dropout", {x}, Attrs().f("p", 0.3).b("train", false), x);
}
