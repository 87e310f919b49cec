// Conformance cases: indexing and scattering, masked writes, the functional forms of
// in-place writes through views (what the importer emits), diagonals.
#include "aten_harness.hpp"

using namespace sy_test;

namespace {
at::Tensor longs(std::initializer_list<int64_t> v) { return at::tensor(v, at::kLong); }
}  // namespace

// ---- the functionalized writes, on strided (non-contiguous) bases and sources
OP_CASE("aten::slice_scatter", "strided_base_and_src") {
  at::Tensor x = rnd(dt, {4, 6}).t(), src = rnd(dt, {4, 3}).t().narrow(0, 0, 2);
  check("aten::slice_scatter", {x, src}, Attrs().i("dim", 0).i("start", 1).i("end", 5).i("step", 2),
        at::slice_scatter(x, src, 0, 1, 5, 2));
  at::Tensor src1 = rnd(dt, {6, 2});
  check("aten::slice_scatter", {x, src1}, Attrs().i("dim", 1).i("start", -2).none("end"),
        at::slice_scatter(x, src1, 1, -2));
}
OP_CASE("aten::select_scatter", "strided_negative_index") {
  at::Tensor x = rnd(dt, {4, 3, 5}).permute({2, 0, 1}), src = rnd(dt, {4, 5}).t();
  check("aten::select_scatter", {x, src}, Attrs().i("dim", 2).i("index", -1), at::select_scatter(x, src, 2, -1));
}
OP_CASE("aten::diagonal_scatter", "offsets_dims") {
  at::Tensor x = rnd(dt, {4, 5}), d0 = rnd(dt, {4}), d1 = rnd(dt, {3});
  check("aten::diagonal_scatter", {x, d0}, {}, at::diagonal_scatter(x, d0));
  check("aten::diagonal_scatter", {x.t(), d1}, Attrs().i("offset", -2), at::diagonal_scatter(x.t(), d1, -2));
  at::Tensor y = rnd(dt, {2, 3, 3}), d2 = rnd(dt, {3, 2}).t();  // strided source
  check("aten::diagonal_scatter", {y, d2}, Attrs().i("dim1", 1).i("dim2", 2), at::diagonal_scatter(y, d2, 0, 1, 2));
}
OP_CASE("aten::as_strided_scatter", "window") {
  at::Tensor x = rnd(dt, {4, 4}), src = rnd(dt, {2, 2});
  check("aten::as_strided_scatter", {x, src},
        Attrs().ints("size", {2, 2}).ints("stride", {4, 2}).i("storage_offset", 1),
        at::as_strided_scatter(x, src, {2, 2}, {4, 2}, 1));
}
// index_put: the indices list is followed by `values` (one input): the list takes the rest.
OP_CASE("aten::index_put", "indices_then_values_accumulate") {
  at::Tensor x = rnd(dt, {5, 3}), i = longs({4, 0, 4}), v = rnd(dt, {3, 3});
  using L = c10::List<c10::optional<at::Tensor>>;
  check("aten::index_put", {x, i, v}, {}, at::index_put(x, L({i}), v));
  if (dt != at::kBool)
    check("aten::index_put", {x, i, v}, Attrs().b("accumulate", true), at::index_put(x, L({i}), v, true));
  at::Tensor j = longs({2, 1, 0}), w = rnd(dt, {3});
  check("aten::index_put", {x, i, j, w}, {}, at::index_put(x, L({i, j}), w));
  check("aten::index_put", {x, at::Tensor(), j, w.narrow(0, 0, 1)}, {},
        at::index_put(x, L({c10::nullopt, j}), w.narrow(0, 0, 1)));
  at::Tensor mask = rnd(at::kBool, {5, 3}), one = rnd(dt, {});
  check("aten::index_put", {x.t().t(), mask, one}, {}, at::index_put(x, L({mask}), one));
}
OP_CASE("aten::index_put_", "out_of_place") {
  at::Tensor x = rnd(dt, {5, 3}), copy = x.clone(), i = longs({1, 3}), v = rnd(dt, {3});
  check("aten::index_put_", {x, i, v}, {}, at::index_put(x, c10::List<c10::optional<at::Tensor>>({i}), v));
  EXPECT_TRUE(at::equal(x, copy));
}
OP_CASE("aten::masked_scatter", "broadcast_mask_strided") {
  at::Tensor x = rnd(dt, {4, 3}).t(), mask = rnd(at::kBool, {4}), src = rnd(dt, {3, 4});
  check("aten::masked_scatter", {x, mask, src}, {}, at::masked_scatter(x, mask, src));
}
OP_CASE("aten::masked_scatter_", "out_of_place") {
  at::Tensor x = rnd(dt, {3, 4}), mask = rnd(at::kBool, {3, 4}), src = rnd(dt, {12});
  check("aten::masked_scatter_", {x, mask, src}, {}, at::masked_scatter(x, mask, src));
}
OP_CASE("aten::copy_", "broadcast_and_cast") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {4}), copy = x.clone();
  check("aten::copy_", {x, src}, {}, src.expand({3, 4}).clone());
  at::Tensor other = rnd(at::kDouble, {3, 4}).t();
  check("aten::copy_", {x.t(), other}, {}, other.to(dt));
  EXPECT_TRUE(at::equal(x, copy));
}
OP_CASE("aten::fill_", "scalar_and_tensor") {
  at::Tensor x = rnd(dt, {3, 4}).t();
  check("aten::fill_", {x}, Attrs().i("value", 1), at::full_like(x, 1));
  at::Tensor v = rnd(dt, {});
  check("aten::fill_", {x, v}, {}, at::fill(x, v));
}
OP_CASE("aten::zero_", "strided") {
  at::Tensor x = rnd(dt, {3, 4}).t();
  check("aten::zero_", {x}, {}, at::zeros_like(x));
}

