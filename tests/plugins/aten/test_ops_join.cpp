// Conformance cases: more views, splits and joins (list inputs and list outputs), and
// more creation ops.
#include "aten_harness.hpp"

using namespace sy_test;

// ---- views (results are copies; values and shapes must match)
OP_CASE("aten::swapaxes", "strided") {
  at::Tensor x = rnd(dt, {2, 3, 4}).transpose(0, 2);
  check("aten::swapaxes", {x}, Attrs().i("axis0", 0).i("axis1", 1), at::swapaxes(x, 0, 1));
}
OP_CASE("aten::swapdims", "negative") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::swapdims", {x}, Attrs().i("dim0", -1).i("dim1", 0), at::swapdims(x, -1, 0));
}
OP_CASE("aten::mT", "batched") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::mT", {x}, {}, x.mT());
}
OP_CASE("aten::numpy_T", "reversed") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::numpy_T", {x}, {}, x.numpy_T());
}
OP_CASE("aten::ravel", "strided") {
  at::Tensor x = rnd(dt, {3, 4}).t();
  check("aten::ravel", {x}, {}, at::ravel(x));
}
OP_CASE("aten::fliplr", "matrix") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::fliplr", {x}, {}, at::fliplr(x));
}
OP_CASE("aten::flipud", "strided") {
  at::Tensor x = rnd(dt, {4, 3}).t();
  check("aten::flipud", {x}, {}, at::flipud(x));
}
OP_CASE("aten::rot90", "k_dims") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::rot90", {x}, {}, at::rot90(x));
  check("aten::rot90", {x}, Attrs().i("k", -1).ints("dims", {1, 2}), at::rot90(x, -1, {1, 2}));
  check("aten::rot90", {x}, Attrs().i("k", 2).ints("dims", {2, 0}), at::rot90(x, 2, {2, 0}));
}

OP_CASE("aten::repeat_interleave", "tensor_repeats") {
  at::Tensor x = rnd(dt, {3, 4}), rep = at::tensor({1, 0, 3, 2}, at::kLong);
  check("aten::repeat_interleave", {x, rep}, Attrs().i("dim", 1), at::repeat_interleave(x, rep, 1));
  check("aten::repeat_interleave", {x.t(), rep.to(at::kInt)}, Attrs().i("dim", 0),
        at::repeat_interleave(x.t(), rep.to(at::kInt), 0));
  at::Tensor flat = at::tensor({2, 1, 0, 2}, at::kLong).to(dt == at::kInt ? at::kInt : at::kLong);
  if (dt == at::kInt || dt == at::kLong) check("aten::repeat_interleave", {flat}, {}, at::repeat_interleave(flat));
}

// ---- splits: one node output per piece
namespace {
void check_pieces(const std::string& op, const at::Tensor& x, const Attrs& a, std::vector<at::Tensor> want) {
  check(op, {x}, a, want);
}
}  // namespace
OP_CASE("aten::tensor_split", "sections_and_indices") {
  at::Tensor x = rnd(dt, {7, 3});
  check_pieces("aten::tensor_split", x, Attrs().i("sections", 3), at::tensor_split(x, 3));
  check_pieces("aten::tensor_split", x.t(), Attrs().ints("indices", {1, 2}).i("dim", 1),
               at::tensor_split(x.t(), at::IntArrayRef{1, 2}, 1));
}
OP_CASE("aten::unsafe_split", "size") {
  at::Tensor x = rnd(dt, {5, 4});
  check_pieces("aten::unsafe_split", x, Attrs().i("split_size", 2), at::unsafe_split(x, 2));
}
OP_CASE("aten::unsafe_chunk", "dim") {
  at::Tensor x = rnd(dt, {3, 6});
  check_pieces("aten::unsafe_chunk", x, Attrs().i("chunks", 3).i("dim", 1), at::unsafe_chunk(x, 3, 1));
}

