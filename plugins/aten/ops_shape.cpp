// aten plugin: views and reshapes, joins and splits, indexing, dtype casts, tensor
// creation, reductions. One table line per ATen overload; see aten_ops.hpp.
//
// View ops return an alias of their input in ATen; run() copies such results (the host
// owns the input), so here they cost one copy. See the note in aten_plugin.cpp.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kFI = kF | kI;
constexpr DtypeMask kFIB = kF | kI | kB;
constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

c10::optional<at::MemoryFormat> memory_format(const Call& c, size_t k) {
  return c.none(k) ? c10::nullopt
                   : c10::optional<at::MemoryFormat>(static_cast<at::MemoryFormat>(c.i(k)));
}
// Creation ops: dtype from the attribute; layout and device were checked at binding (CPU,
// strided only).
at::TensorOptions options(const Call& c, size_t dtype_arg) {
  at::TensorOptions o = at::TensorOptions().device(at::kCPU);
  if (!c.none(dtype_arg)) o = o.dtype(*c.dtype(dtype_arg));
  return o;
}
at::Tensor cat(const Call& c) { return at::cat(c.list(0), c.i(1)); }
at::Tensor to_dtype(const Call& c) {
  return c.t(0).to(*c.dtype(1), c.b(2), c.b(3), memory_format(c, 4));
}

}  // namespace