// ---- scatter family
OP_CASE("aten::scatter", "reduce", at::kFloat, at::kDouble, at::kLong) {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 2}), i = at::randint(0, 4, {3, 2}, at::kLong);
  for (const char* reduce : {"add", "multiply"})
    check("aten::scatter", {x, i, src}, Attrs().i("dim", 1).s("reduce", reduce), at::scatter(x, 1, i, src, reduce));
}
OP_CASE("aten::scatter_", "src_and_value") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 4}), i = longs({0, 2, 3}).view({3, 1});
  check("aten::scatter_", {x, i, src}, Attrs().i("dim", 1), at::scatter(x, 1, i, src));
  check("aten::scatter_", {x, i}, Attrs().i("dim", 1).i("value", 1), at::scatter(x, 1, i, 1));
}
OP_CASE("aten::scatter_add_", "dim") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 2}), i = at::randint(0, 4, {3, 2}, at::kLong);
  check("aten::scatter_add_", {x, i, src}, Attrs().i("dim", 1), at::scatter_add(x, 1, i, src));
}
OP_CASE("aten::scatter_reduce", "reductions_include_self") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 5}), i = at::randint(0, 4, {3, 5}, at::kLong);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    if (std::string(reduce) == "mean" && !at::isFloatingType(dt)) continue;  // ATen floors
    check("aten::scatter_reduce", {x, i, src}, Attrs().i("dim", 1).s("reduce", reduce),
          at::scatter_reduce(x, 1, i, src, reduce));
    check("aten::scatter_reduce", {x, i, src}, Attrs().i("dim", 1).s("reduce", reduce).b("include_self", false),
          at::scatter_reduce(x, 1, i, src, reduce, false));
  }
}