// ---- list inputs
OP_CASE("aten::broadcast_tensors", "three") {
  at::Tensor a = rnd(dt, {3, 1}), b = rnd(dt, {4}), c = rnd(dt, {2, 1, 1});
  check("aten::broadcast_tensors", {a, b, c}, {}, at::broadcast_tensors({a, b, c}));
}
OP_CASE("aten::meshgrid", "indexing") {
  at::Tensor a = rnd(dt, {3}), b = rnd(dt, {4});
  check("aten::meshgrid", {a, b}, {}, at::meshgrid({a, b}));
  check("aten::meshgrid", {a, b}, Attrs().s("indexing", "xy"), at::meshgrid({a, b}, "xy"));
  check("aten::meshgrid", {a, b}, Attrs().s("indexing", "ij"), at::meshgrid({a, b}, "ij"));
}
OP_CASE("aten::dstack", "mixed_ranks") {
  at::Tensor a = rnd(dt, {3}), b = rnd(dt, {1, 3}), c = rnd(dt, {1, 3, 2});
  check("aten::dstack", {a, b, c}, {}, at::dstack({a, b, c}));
}
OP_CASE("aten::column_stack", "vectors_and_matrix") {
  at::Tensor a = rnd(dt, {4}), b = rnd(dt, {4, 2}).t().t();
  check("aten::column_stack", {a, b}, {}, at::column_stack({a, b}));
}
OP_CASE("aten::block_diag", "shapes") {
  at::Tensor a = rnd(dt, {2, 2}), b = rnd(dt, {1, 3}), c = rnd(dt, {2});
  check("aten::block_diag", {a, b, c}, {}, at::block_diag({a, b, c}));
}
OP_CASE("aten::cartesian_prod", "three") {
  at::Tensor a = rnd(dt, {2}), b = rnd(dt, {3}), c = rnd(dt, {2});
  check("aten::cartesian_prod", {a, b, c}, {}, at::cartesian_prod({a, b, c}));
}

// ---- creation (dtype attributes; the case dtype is the requested one). The empty ops give
// zeros: their contents are unspecified, and zeros keep results reproducible.
OP_CASE("aten::empty", "zeros") {
  check("aten::empty", {}, Attrs().ints("size", {2, 3}).dtype("dtype", dt), at::zeros({2, 3}, dt));
}
OP_CASE("aten::empty_like", "zeros_dtype") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::empty_like", {x}, {}, at::zeros_like(x));
  check("aten::empty_like", {x}, Attrs().dtype("dtype", at::kFloat), at::zeros_like(x, at::kFloat));
}
OP_CASE("aten::new_empty", "size") {
  at::Tensor x = rnd(dt, {2});
  check("aten::new_empty", {x}, Attrs().ints("size", {3, 2}), at::zeros({3, 2}, dt));
}
OP_CASE("aten::new_full", "value_dtype") {
  at::Tensor x = rnd(dt, {2});
  check("aten::new_full", {x}, Attrs().ints("size", {2, 2}).i("fill_value", 1), x.new_full({2, 2}, 1));
  check("aten::new_full", {x}, Attrs().ints("size", {3}).f("fill_value", 2.5).dtype("dtype", at::kDouble),
        at::full({3}, 2.5, at::kDouble));
}
OP_CASE("aten::eye", "square_and_rect") {
  check("aten::eye", {}, Attrs().i("n", 3).dtype("dtype", dt), at::eye(3, dt));
  check("aten::eye", {}, Attrs().i("n", 2).i("m", 4).dtype("dtype", dt), at::eye(2, 4, dt));
}
OP_CASE("aten::linspace", "steps") {
  check("aten::linspace", {}, Attrs().i("start", -2).i("end", 6).i("steps", 5).dtype("dtype", dt),
        at::linspace(-2, 6, 5, dt));
}
OP_CASE("aten::linspace", "float_default_dtype", at::kFloat) {
  check("aten::linspace", {}, Attrs().f("start", 0.5).f("end", 1.5).i("steps", 7), at::linspace(0.5, 1.5, 7));
}
OP_CASE("aten::logspace", "base") {
  check("aten::logspace", {}, Attrs().i("start", 0).i("end", 3).i("steps", 4).f("base", 2).dtype("dtype", dt),
        at::logspace(0, 3, 4, 2, dt));
}
OP_CASE("aten::tril_indices", "offset") {
  check("aten::tril_indices", {}, Attrs().i("row", 4).i("col", 3).i("offset", 1).dtype("dtype", dt),
        at::tril_indices(4, 3, 1, dt));
}
OP_CASE("aten::triu_indices", "offset") {
  check("aten::triu_indices", {}, Attrs().i("row", 3).i("col", 5).i("offset", -1).dtype("dtype", dt),
        at::triu_indices(3, 5, -1, dt));
}
OP_CASE("aten::fill", "tensor_value") {
  at::Tensor x = rnd(dt, {2, 3}), v = rnd(dt, {});
  check("aten::fill", {x, v}, {}, at::fill(x, v));
}