void register_shape_ops(Registry& r) {
  r.family("shape");
  r.def("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::flatten(c.t(0), c.i(1), c.i(2)); });
  r.def("unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", kAll,
        [](const Call& c) { return at::unflatten(c.t(0), c.i(1), c.ints(2)); });
  r.def("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", kAll,
        [](const Call& c) { return at::reshape(c.t(0), c.ints(1)); });
  r.def("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).view(c.ints(1)); });
  r.def("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", kAll,
        [](const Call& c) { return at::_unsafe_view(c.t(0), c.ints(1)); });
  r.def("view_as(Tensor(a) self, Tensor<any> other) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).view_as(c.t(1)); });
  r.def("reshape_as(Tensor(a) self, Tensor<any> other) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).reshape_as(c.t(1)); });
  r.def("permute(Tensor(a) self, int[] dims) -> Tensor(a)", kAll,
        [](const Call& c) { return at::permute(c.t(0), c.ints(1)); });
  r.def("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::transpose(c.t(0), c.i(1), c.i(2)); });
  r.def("t(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return at::t(c.t(0)); });
  r.def("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", kAll,
        [](const Call& c) { return at::movedim(c.t(0), c.ints(1), c.ints(2)); });
  r.def("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", kAll,
        [](const Call& c) { return at::unsqueeze(c.t(0), c.i(1)); });
  r.def("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", kAll,
        [](const Call& c) { return at::squeeze(c.t(0), c.i(1)); });
  r.def("squeeze(Tensor(a) self) -> Tensor(a)", kAll,
        [](const Call& c) { return at::squeeze(c.t(0)); });
  r.def("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).expand(c.ints(1), c.b(2)); });
  r.def("expand_as(Tensor(a) self, Tensor<any> other) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).expand_as(c.t(1)); });
  r.def("broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)", kAll,
        [](const Call& c) { return at::broadcast_to(c.t(0), c.ints(1)); });
  r.def("contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).contiguous(*memory_format(c, 1)); });
  r.def("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", kAll,
        [](const Call& c) { return at::clone(c.t(0), memory_format(c, 1)); });
  r.def("alias(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0); });
  r.def("detach(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0); });
  r.def("lift_fresh(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0); });

  r.family("join");
  r.def("cat(Tensor[] tensors, int dim=0) -> Tensor", kAll, cat);
  r.def("concat(Tensor[] tensors, int dim=0) -> Tensor", kAll, cat);
  r.def("stack(Tensor[] tensors, int dim=0) -> Tensor", kAll,
        [](const Call& c) { return at::stack(c.list(0), c.i(1)); });
  r.def("hstack(Tensor[] tensors) -> Tensor", kAll,
        [](const Call& c) { return at::hstack(c.list(0)); });
  r.def("vstack(Tensor[] tensors) -> Tensor", kAll,
        [](const Call& c) { return at::vstack(c.list(0)); });
  r.def("split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::split(c.t(0), c.i(1), c.i(2)); });
  r.def("split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::split_with_sizes(c.t(0), c.ints(1), c.i(2)); });
  r.def("split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
        kAll, [](const Call& c) { return at::split_with_sizes(c.t(0), c.ints(1), c.i(2)); });
  r.def("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::chunk(c.t(0), c.i(1), c.i(2)); });
  r.def("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::unbind(c.t(0), c.i(1)); });
  r.def("flip(Tensor self, int[] dims) -> Tensor", kAll,
        [](const Call& c) { return at::flip(c.t(0), c.ints(1)); });
  r.def("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", kAll,
        [](const Call& c) { return at::roll(c.t(0), c.ints(1), c.ints(2)); });
  r.def("repeat(Tensor self, SymInt[] repeats) -> Tensor", kAll,
        [](const Call& c) { return c.t(0).repeat(c.ints(1)); });
  r.def("tile(Tensor self, int[] dims) -> Tensor", kAll,
        [](const Call& c) { return at::tile(c.t(0), c.ints(1)); });
  r.def("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
        "int? output_size=None) -> Tensor", kAll, [](const Call& c) {
          return at::repeat_interleave(c.t(0), c.i(1), c.oi(2), c.oi(3));
        });

  r.family("indexing");
  r.def("select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", kAll,
        [](const Call& c) { return at::select(c.t(0), c.i(1), c.i(2)); });
  r.def("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::slice(c.t(0), c.i(1), c.oi(2), c.oi(3), c.i(4)); });
  r.def("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", kAll,
        [](const Call& c) { return at::narrow(c.t(0), c.i(1), c.i(2), c.i(3)); });
  r.def("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).unfold(c.i(1), c.i(2), c.i(3)); });
  r.def("index.Tensor(Tensor self, Tensor<any>?[] indices) -> Tensor", kAll,
        [](const Call& c) { return at::index(c.t(0), c.opt_list(1)); });
  r.def("index_select(Tensor self, int dim, Tensor<idx> index) -> Tensor", kAll,
        [](const Call& c) { return at::index_select(c.t(0), c.i(1), c.t(2)); });
  r.def("gather(Tensor self, int dim, Tensor<long> index, *, bool sparse_grad=False) -> Tensor",
        kAll, [](const Call& c) { return at::gather(c.t(0), c.i(1), c.t(2), c.b(3)); });
  r.def("scatter.src(Tensor self, int dim, Tensor<long> index, Tensor src) -> Tensor", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def("scatter.value(Tensor self, int dim, Tensor<long> index, Scalar value) -> Tensor", kAll,
        [](const Call& c) { return at::scatter(c.t(0), c.i(1), c.t(2), c.scalar(3)); });
  r.def("scatter_add(Tensor self, int dim, Tensor<long> index, Tensor src) -> Tensor", kFI,
        [](const Call& c) { return at::scatter_add(c.t(0), c.i(1), c.t(2), c.t(3)); });
  r.def("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor", kAll, [](const Call& c) {
          return at::slice_scatter(c.t(0), c.t(1), c.i(2), c.oi(3), c.oi(4), c.i(5));
        });
  r.def("select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor", kAll,
        [](const Call& c) { return at::select_scatter(c.t(0), c.t(1), c.i(2), c.i(3)); });
  r.def("masked_select(Tensor self, Tensor<bool> mask) -> Tensor", kAll,
        [](const Call& c) { return at::masked_select(c.t(0), c.t(1)); });
  r.def("nonzero(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::nonzero(c.t(0)); });
  r.def("triu(Tensor self, int diagonal=0) -> Tensor", kAll,
        [](const Call& c) { return at::triu(c.t(0), c.i(1)); });
  r.def("tril(Tensor self, int diagonal=0) -> Tensor", kAll,
        [](const Call& c) { return at::tril(c.t(0), c.i(1)); });

  r.family("cast");
  r.def("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)", kAll, to_dtype);
  r.def("to.other(Tensor(a) self, Tensor<any> other, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).to(c.t(1), c.b(2), c.b(3), memory_format(c, 4)); });
  r.def("to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
        "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", kAll,
        [](const Call& c) { return c.t(0).to(*c.dtype(2), c.b(3), c.b(4), memory_format(c, 5)); });
  r.def("to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)", kAll, [](const Call& c) {
          return c.t(0).to(c.dtype(1).value_or(c.t(0).scalar_type()), c.b(5), c.b(6),
                           memory_format(c, 7));
        });
  r.def("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
        kAll, [](const Call& c) {
          return at::_to_copy(c.t(0), c.dtype(1), c10::nullopt, c10::nullopt, c10::nullopt, false,
                              memory_format(c, 6));
        });
  r.def("type_as(Tensor self, Tensor<any> other) -> Tensor", kAll,
        [](const Call& c) { return c.t(0).type_as(c.t(1)); });

  // Creation ops: the dtype set is what the `dtype` attribute may ask for.
  r.family("creation");
  r.def("arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
        "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", kAll & ~kB,
        [](const Call& c) { return at::arange(c.scalar(0), c.scalar(1), c.scalar(2), options(c, 3)); });
  r.def("arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None) -> Tensor", kAll & ~kB,
        [](const Call& c) { return at::arange(c.scalar(0), options(c, 1)); });
  r.def("zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None) -> Tensor", kAll,
        [](const Call& c) { return at::zeros(c.ints(0), options(c, 1)); });
  r.def("ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None) -> Tensor", kAll,
        [](const Call& c) { return at::ones(c.ints(0), options(c, 1)); });
  r.def("full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor", kAll,
        [](const Call& c) { return at::full(c.ints(0), c.scalar(1), options(c, 2)); });
  r.def("scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor", kAll, [](const Call& c) {
          return at::scalar_tensor(c.scalar(0), options(c, 1).dtype(c.dtype(1).value_or(at::kFloat)));
        });
  r.def("zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,"
        " bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", kAll,
        [](const Call& c) { return at::zeros_like(c.t(0), c.dtype(1), {}, {}, {}, memory_format(c, 5)); });
  r.def("ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,"
        " bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", kAll,
        [](const Call& c) { return at::ones_like(c.t(0), c.dtype(1), {}, {}, {}, memory_format(c, 5)); });
  r.def("full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
        kAll, [](const Call& c) {
          return at::full_like(c.t(0), c.scalar(1), c.dtype(2), {}, {}, {}, memory_format(c, 6));
        });
  r.def("new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor", kAll, [](const Call& c) {
          return at::zeros(c.ints(1), options(c, 2).dtype(c.dtype(2).value_or(c.t(0).scalar_type())));
        });
  r.def("new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor", kAll, [](const Call& c) {
          return at::ones(c.ints(1), options(c, 2).dtype(c.dtype(2).value_or(c.t(0).scalar_type())));
        });
  r.def("fill.Scalar(Tensor self, Scalar value) -> Tensor", kAll,
        [](const Call& c) { return at::fill(c.t(0), c.scalar(1)); });

  r.family("reduction");
  r.def("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor", kAll,
        [](const Call& c) { return at::sum(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
  r.def("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> "
        "Tensor", kFH, [](const Call& c) { return at::mean(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
  r.def("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        kF32_64 | kI | kB, [](const Call& c) { return at::prod(c.t(0), c.i(1), c.b(2), c.dtype(3)); });
  r.def("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", kF32_64 | kI | kB,
        [](const Call& c) { return at::prod(c.t(0), c.dtype(1)); });
  r.def("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", kAll,
        [](const Call& c) { return at::amax(c.t(0), c.ints(1), c.b(2)); });
  r.def("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", kAll,
        [](const Call& c) { return at::amin(c.t(0), c.ints(1), c.b(2)); });
  r.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kAll,
        [](const Call& c) { return outs(at::max(c.t(0), c.i(1), c.b(2))); });
  r.def("max.other(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::max(c.t(0), c.t(1)); });
  r.def("max(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::max(c.t(0)); });
  r.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kAll,
        [](const Call& c) { return outs(at::min(c.t(0), c.i(1), c.b(2))); });
  r.def("min.other(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::min(c.t(0), c.t(1)); });
  r.def("min(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::min(c.t(0)); });
  r.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", kFH | kI,
        [](const Call& c) { return at::argmax(c.t(0), c.oi(1), c.b(2)); });
  r.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", kFH | kI,
        [](const Call& c) { return at::argmin(c.t(0), c.oi(1), c.b(2)); });
  r.def("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", kAll,
        [](const Call& c) { return at::any(c.t(0), c.i(1), c.b(2)); });
  r.def("any(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::any(c.t(0)); });
  r.def("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", kAll,
        [](const Call& c) { return at::all(c.t(0), c.i(1), c.b(2)); });
  r.def("all(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::all(c.t(0)); });
  r.def("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", kFIB,
        [](const Call& c) { return at::cumsum(c.t(0), c.i(1), c.dtype(2)); });
  r.def("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", kFIB,
        [](const Call& c) { return at::cumprod(c.t(0), c.i(1), c.dtype(2)); });
  r.def("var.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> Tensor",
        kFH, [](const Call& c) { return at::var(c.t(0), c.oints(1), c.b(2), c.b(3)); });
  r.def("var.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
        "bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::var(c.t(0), c.oints(1), c.oi(2), c.b(3)); });
  r.def("std.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> Tensor",
        kFH, [](const Call& c) { return at::std(c.t(0), c.oints(1), c.b(2), c.b(3)); });
  r.def("std.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
        "bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::std(c.t(0), c.oints(1), c.oi(2), c.b(3)); });
  r.def("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", kFIB,
        [](const Call& c) { return at::logsumexp(c.t(0), c.ints(1), c.b(2)); });
  r.def("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::norm(c.t(0), c.oscalar(1), c.ints(2), c.b(3)); });
  r.def("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", kFH,
        [](const Call& c) { return at::norm(c.t(0), c.scalar(1)); });
  r.def("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor", kFH, [](const Call& c) {
          return at::linalg_vector_norm(c.t(0), c.scalar(1), c.oints(2), c.b(3), c.dtype(4));
        });
  r.def("count_nonzero(Tensor self, int? dim=None) -> Tensor", kAll,
        [](const Call& c) { return at::count_nonzero(c.t(0), c.oi(1)); });
  r.def("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> "
        "(Tensor values, Tensor indices)", kFI,
        [](const Call& c) { return outs(at::topk(c.t(0), c.i(1), c.i(2), c.b(3), c.b(4))); });
  r.def("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
        kAll, [](const Call& c) { return outs(at::sort(c.t(0), c.i(1), c.b(2))); });
  r.def("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", kAll,
        [](const Call& c) { return at::argsort(c.t(0), c.i(1), c.b(2)); });
}

}  // namespace sy_aten