// ---- index_* writes
OP_CASE("aten::index_add", "alpha_int32_index") {
  at::Tensor x = rnd(dt, {5, 3}), src = rnd(dt, {4, 3}), i = longs({0, 4, 0, 2});
  check("aten::index_add", {x, i, src}, Attrs().i("dim", 0), at::index_add(x, 0, i, src));
  check("aten::index_add", {x, i.to(at::kInt), src}, Attrs().i("dim", 0).i("alpha", 2),
        at::index_add(x, 0, i.to(at::kInt), src, 2));
}
OP_CASE("aten::index_add_", "out_of_place") {
  at::Tensor x = rnd(dt, {3, 5}), src = rnd(dt, {3, 2}), i = longs({1, 1});
  check("aten::index_add_", {x, i, src}, Attrs().i("dim", 1), at::index_add(x, 1, i, src));
}
OP_CASE("aten::index_copy", "dim") {
  at::Tensor x = rnd(dt, {5, 3}), src = rnd(dt, {2, 3}), i = longs({3, 1});
  check("aten::index_copy", {x, i, src}, Attrs().i("dim", 0), at::index_copy(x, 0, i, src));
  check("aten::index_copy_", {x.t(), i, src.t()}, Attrs().i("dim", 1), at::index_copy(x.t(), 1, i, src.t()));
}
OP_CASE("aten::index_copy_", "out_of_place") {
  at::Tensor x = rnd(dt, {5, 3}), src = rnd(dt, {1, 3}), i = longs({4});
  check("aten::index_copy_", {x, i, src}, Attrs().i("dim", 0), at::index_copy(x, 0, i, src));
}
OP_CASE("aten::index_fill", "scalar_and_tensor_value") {
  at::Tensor x = rnd(dt, {4, 3}), i = longs({2, 0});
  check("aten::index_fill", {x, i}, Attrs().i("dim", 0).i("value", 1), at::index_fill(x, 0, i, 1));
  at::Tensor v = rnd(dt, {});
  check("aten::index_fill", {x, i, v}, Attrs().i("dim", 1), at::index_fill(x, 1, i, v));
}
OP_CASE("aten::index_fill_", "out_of_place") {
  at::Tensor x = rnd(dt, {4, 3}), i = longs({1});
  check("aten::index_fill_", {x, i}, Attrs().i("dim", 1).i("value", 0), at::index_fill(x, 1, i, 0));
}

// ---- reads
OP_CASE("aten::take", "flat_index") {
  at::Tensor x = rnd(dt, {3, 4}).t(), i = at::randint(-12, 12, {2, 3}, at::kLong);
  check("aten::take", {x, i}, {}, at::take(x, i));
}
OP_CASE("aten::take_along_dim", "dim_and_flat") {
  at::Tensor x = rnd(dt, {3, 4}), i = at::randint(0, 4, {3, 2}, at::kLong);
  check("aten::take_along_dim", {x, i}, Attrs().i("dim", 1), at::take_along_dim(x, i, 1));
  at::Tensor f = at::randint(0, 12, {5}, at::kLong);
  check("aten::take_along_dim", {x, f}, {}, at::take_along_dim(x, f));
}
OP_CASE("aten::argwhere", "dynamic_shape") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::argwhere", {x}, {}, at::argwhere(x));
}
OP_CASE("aten::isin", "tensor_and_scalar_invert") {
  at::Tensor x = rnd(dt, {3, 4}), t = rnd(dt, {5});
  check("aten::isin", {x, t}, {}, at::isin(x, t));
  check("aten::isin", {x, t}, Attrs().b("invert", true), at::isin(x, t, false, true));
  check("aten::isin", {x}, Attrs().i("test_element", 1), at::isin(x, 1));
}
OP_CASE("aten::diagonal", "offset_dims") {
  at::Tensor x = rnd(dt, {3, 4, 5});
  check("aten::diagonal", {x}, {}, at::diagonal(x));
  check("aten::diagonal", {x}, Attrs().i("offset", 1).i("dim1", 1).i("dim2", 2), at::diagonal(x, 1, 1, 2));
}
OP_CASE("aten::diag", "vector_and_matrix") {
  at::Tensor v = rnd(dt, {4}), m = rnd(dt, {3, 4}).t();
  check("aten::diag", {v}, {}, at::diag(v));
  check("aten::diag", {m}, Attrs().i("diagonal", -1), at::diag(m, -1));
}
OP_CASE("aten::diag_embed", "offset") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::diag_embed", {x}, {}, at::diag_embed(x));
  check("aten::diag_embed", {x}, Attrs().i("offset", 1).i("dim1", 0).i("dim2", 2), at::diag_embed(x, 1, 0, 2));
}
