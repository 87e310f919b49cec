// Conformance cases: reductions, norms, sorting and searching, cumulative ops.
#include "aten_harness.hpp"

using namespace sy_test;

// ---- sorting and order statistics
OP_CASE("aten::sort", "stable") {
  at::Tensor x = at::randint(0, 3, {4, 6}, at::kLong).to(dt);
  auto r = at::sort(x, true, 1, true);
  check("aten::sort", {x}, Attrs().b("stable", true).i("dim", 1).b("descending", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::argsort", "stable") {
  at::Tensor x = at::randint(0, 3, {4, 6}, at::kLong).to(dt).t();
  check("aten::argsort", {x}, Attrs().b("stable", true).i("dim", 0), at::argsort(x, true, 0, false));
}
OP_CASE("aten::msort", "strided") {
  at::Tensor x = rnd(dt, {5, 3}).t();
  check("aten::msort", {x}, {}, at::msort(x));
}
OP_CASE("aten::kthvalue", "k_dim_keepdim") {
  at::Tensor x = rnd(dt, {3, 6});
  auto r = at::kthvalue(x, 2, 1, true);
  check("aten::kthvalue", {x}, Attrs().i("k", 2).i("dim", 1).b("keepdim", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::median", "all_and_dim") {
  at::Tensor x = rnd(dt, {3, 5});
  check("aten::median", {x}, {}, at::median(x));
  auto r = at::median(x, 1);
  check("aten::median", {x}, Attrs().i("dim", 1), std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::nanmedian", "all_and_dim") {
  at::Tensor x = rnd(dt, {3, 5});
  if (at::isFloatingType(dt)) x[1][2] = NAN;
  check("aten::nanmedian", {x}, {}, at::nanmedian(x));
  auto r = at::nanmedian(x, 1, true);
  check("aten::nanmedian", {x}, Attrs().i("dim", 1).b("keepdim", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::mode", "dim") {
  at::Tensor x = at::randint(0, 3, {3, 7}, at::kLong).to(dt);
  auto r = at::mode(x, 1);
  check("aten::mode", {x}, Attrs().i("dim", 1), std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::quantile", "tensor_and_scalar_q") {
  at::Tensor x = rnd(dt, {4, 6}), q = at::tensor({0.1, 0.5, 0.9}, at::kDouble).to(dt);
  check("aten::quantile", {x, q}, Attrs().i("dim", 1), at::quantile(x, q, 1));
  check("aten::quantile", {x}, Attrs().f("q", 0.3).i("dim", 0).b("keepdim", true).s("interpolation", "nearest"),
        at::quantile(x, 0.3, 0, true, "nearest"));
  check("aten::quantile", {x.t()}, Attrs().f("q", 0.75), at::quantile(x.t(), 0.75));
}
OP_CASE("aten::nanquantile", "scalar_q") {
  at::Tensor x = rnd(dt, {4, 6});
  x[0][0] = NAN;
  check("aten::nanquantile", {x}, Attrs().f("q", 0.5).i("dim", 1), at::nanquantile(x, 0.5, 1));
}
OP_CASE("aten::_unique2", "inverse_counts") {
  at::Tensor x = at::randint(0, 5, {3, 6}, at::kLong).to(dt);
  auto r = at::_unique2(x, true, true, true);
  check("aten::_unique2", {x}, Attrs().b("sorted", true).b("return_inverse", true).b("return_counts", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r)});
}
OP_CASE("aten::unique_consecutive", "inverse_counts_dim") {
  at::Tensor x = at::randint(0, 2, {10}, at::kLong).to(dt);
  auto r = at::unique_consecutive(x, true, true);
  check("aten::unique_consecutive", {x}, Attrs().b("return_inverse", true).b("return_counts", true),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r), std::get<2>(r)});
  at::Tensor m = at::randint(0, 2, {4, 3}, at::kLong).to(dt);
  check("aten::unique_consecutive", {m}, Attrs().i("dim", 0), std::get<0>(at::unique_consecutive(m, false, false, 0)));
}
OP_CASE("aten::searchsorted", "right_side_sorter") {
  at::Tensor seq = std::get<0>(at::sort(rnd(dt, {2, 6}), -1)), v = rnd(dt, {2, 4});
  check("aten::searchsorted", {seq, v}, {}, at::searchsorted(seq, v));
  check("aten::searchsorted", {seq, v}, Attrs().b("right", true).b("out_int32", true),
        at::searchsorted(seq, v, true, true));
  check("aten::searchsorted", {seq, v}, Attrs().s("side", "right"), at::searchsorted(seq, v, false, false, "right"));
  at::Tensor unsorted = rnd(dt, {2, 6}), sorter = at::argsort(unsorted, int64_t{-1});
  check("aten::searchsorted", {unsorted, v, sorter}, {},
        at::searchsorted(unsorted, v, false, false, c10::nullopt, sorter));
}
OP_CASE("aten::bucketize", "right") {
  at::Tensor b = std::get<0>(at::sort(rnd(dt, {5}))), v = rnd(dt, {3, 4});
  check("aten::bucketize", {v, b}, {}, at::bucketize(v, b));
  check("aten::bucketize", {v, b}, Attrs().b("right", true), at::bucketize(v, b, false, true));
}

// ---- cumulative
OP_CASE("aten::cummax", "dim_strided") {
  at::Tensor x = rnd(dt, {5, 3}).t();
  auto r = at::cummax(x, 1);
  check("aten::cummax", {x}, Attrs().i("dim", 1), std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::cummin", "dim") {
  at::Tensor x = rnd(dt, {3, 5});
  auto r = at::cummin(x, 0);
  check("aten::cummin", {x}, Attrs().i("dim", 0), std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
}
OP_CASE("aten::logcumsumexp", "dim") {
  at::Tensor x = rnd(dt, {3, 5});
  check("aten::logcumsumexp", {x}, Attrs().i("dim", 1), at::logcumsumexp(x, 1));
}

// ---- reductions
OP_CASE("aten::aminmax", "all_and_dim") {
  at::Tensor x = rnd(dt, {3, 5});
  auto a = at::aminmax(x), d = at::aminmax(x, 1, true);
  check("aten::aminmax", {x}, {}, std::vector<at::Tensor>{std::get<0>(a), std::get<1>(a)});
  check("aten::aminmax", {x}, Attrs().i("dim", 1).b("keepdim", true),
        std::vector<at::Tensor>{std::get<0>(d), std::get<1>(d)});
}
OP_CASE("aten::nansum", "dims") {
  at::Tensor x = rnd(dt, {3, 5});
  if (at::isFloatingType(dt)) x[0][1] = NAN;
  check("aten::nansum", {x}, {}, at::nansum(x));
  check("aten::nansum", {x}, Attrs().ints("dim", {1}).b("keepdim", true), at::nansum(x, {1}, true));
}
OP_CASE("aten::nanmean", "dims") {
  at::Tensor x = rnd(dt, {3, 5});
  x[2][3] = NAN;
  check("aten::nanmean", {x}, {}, at::nanmean(x));
  check("aten::nanmean", {x}, Attrs().ints("dim", {0}), at::nanmean(x, {0}));
}
#define SY_STAT_MEAN_CASE(NAME)                                                         \
  OP_CASE("aten::" #NAME, "plain_dim_correction") {                                     \
    at::Tensor x = rnd(dt, {4, 5}).t();                                                 \
    auto pair = [](std::tuple<at::Tensor, at::Tensor> r) {                              \
      return std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)};                   \
    };                                                                                  \
    check("aten::" #NAME, {x}, Attrs().b("unbiased", false), pair(at::NAME(x, false))); \
    check("aten::" #NAME, {x}, Attrs().ints("dim", {1}).b("keepdim", true),             \
          pair(at::NAME(x, at::IntArrayRef{1}, true, true)));                           \
    check("aten::" #NAME, {x}, Attrs().ints("dim", {0}).i("correction", 0),             \
          pair(at::NAME(x, at::IntArrayRef{0}, c10::optional<int64_t>(0), false)));     \
  }
SY_STAT_MEAN_CASE(std_mean)
SY_STAT_MEAN_CASE(var_mean)
OP_CASE("aten::trace", "strided") {
  at::Tensor x = rnd(dt, {4, 5}).t();
  check("aten::trace", {x}, {}, at::trace(x));
}

// ---- norms
OP_CASE("aten::linalg_norm", "vector_matrix_and_str_ord") {
  at::Tensor x = rnd(dt, {3, 4}), v = rnd(dt, {6});
  check("aten::linalg_norm", {v}, {}, at::linalg_norm(v));
  check("aten::linalg_norm", {x}, Attrs().i("ord", 1).ints("dim", {1}).b("keepdim", true),
        at::linalg_norm(x, 1, at::IntArrayRef{1}, true));
  check("aten::linalg_norm", {x}, Attrs().f("ord", INFINITY).ints("dim", {0, 1}),
        at::linalg_norm(x, INFINITY, at::IntArrayRef{0, 1}));
  if (dt == at::kFloat || dt == at::kDouble)
    check("aten::linalg_norm", {x}, Attrs().s("ord", "fro"), at::linalg_norm(x, "fro"));
}
OP_CASE("aten::linalg_norm", "nuclear", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::linalg_norm", {x}, Attrs().s("ord", "nuc").ints("dim", {1, 2}),
        at::linalg_norm(x, "nuc", at::IntArrayRef{1, 2}));
}
OP_CASE("aten::linalg_matrix_norm", "scalar_and_str_ord") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::linalg_matrix_norm", {x}, Attrs().i("ord", 1), at::linalg_matrix_norm(x, 1));
  check("aten::linalg_matrix_norm", {x}, Attrs().f("ord", -INFINITY).b("keepdim", true),
        at::linalg_matrix_norm(x, -INFINITY, {-2, -1}, true));
  check("aten::linalg_matrix_norm", {x}, {}, at::linalg_matrix_norm(x, "fro"));
  check("aten::linalg_matrix_norm", {x}, Attrs().s("ord", "nuc").ints("dim", {0, 2}),
        at::linalg_matrix_norm(x, "nuc", {0, 2}));
}
OP_CASE("aten::frobenius_norm", "all_and_dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::frobenius_norm", {x}, {}, at::frobenius_norm(x));
  check("aten::frobenius_norm", {x}, Attrs().ints("dim", {1}), at::frobenius_norm(x, {1}));
}
OP_CASE("aten::nuclear_norm", "all_and_dim") {
  at::Tensor x = rnd(dt, {3, 4}), y = rnd(dt, {2, 3, 4});
  check("aten::nuclear_norm", {x}, {}, at::nuclear_norm(x));
  check("aten::nuclear_norm", {y}, Attrs().ints("dim", {1, 2}).b("keepdim", true), at::nuclear_norm(y, {1, 2}, true));
}
OP_CASE("aten::renorm", "maxnorm") {
  at::Tensor x = rnd(dt, {3, 4}) * 3;
  check("aten::renorm", {x}, Attrs().i("p", 2).i("dim", 0).f("maxnorm", 1.0), at::renorm(x, 2, 0, 1.0));
}
OP_CASE("aten::dist", "p") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::dist", {a, b}, {}, at::dist(a, b));
  check("aten::dist", {a, b}, Attrs().i("p", 1), at::dist(a, b, 1));
}
