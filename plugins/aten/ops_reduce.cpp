// aten plugin: reductions, norms, sorting and searching, cumulative ops.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kFI = kF | kI;
constexpr DtypeMask kFIB = kF | kI | kB;
constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

}  // namespace

void register_reduce_ops(Registry& r) {
  r.family("reduction");
  r.def(
      "sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      kAll, [](const Call& c) { return at::sum(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
  r.def(
      "mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> "
      "Tensor",
      kFH, [](const Call& c) { return at::mean(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
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
  r.def("max.other(Tensor self, Tensor other) -> Tensor", kAll, [](const Call& c) { return at::max(c.t(0), c.t(1)); });
  r.def("max(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::max(c.t(0)); });
  r.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kAll,
        [](const Call& c) { return outs(at::min(c.t(0), c.i(1), c.b(2))); });
  r.def("min.other(Tensor self, Tensor other) -> Tensor", kAll, [](const Call& c) { return at::min(c.t(0), c.t(1)); });
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
  r.def("var.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::var(c.t(0), c.oints(1), c.b(2), c.b(3)); });
  r.def(
      "var.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
      "bool keepdim=False) -> Tensor",
      kFH, [](const Call& c) { return at::var(c.t(0), c.oints(1), c.oi(2), c.b(3)); });
  r.def("std.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::std(c.t(0), c.oints(1), c.b(2), c.b(3)); });
  r.def(
      "std.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
      "bool keepdim=False) -> Tensor",
      kFH, [](const Call& c) { return at::std(c.t(0), c.oints(1), c.oi(2), c.b(3)); });
  r.def("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", kFIB,
        [](const Call& c) { return at::logsumexp(c.t(0), c.ints(1), c.b(2)); });
  r.def("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", kFH,
        [](const Call& c) { return at::norm(c.t(0), c.oscalar(1), c.ints(2), c.b(3)); });
  r.def("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", kFH,
        [](const Call& c) { return at::norm(c.t(0), c.scalar(1)); });
  r.def(
      "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      kFH, [](const Call& c) { return at::linalg_vector_norm(c.t(0), c.scalar(1), c.oints(2), c.b(3), c.dtype(4)); });
  r.def("count_nonzero(Tensor self, int? dim=None) -> Tensor", kAll,
        [](const Call& c) { return at::count_nonzero(c.t(0), c.oi(1)); });
  r.def(
      "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> "
      "(Tensor values, Tensor indices)",
      kFI, [](const Call& c) { return outs(at::topk(c.t(0), c.i(1), c.i(2), c.b(3), c.b(4))); });
  r.def("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", kAll,
        [](const Call& c) { return outs(at::sort(c.t(0), c.i(1), c.b(2))); });
  r.def("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", kAll,
        [](const Call& c) { return at::argsort(c.t(0), c.i(1), c.b(2)); });
  r.def(
      "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
      "(Tensor values, Tensor indices)",
      kAll, [](const Call& c) {
        return outs(at::sort(c.t(0), c10::optional<bool>(c.none(1) ? false : c.b(1)), c.i(2), c.b(3)));
      });
  r.def("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor", kAll,
        [](const Call& c) { return at::argsort(c.t(0), c.b(1), c.i(2), c.b(3)); });
  r.def("msort(Tensor self) -> Tensor", kAll, [](const Call& c) { return at::msort(c.t(0)); });
  r.def(
      "kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> "
      "(Tensor values, Tensor indices)",
      kFI, [](const Call& c) { return outs(at::kthvalue(c.t(0), c.i(1), c.i(2), c.b(3))); });
  r.def("median(Tensor self) -> Tensor", kFI, [](const Call& c) { return at::median(c.t(0)); });
  r.def("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kFI,
        [](const Call& c) { return outs(at::median(c.t(0), c.i(1), c.b(2))); });
  r.def("nanmedian(Tensor self) -> Tensor", kFI, [](const Call& c) { return at::nanmedian(c.t(0)); });
  r.def(
      "nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
      "(Tensor values, Tensor indices)",
      kFI, [](const Call& c) { return outs(at::nanmedian(c.t(0), c.i(1), c.b(2))); });
  r.def("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", kFIB,
        [](const Call& c) { return outs(at::mode(c.t(0), c.i(1), c.b(2))); });
  r.def(
      "quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
      "str interpolation='linear') -> Tensor",
      kF32_64, [](const Call& c) { return at::quantile(c.t(0), c.t(1), c.oi(2), c.b(3), c.s(4)); });
  r.def(
      "quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
      "str interpolation='linear') -> Tensor",
      kF32_64, [](const Call& c) { return at::quantile(c.t(0), c.f(1), c.oi(2), c.b(3), c.s(4)); });
  r.def(
      "nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
      "str interpolation='linear') -> Tensor",
      kF32_64, [](const Call& c) { return at::nanquantile(c.t(0), c.f(1), c.oi(2), c.b(3), c.s(4)); });
  r.def(
      "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
      "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
      kAll & ~kH, [](const Call& c) { return outs(at::_unique2(c.t(0), c.b(1), c.b(2), c.b(3))); });
  r.def(
      "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
      "int? dim=None) -> (Tensor, Tensor, Tensor)",
      kAll & ~kH, [](const Call& c) { return outs(at::unique_consecutive(c.t(0), c.b(1), c.b(2), c.oi(3))); });
  r.def(
      "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
      "bool right=False, str? side=None, Tensor<long>? sorter=None) -> Tensor",
      kFI, [](const Call& c) { return at::searchsorted(c.t(0), c.t(1), c.b(2), c.b(3), c.os(4), c.ot(5)); });
  r.def(
      "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, "
      "bool right=False) -> Tensor",
      kFI, [](const Call& c) { return at::bucketize(c.t(0), c.t(1), c.b(2), c.b(3)); });

  r.family("cumulative");
  r.def("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", kFIB,
        [](const Call& c) { return outs(at::cummax(c.t(0), c.i(1))); });
  r.def("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", kFIB,
        [](const Call& c) { return outs(at::cummin(c.t(0), c.i(1))); });
  r.def("logcumsumexp(Tensor self, int dim) -> Tensor", kF,
        [](const Call& c) { return at::logcumsumexp(c.t(0), c.i(1)); });

  r.family("reduction");
  r.def("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
        kAll & ~kH & ~bit(at::kBFloat16), [](const Call& c) { return outs(at::aminmax(c.t(0), c.oi(1), c.b(2))); });
  r.def(
      "nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> "
      "Tensor",
      kFI, [](const Call& c) { return at::nansum(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
  r.def(
      "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> "
      "Tensor",
      kF, [](const Call& c) { return at::nanmean(c.t(0), c.oints(1), c.b(2), c.dtype(3)); });
  // The plain overloads (self, unbiased) are the .dim ones with dim=None.
  r.def(
      "std_mean.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> "
      "(Tensor, Tensor)",
      kFH, [](const Call& c) { return outs(at::std_mean(c.t(0), c.oints(1), c.b(2), c.b(3))); });
  r.def(
      "std_mean.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
      "bool keepdim=False) -> (Tensor, Tensor)",
      kFH, [](const Call& c) { return outs(at::std_mean(c.t(0), c.oints(1), c.oi(2), c.b(3))); });
  r.def(
      "var_mean.dim(Tensor self, int[1]? dim=None, bool unbiased=True, bool keepdim=False) -> "
      "(Tensor, Tensor)",
      kFH, [](const Call& c) { return outs(at::var_mean(c.t(0), c.oints(1), c.b(2), c.b(3))); });
  r.def(
      "var_mean.correction(Tensor self, int[1]? dim=None, *, int? correction=None, "
      "bool keepdim=False) -> (Tensor, Tensor)",
      kFH, [](const Call& c) { return outs(at::var_mean(c.t(0), c.oints(1), c.oi(2), c.b(3))); });
  r.def("trace(Tensor self) -> Tensor", kF32_64 | kI, [](const Call& c) { return at::trace(c.t(0)); });

  r.family("norm");
  r.def(
      "linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      kF, [](const Call& c) { return at::linalg_norm(c.t(0), c.oscalar(1), c.oints(2), c.b(3), c.dtype(4)); });
  r.def(
      "linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::linalg_norm(c.t(0), c.s(1), c.oints(2), c.b(3), c.dtype(4)); });
  r.def(
      "linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      kF32_64,
      [](const Call& c) { return at::linalg_matrix_norm(c.t(0), c.scalar(1), c.ints(2), c.b(3), c.dtype(4)); });
  r.def(
      "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], "
      "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::linalg_matrix_norm(c.t(0), c.s(1), c.ints(2), c.b(3), c.dtype(4)); });
  r.def("frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", kF,
        [](const Call& c) { return at::frobenius_norm(c.t(0), c.ints(1), c.b(2)); });
  r.def("frobenius_norm(Tensor self) -> Tensor", kF, [](const Call& c) { return at::frobenius_norm(c.t(0)); });
  r.def("nuclear_norm(Tensor self, bool keepdim=False) -> Tensor", kF32_64,
        [](const Call& c) { return at::nuclear_norm(c.t(0), c.b(1)); });
  r.def("nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor", kF32_64,
        [](const Call& c) { return at::nuclear_norm(c.t(0), c.ints(1), c.b(2)); });
  r.def("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", kF,
        [](const Call& c) { return at::renorm(c.t(0), c.scalar(1), c.i(2), c.scalar(3)); });
  r.def("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", kF,
        [](const Call& c) { return at::dist(c.t(0), c.t(1), c.scalar(2)); });
}

}  // namespace sy_aten
