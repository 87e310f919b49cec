// aten plugin: indexing, gathering and scattering, masked and in-place-write ops.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
//
// The *_scatter / index_put / masked_scatter ops are what the importer emits when it
// makes an in-place write through a view functional.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kFI = kF | kI;
constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

// Shared by an op and its in-place spelling (run out of place).
at::Tensor index_add(const Call& c) { return at::index_add(c.t(0), c.i(1), c.t(2), c.t(3), c.scalar(4)); }
at::Tensor index_copy(const Call& c) { return at::index_copy(c.t(0), c.i(1), c.t(2), c.t(3)); }
at::Tensor index_fill(const Call& c) {
  return c.is_tensor(3) ? at::index_fill(c.t(0), c.i(1), c.t(2), c.t(3))
                        : at::index_fill(c.t(0), c.i(1), c.t(2), c.scalar(3));
}
at::Tensor index_put(const Call& c) { return at::index_put(c.t(0), c.opt_list(1), c.t(2), c.b(3)); }
at::Tensor masked_scatter(const Call& c) { return at::masked_scatter(c.t(0), c.t(1), c.t(2)); }

}  // namespace

void register_index_ops(Registry& r) {
  r.family("indexing");
  r.def("select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", kAll,
        [](const Call& c) { return at::select(c.t(0), c.i(1), c.i(2)); });
  r.def(
      "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
      "SymInt step=1) -> Tensor(a)",
      kAll, [](const Call& c) { return at::slice(c.t(0), c.i(1), c.oi(2), c.oi(3), c.i(4)); });
  r.def("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", kAll,
        [](const Call& c) { return at::narrow(c.t(0), c.i(1), c.i(2), c.i(3)); });
  r.def("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).unfold(c.i(1), c.i(2), c.i(3)); });
  r.def("index.Tensor(Tensor self, Tensor<any>?[] indices) -> Tensor", kAll,
        [](const Call& c) { return at::index(c.t(0), c.opt_list(1)); });
  r.def("index_select(Tensor self, int dim, Tensor<idx> index) -> Tensor", kAll,
        [](const Call& c) { return at::index_select(c.t(0), c.i(1), c.t(2)); });
  r.def("gather(Tensor self, int dim, Tensor<long> index, *, bool sparse_grad=False) -> Tensor", kAll,
        [](const Call& c) { return at::gather(c.t(0), c.i(1), c.t(2), c.b(3)); });
  r.def("scatter.src(Tensor self, int dim, Tensor<long> index, Tensor src) -> Tensor", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def("scatter.value(Tensor self, int dim, Tensor<long> index, Scalar value) -> Tensor", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.scalar(3)); });
  r.def("scatter_add(Tensor self, int dim, Tensor<long> index, Tensor src) -> Tensor", kFI,
        [](const Call& c) { return at::scatter_add(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def(
      "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
      "SymInt step=1) -> Tensor",
      kAll, [](const Call& c) { return at::slice_scatter(c.t(0), c.t(1), c.i(2), c.oi(3), c.oi(4), c.i(5)); });
  r.def("select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor", kAll,
        [](const Call& c) { return at::select_scatter(c.t(0), c.t(1), c.i(2), c.i(3)); });
  r.def("masked_select(Tensor self, Tensor<bool> mask) -> Tensor", kAll,
        [](const Call& c) { return at::masked_select(c.t(0), c.t(1)); });
  r.def("nonzero(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::nonzero(c.t(0)); });
  r.def("triu(Tensor self, int diagonal=0) -> Tensor", kAll, [](const Call& c) { return at::triu(c.t(0), c.i(1)); });
  r.def("tril(Tensor self, int diagonal=0) -> Tensor", kAll, [](const Call& c) { return at::tril(c.t(0), c.i(1)); });
  r.def("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::diagonal(c.t(0), c.i(1), c.i(2), c.i(3)); });
  r.def("diag(Tensor self, int diagonal=0) -> Tensor", kAll & ~kH,
        [](const Call& c) { return at::diag(c.t(0), c.i(1)); });
  r.def("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", kAll,
        [](const Call& c) { return at::diag_embed(c.t(0), c.i(1), c.i(2), c.i(3)); });
  r.def("take(Tensor self, Tensor<long> index) -> Tensor", kAll,
        [](const Call& c) { return at::take(c.t(0), c.t(1)); });
  r.def("take_along_dim(Tensor self, Tensor<long> indices, int? dim=None) -> Tensor", kAll,
        [](const Call& c) { return at::take_along_dim(c.t(0), c.t(1), c.oi(2)); });
  r.def("argwhere(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::argwhere(c.t(0)); });
  r.def(
      "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
      "bool invert=False) -> Tensor",
      kF32_64 | kI, [](const Call& c) { return at::isin(c.t(0), c.t(1), c.b(2), c.b(3)); });
  r.def(
      "isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
      "bool invert=False) -> Tensor",
      kF32_64 | kI, [](const Call& c) { return at::isin(c.t(0), c.scalar(1), c.b(2), c.b(3)); });

  // ---- scattering writes; the in-place spellings (trailing _) run out of place
  r.def(
      "scatter.reduce(Tensor self, int dim, Tensor<long> index, Tensor src, *, str reduce) -> "
      "Tensor",
      kFI, [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.t(3), c.s(4)); });
  r.def("scatter_.src(Tensor(a!) self, int dim, Tensor<long> index, Tensor src) -> Tensor(a!)", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def("scatter_.value(Tensor(a!) self, int dim, Tensor<long> index, Scalar value) -> Tensor(a!)", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.scalar(3)); });
  r.def("scatter_add_(Tensor(a!) self, int dim, Tensor<long> index, Tensor src) -> Tensor(a!)", kFI,
        [](const Call& c) { return at::scatter_add(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def(
      "scatter_reduce.two(Tensor self, int dim, Tensor<long> index, Tensor src, str reduce, *, "
      "bool include_self=True) -> Tensor",
      kFI, [](const Call& c) { return at::scatter_reduce(c.t(0), c.i(1), c.t(2), c.t(3), c.s(4), c.b(5)); });
  r.def(
      "index_add(Tensor self, int dim, Tensor<idx> index, Tensor source, *, Scalar alpha=1) -> "
      "Tensor",
      kFI, index_add);
  r.def(
      "index_add_(Tensor(a!) self, int dim, Tensor<idx> index, Tensor source, *, "
      "Scalar alpha=1) -> Tensor(a!)",
      kFI, index_add);
  r.def("index_copy(Tensor self, int dim, Tensor<long> index, Tensor source) -> Tensor", kAll, index_copy);
  r.def("index_copy_(Tensor(a!) self, int dim, Tensor<long> index, Tensor source) -> Tensor(a!)", kAll, index_copy);
  r.def("index_fill.int_Scalar(Tensor self, int dim, Tensor<long> index, Scalar value) -> Tensor", kAll, index_fill);
  r.def("index_fill.int_Tensor(Tensor self, int dim, Tensor<long> index, Tensor value) -> Tensor", kAll, index_fill);
  r.def(
      "index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor<long> index, Scalar value) -> "
      "Tensor(a!)",
      kAll, index_fill);
  r.def(
      "index_put(Tensor self, Tensor<any>?[] indices, Tensor values, bool accumulate=False) -> "
      "Tensor",
      kAll, index_put);
  r.def(
      "index_put_(Tensor(a!) self, Tensor<any>?[] indices, Tensor values, "
      "bool accumulate=False) -> Tensor(a!)",
      kAll, index_put);
  r.def("masked_scatter(Tensor self, Tensor<bool> mask, Tensor source) -> Tensor", kAll, masked_scatter);
  r.def("masked_scatter_(Tensor(a!) self, Tensor<bool> mask, Tensor source) -> Tensor(a!)", kAll, masked_scatter);
  r.def(
      "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> "
      "Tensor",
      kAll, [](const Call& c) { return at::diagonal_scatter(c.t(0), c.t(1), c.i(2), c.i(3), c.i(4)); });
  r.def(
      "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
      "SymInt? storage_offset=None) -> Tensor",
      kAll, [](const Call& c) { return at::as_strided_scatter(c.t(0), c.t(1), c.ints(2), c.ints(3), c.oi(4)); });
  // Whole-tensor writes: the value the written tensor holds afterwards.
  r.def("copy_(Tensor(a!) self, Tensor<any> src, bool non_blocking=False) -> Tensor(a!)", kAll,
        [](const Call& c) { return at::empty(c.t(0).sizes(), c.t(0).options()).copy_(c.t(1)); });
  r.def("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", kAll,
        [](const Call& c) { return at::fill(c.t(0), c.scalar(1)); });
  r.def("fill_.Tensor(Tensor(a!) self, Tensor<any> value) -> Tensor(a!)", kAll,
        [](const Call& c) { return at::fill(c.t(0), c.t(1)); });
  r.def("zero_(Tensor(a!) self) -> Tensor(a!)", kAll, [](const Call& c) { return at::zeros_like(c.t(0)); });
}

}  // namespace sy_aten
