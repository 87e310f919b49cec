// aten plugin: views and reshapes, joins and splits, dtype casts, tensor creation.
// One table line per ATen overload; see aten_ops.hpp.
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
  return c.none(k) ? c10::nullopt : c10::optional<at::MemoryFormat>(static_cast<at::MemoryFormat>(c.i(k)));
}
// Creation ops: dtype from the attribute; layout and device were checked at binding (CPU,
// strided only).
at::TensorOptions options(const Call& c, size_t dtype_arg) {
  at::TensorOptions o = at::TensorOptions().device(at::kCPU);
  if (!c.none(dtype_arg)) o = o.dtype(*c.dtype(dtype_arg));
  return o;
}
at::Tensor cat(const Call& c) { return at::cat(c.list(0), c.i(1)); }
at::Tensor to_dtype(const Call& c) { return c.t(0).to(*c.dtype(1), c.b(2), c.b(3), memory_format(c, 4)); }

}  // namespace

void register_shape_ops(Registry& r) {
  r.family("shape");
  r.def("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::flatten(c.t(0), c.i(1), c.i(2)); });
  r.def("unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", kAll,
        [](const Call& c) { return at::unflatten(c.t(0), c.i(1), c.ints(2)); });
  r.def("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", kAll,
        [](const Call& c) { return at::reshape(c.t(0), c.ints(1)); });
  r.def("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0).view(c.ints(1)); });
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
  r.def("squeeze(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return at::squeeze(c.t(0)); });
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
  // The host's pattern pass writes a trace's channel shuffle of a concatenation as this op
  // (host/src/ir/patterns.hpp): the reference computes it as the trace did.
  r.def("switchyard::channel_shuffle(Tensor[] inputs, int groups) -> Tensor", kAll, [](const Call& c) {
    const at::Tensor x = at::cat(c.list(0), 1);
    const int64_t groups = c.i(1);
    if (x.dim() != 4 || groups < 1 || x.size(1) % groups != 0)
      throw sy::Error("channel_shuffle: " + std::to_string(x.size(1)) + " channels of a rank-" +
                      std::to_string(x.dim()) + " tensor do not split into " + std::to_string(groups) + " groups");
    return x.view({x.size(0), groups, x.size(1) / groups, x.size(2), x.size(3)})
        .transpose(1, 2)
        .contiguous()
        .view(x.sizes());
  });
  r.def("stack(Tensor[] tensors, int dim=0) -> Tensor", kAll,
        [](const Call& c) { return at::stack(c.list(0), c.i(1)); });
  r.def("hstack(Tensor[] tensors) -> Tensor", kAll, [](const Call& c) { return at::hstack(c.list(0)); });
  r.def("vstack(Tensor[] tensors) -> Tensor", kAll, [](const Call& c) { return at::vstack(c.list(0)); });
  r.def("split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::split(c.t(0), c.i(1), c.i(2)); });
  r.def("split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::split_with_sizes(c.t(0), c.ints(1), c.i(2)); });
  r.def("split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::split_with_sizes(c.t(0), c.ints(1), c.i(2)); });
  r.def("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::chunk(c.t(0), c.i(1), c.i(2)); });
  r.def("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::unbind(c.t(0), c.i(1)); });
  r.def("flip(Tensor self, int[] dims) -> Tensor", kAll, [](const Call& c) { return at::flip(c.t(0), c.ints(1)); });
  r.def("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", kAll,
        [](const Call& c) { return at::roll(c.t(0), c.ints(1), c.ints(2)); });
  r.def("repeat(Tensor self, SymInt[] repeats) -> Tensor", kAll,
        [](const Call& c) { return c.t(0).repeat(c.ints(1)); });
  r.def("tile(Tensor self, int[] dims) -> Tensor", kAll, [](const Call& c) { return at::tile(c.t(0), c.ints(1)); });
  r.def(
      "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
      "int? output_size=None) -> Tensor",
      kAll, [](const Call& c) { return at::repeat_interleave(c.t(0), c.i(1), c.oi(2), c.oi(3)); });
  r.def(
      "repeat_interleave.self_Tensor(Tensor self, Tensor<idx> repeats, int? dim=None, *, "
      "int? output_size=None) -> Tensor",
      kAll, [](const Call& c) { return at::repeat_interleave(c.t(0), c.t(1), c.oi(2), c.oi(3)); });
  r.def("repeat_interleave.Tensor(Tensor<idx> repeats, *, int? output_size=None) -> Tensor", kIdx,
        [](const Call& c) { return at::repeat_interleave(c.t(0), c.oi(1)); });
  r.def("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::swapaxes(c.t(0), c.i(1), c.i(2)); });
  r.def("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", kAll,
        [](const Call& c) { return at::swapdims(c.t(0), c.i(1), c.i(2)); });
  r.def("mT(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0).mT(); });
  r.def("numpy_T(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return c.t(0).numpy_T(); });
  r.def("ravel(Tensor(a) self) -> Tensor(a)", kAll, [](const Call& c) { return at::ravel(c.t(0)); });
  r.def("fliplr(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::fliplr(c.t(0)); });
  r.def("flipud(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::flipud(c.t(0)); });
  r.def("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", kAll,
        [](const Call& c) { return at::rot90(c.t(0), c.i(1), c.ints(2)); });
  r.def("tensor_split.sections(Tensor(a -> *) self, int sections, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::tensor_split(c.t(0), c.i(1), c.i(2)); });
  r.def("tensor_split.indices(Tensor(a -> *) self, int[] indices, int dim=0) -> Tensor(a)[]", kAll,
        [](const Call& c) { return at::tensor_split(c.t(0), c.ints(1), c.i(2)); });
  r.def("unsafe_split.Tensor(Tensor self, int split_size, int dim=0) -> Tensor[]", kAll,
        [](const Call& c) { return at::unsafe_split(c.t(0), c.i(1), c.i(2)); });
  r.def("unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", kAll,
        [](const Call& c) { return at::unsafe_chunk(c.t(0), c.i(1), c.i(2)); });
  r.def("broadcast_tensors(Tensor[] tensors) -> Tensor[]", kAll,
        [](const Call& c) { return at::broadcast_tensors(c.list(0)); });
  r.def("meshgrid(Tensor[] tensors) -> Tensor[]", kAll, [](const Call& c) { return at::meshgrid(c.list(0)); });
  r.def("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", kAll,
        [](const Call& c) { return at::meshgrid(c.list(0), c.s(1)); });
  r.def("dstack(Tensor[] tensors) -> Tensor", kAll, [](const Call& c) { return at::dstack(c.list(0)); });
  r.def("column_stack(Tensor[] tensors) -> Tensor", kAll, [](const Call& c) { return at::column_stack(c.list(0)); });
  r.def("block_diag(Tensor[] tensors) -> Tensor", kAll, [](const Call& c) { return at::block_diag(c.list(0)); });
  r.def("cartesian_prod(Tensor[] tensors) -> Tensor", kAll,
        [](const Call& c) { return at::cartesian_prod(c.list(0)); });

  r.family("cast");
  r.def(
      "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
      "MemoryFormat? memory_format=None) -> Tensor(a)",
      kAll, to_dtype);
  r.def(
      "to.other(Tensor(a) self, Tensor<any> other, bool non_blocking=False, bool copy=False, "
      "MemoryFormat? memory_format=None) -> Tensor(a)",
      kAll, [](const Call& c) { return c.t(0).to(c.t(1), c.b(2), c.b(3), memory_format(c, 4)); });
  r.def(
      "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
      "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
      kAll, [](const Call& c) { return c.t(0).to(*c.dtype(2), c.b(3), c.b(4), memory_format(c, 5)); });
  r.def(
      "to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
      "MemoryFormat? memory_format=None) -> Tensor(a)",
      kAll, [](const Call& c) {
        return c.t(0).to(c.dtype(1).value_or(c.t(0).scalar_type()), c.b(5), c.b(6), memory_format(c, 7));
      });
  r.def(
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::_to_copy(c.t(0), c.dtype(1), c10::nullopt, c10::nullopt, c10::nullopt, false, memory_format(c, 6));
      });
  r.def("type_as(Tensor self, Tensor<any> other) -> Tensor", kAll,
        [](const Call& c) { return c.t(0).type_as(c.t(1)); });

  // Creation ops: the dtype set is what the `dtype` attribute may ask for.
  r.family("creation");
  r.def(
      "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll & ~kB, [](const Call& c) { return at::arange(c.scalar(0), c.scalar(1), c.scalar(2), options(c, 3)); });
  r.def(
      "arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      kAll & ~kB, [](const Call& c) { return at::arange(c.scalar(0), options(c, 1)); });
  r.def(
      "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) { return at::zeros(c.ints(0), options(c, 1)); });
  r.def(
      "ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) { return at::ones(c.ints(0), options(c, 1)); });
  r.def(
      "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) { return at::full(c.ints(0), c.scalar(1), options(c, 2)); });
  r.def(
      "scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::scalar_tensor(c.scalar(0), options(c, 1).dtype(c.dtype(1).value_or(at::kFloat)));
      });
  r.def(
      "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,"
      " bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      kAll, [](const Call& c) { return at::zeros_like(c.t(0), c.dtype(1), {}, {}, {}, memory_format(c, 5)); });
  r.def(
      "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,"
      " bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      kAll, [](const Call& c) { return at::ones_like(c.t(0), c.dtype(1), {}, {}, {}, memory_format(c, 5)); });
  r.def(
      "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      kAll,
      [](const Call& c) { return at::full_like(c.t(0), c.scalar(1), c.dtype(2), {}, {}, {}, memory_format(c, 6)); });
  r.def(
      "new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::zeros(c.ints(1), options(c, 2).dtype(c.dtype(2).value_or(c.t(0).scalar_type())));
      });
  r.def(
      "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::ones(c.ints(1), options(c, 2).dtype(c.dtype(2).value_or(c.t(0).scalar_type())));
      });
  // Uninitialised memory in ATen: zeros here, so that results are reproducible.
  r.def(
      "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      kAll, [](const Call& c) { return at::zeros(c.ints(0), options(c, 1)); });
  r.def(
      "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,"
      " bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      kAll, [](const Call& c) { return at::zeros_like(c.t(0), c.dtype(1), {}, {}, {}, memory_format(c, 5)); });
  r.def(
      "new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::zeros(c.ints(1), options(c, 2).dtype(c.dtype(2).value_or(c.t(0).scalar_type())));
      });
  r.def(
      "new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      kAll, [](const Call& c) {
        return at::full(c.ints(1), c.scalar(2), options(c, 3).dtype(c.dtype(3).value_or(c.t(0).scalar_type())));
      });
  r.def(
      "eye(int n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      kAll & ~bit(at::kBFloat16), [](const Call& c) { return at::eye(c.i(0), options(c, 1)); });
  r.def(
      "eye.m(int n, int m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      kAll & ~bit(at::kBFloat16), [](const Call& c) { return at::eye(c.i(0), c.i(1), options(c, 2)); });
  r.def(
      "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      kFI, [](const Call& c) { return at::linspace(c.scalar(0), c.scalar(1), c.i(2), options(c, 3)); });
  r.def(
      "logspace(Scalar start, Scalar end, int steps, float base=10.0, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      kFI, [](const Call& c) { return at::logspace(c.scalar(0), c.scalar(1), c.i(2), c.f(3), options(c, 4)); });
  r.def(
      "tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kIdx, [](const Call& c) { return at::tril_indices(c.i(0), c.i(1), c.i(2), options(c, 3)); });
  r.def(
      "triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      kIdx, [](const Call& c) { return at::triu_indices(c.i(0), c.i(1), c.i(2), options(c, 3)); });
  r.def("fill.Tensor(Tensor self, Tensor<any> value) -> Tensor", kAll,
        [](const Call& c) { return at::fill(c.t(0), c.t(1)); });
  r.def("fill.Scalar(Tensor self, Scalar value) -> Tensor", kAll,
        [](const Call& c) { return at::fill(c.t(0), c.scalar(1)); });
}

}  // namespace sy_aten
