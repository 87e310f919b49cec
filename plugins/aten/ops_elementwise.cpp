// aten plugin: element-wise arithmetic, math, comparison and logical ops, activations.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
// Dtype sets are what ATen 1.13 implements on the CPU (kF has no float16).
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

// Shared by an op and its in-place spelling (run out of place).
at::Tensor add(const Call& c) { return at::add(c.t(0), c.tos(1), c.scalar(2)); }
at::Tensor sub(const Call& c) { return at::sub(c.t(0), c.tos(1), c.scalar(2)); }
at::Tensor mul(const Call& c) { return at::mul(c.t(0), c.tos(1)); }
at::Tensor div(const Call& c) { return at::div(c.t(0), c.tos(1), c.os(2)); }
at::Tensor masked_fill(const Call& c) {
  return c.is_tensor(2) ? at::masked_fill(c.t(0), c.t(1), c.t(2)) : at::masked_fill(c.t(0), c.t(1), c.scalar(2));
}
at::Tensor relu(const Call& c) { return at::relu(c.t(0)); }
at::Tensor gelu(const Call& c) { return at::gelu(c.t(0), c.s(1)); }
at::Tensor silu(const Call& c) { return at::silu(c.t(0)); }
at::Tensor sigmoid(const Call& c) { return at::sigmoid(c.t(0)); }
at::Tensor tanh(const Call& c) { return at::tanh(c.t(0)); }
at::Tensor hardtanh(const Call& c) { return at::hardtanh(c.t(0), c.scalar(1), c.scalar(2)); }
at::Tensor hardswish(const Call& c) { return at::hardswish(c.t(0)); }
at::Tensor leaky_relu(const Call& c) { return at::leaky_relu(c.t(0), c.scalar(1)); }
at::Tensor clamp(const Call& c) { return at::clamp(c.t(0), c.oscalar(1), c.oscalar(2)); }

constexpr DtypeMask kNum = kFH | kI;      // all but bool
constexpr DtypeMask kFIB = kF | kI | kB;  // all but float16
constexpr DtypeMask kFI = kF | kI;        // neither float16 nor bool
constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);
constexpr DtypeMask kSignedInts = bit(at::kChar) | bit(at::kShort) | bit(at::kInt) | bit(at::kLong);

}  // namespace

#define SY_UNARY(NAME, DTYPES) \
  r.def(#NAME "(Tensor self) -> Tensor", DTYPES, [](const Call& c) { return at::NAME(c.t(0)); })
#define SY_BINARY(NAME, DTYPES)                                       \
  r.def(#NAME "(Tensor self, Tensor|Scalar other) -> Tensor", DTYPES, \
        [](const Call& c) { return at::NAME(c.t(0), c.tos(1)); })

void register_elementwise_ops(Registry& r) {
  r.family("elementwise");
  // ---- arithmetic (`other` may be a tensor input or a Scalar attribute)
  r.def("add(Tensor self, Tensor|Scalar other, Scalar alpha=1) -> Tensor", kAll, add);
  r.def("add_(Tensor(a!) self, Tensor|Scalar other, Scalar alpha=1) -> Tensor(a!)", kAll, add);
  r.def("sub(Tensor self, Tensor|Scalar other, Scalar alpha=1) -> Tensor", kNum, sub);
  r.def("sub_(Tensor(a!) self, Tensor|Scalar other, Scalar alpha=1) -> Tensor(a!)", kNum, sub);
  r.def("rsub(Tensor self, Tensor|Scalar other, Scalar alpha=1) -> Tensor", kNum,
        [](const Call& c) { return at::rsub(c.t(0), c.tos(1), c.scalar(2)); });
  r.def("mul(Tensor self, Tensor|Scalar other) -> Tensor", kAll, mul);
  r.def("mul_(Tensor(a!) self, Tensor|Scalar other) -> Tensor(a!)", kAll, mul);
  r.def("div(Tensor self, Tensor|Scalar other, *, str? rounding_mode=None) -> Tensor", kAll, div);
  r.def("div_(Tensor(a!) self, Tensor|Scalar other, *, str? rounding_mode=None) -> Tensor(a!)", kAll, div);
  SY_BINARY(remainder, kNum);
  SY_BINARY(fmod, kNum);
  SY_BINARY(floor_divide, kNum);
  r.def("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", kAll,
        [](const Call& c) { return at::pow(c.t(0), c.scalar(1)); });
  r.def("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", kNum,
        [](const Call& c) { return at::pow(c.t(0), c.t(1)); });
  r.def("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", kNum,
        [](const Call& c) { return at::pow(c.scalar(0), c.t(1)); });
  SY_BINARY(fmax, kFI);
  SY_BINARY(fmin, kFI);
  SY_BINARY(hypot, kF);
  SY_BINARY(logaddexp, kF);
  SY_BINARY(logaddexp2, kF);
  SY_BINARY(nextafter, kF32_64);
  SY_BINARY(copysign, kFIB);
  SY_BINARY(xlogy, kFIB);
  r.def("heaviside(Tensor self, Tensor values) -> Tensor", kFIB,
        [](const Call& c) { return at::heaviside(c.t(0), c.t(1)); });
  SY_BINARY(true_divide, kAll);
  r.def("minimum(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::minimum(c.t(0), c.t(1)); });
  r.def("maximum(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::maximum(c.t(0), c.t(1)); });
  r.def("atan2(Tensor self, Tensor other) -> Tensor", kFIB, [](const Call& c) { return at::atan2(c.t(0), c.t(1)); });
  r.def("lerp(Tensor self, Tensor end, Tensor|Scalar weight) -> Tensor", kF, [](const Call& c) {
    return c.is_tensor(2) ? at::lerp(c.t(0), c.t(1), c.t(2)) : at::lerp(c.t(0), c.t(1), c.scalar(2));
  });
  r.def("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", kFI,
        [](const Call& c) { return at::addcmul(c.t(0), c.t(1), c.t(2), c.scalar(3)); });
  r.def("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", kF,
        [](const Call& c) { return at::addcdiv(c.t(0), c.t(1), c.t(2), c.scalar(3)); });
  r.def("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", kFIB, clamp);
  r.def("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", kFIB,
        [](const Call& c) { return at::clamp(c.t(0), c.ot(1), c.ot(2)); });
  r.def("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", kFIB, clamp);
  r.def("clamp_min(Tensor self, Tensor|Scalar min) -> Tensor", kFIB, [](const Call& c) {
    return c.is_tensor(1) ? at::clamp_min(c.t(0), c.t(1)) : at::clamp_min(c.t(0), c.scalar(1));
  });
  r.def("clamp_max(Tensor self, Tensor|Scalar max) -> Tensor", kFIB, [](const Call& c) {
    return c.is_tensor(1) ? at::clamp_max(c.t(0), c.t(1)) : at::clamp_max(c.t(0), c.scalar(1));
  });

  // ---- unary math
  SY_UNARY(neg, kNum);
  SY_UNARY(abs, kNum);
  SY_UNARY(sign, kAll);
  SY_UNARY(sgn, kAll);
  SY_UNARY(reciprocal, kAll);
  SY_UNARY(square, kAll);
  SY_UNARY(exp, kFIB);
  SY_UNARY(expm1, kFIB);
  SY_UNARY(log, kFIB);
  SY_UNARY(log2, kFIB);
  SY_UNARY(log10, kFIB);
  SY_UNARY(log1p, kFIB);
  SY_UNARY(sqrt, kFIB);
  SY_UNARY(rsqrt, kFIB);
  SY_UNARY(sin, kFIB);
  SY_UNARY(cos, kFIB);
  SY_UNARY(tan, kFIB);
  SY_UNARY(atan, kFIB);
  SY_UNARY(erf, kFIB);
  SY_UNARY(erfc, kFIB);
  SY_UNARY(erfinv, kFIB);
  SY_UNARY(exp2, kFIB);
  SY_UNARY(asin, kFIB);
  SY_UNARY(acos, kFIB);
  SY_UNARY(sinh, kFIB);
  SY_UNARY(cosh, kFIB);
  SY_UNARY(asinh, kFIB);
  SY_UNARY(acosh, kFIB);
  SY_UNARY(atanh, kFIB);
  SY_UNARY(lgamma, kFIB);
  SY_UNARY(digamma, kFIB);
  SY_UNARY(frac, kF);
  SY_UNARY(angle, kFI);
  SY_UNARY(signbit, kFI);
  r.def("positive(Tensor(a) self) -> Tensor(a)", kNum, [](const Call& c) { return c.t(0); });
  r.def("round.decimals(Tensor self, *, int decimals) -> Tensor", kF,
        [](const Call& c) { return at::round(c.t(0), c.i(1)); });
  SY_UNARY(floor, kFI);
  SY_UNARY(ceil, kFI);
  SY_UNARY(round, kFI);
  SY_UNARY(trunc, kFI);
  r.def("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", kAll,
        [](const Call& c) { return at::nan_to_num(c.t(0), c.of(1), c.of(2), c.of(3)); });

  // ---- comparison and logical (bool results)
  SY_BINARY(eq, kAll);
  SY_BINARY(ne, kAll);
  SY_BINARY(lt, kAll);
  SY_BINARY(le, kAll);
  SY_BINARY(gt, kAll);
  SY_BINARY(ge, kAll);
  SY_UNARY(isnan, kAll);
  SY_UNARY(isinf, kAll);
  SY_UNARY(isfinite, kAll);
  SY_UNARY(isposinf, kFI);
  SY_UNARY(isneginf, kFI);
  r.def(
      "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
      "bool equal_nan=False) -> Tensor",
      kFI, [](const Call& c) { return at::isclose(c.t(0), c.t(1), c.f(2), c.f(3), c.b(4)); });
  SY_UNARY(logical_not, kAll);
  r.def("logical_and(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::logical_and(c.t(0), c.t(1)); });
  r.def("logical_or(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::logical_or(c.t(0), c.t(1)); });
  r.def("logical_xor(Tensor self, Tensor other) -> Tensor", kAll,
        [](const Call& c) { return at::logical_xor(c.t(0), c.t(1)); });
  SY_UNARY(bitwise_not, kI | kB);
  SY_BINARY(bitwise_and, kI | kB);
  SY_BINARY(bitwise_or, kI | kB);
  SY_BINARY(bitwise_xor, kI | kB);
  SY_BINARY(bitwise_left_shift, kI);
  SY_BINARY(bitwise_right_shift, kI);
  // TorchScript's spelling of Python's &, |, ^, <<, >> on tensors.
  SY_BINARY(__and__, kI | kB);
  SY_BINARY(__or__, kI | kB);
  SY_BINARY(__xor__, kI | kB);
  SY_BINARY(__lshift__, kI);
  SY_BINARY(__rshift__, kI);
  r.def("where.self(Tensor<bool> condition, Tensor|Scalar self, Tensor|Scalar other) -> Tensor", kAll,
        [](const Call& c) { return at::where(c.t(0), c.tos(1), c.tos(2)); });
  r.def("masked_fill(Tensor self, Tensor<bool> mask, Tensor|Scalar value) -> Tensor", kAll, masked_fill);
  r.def("masked_fill_(Tensor(a!) self, Tensor<bool> mask, Tensor|Scalar value) -> Tensor(a!)", kAll, masked_fill);

  // ---- activations
  r.family("activation");
  r.def("relu(Tensor self) -> Tensor", kFI, relu);
  r.def("relu_(Tensor(a!) self) -> Tensor(a!)", kFI, relu);
  r.def("relu6(Tensor self) -> Tensor", kFI, [](const Call& c) { return at::relu6(c.t(0)); });
  r.def("gelu(Tensor self, *, str approximate=\"none\") -> Tensor", kF, gelu);
  r.def("gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)", kF, gelu);
  r.def("silu(Tensor self) -> Tensor", kF, silu);
  r.def("silu_(Tensor(a!) self) -> Tensor(a!)", kF, silu);
  r.def("sigmoid(Tensor self) -> Tensor", kFIB, sigmoid);
  r.def("sigmoid_(Tensor(a!) self) -> Tensor(a!)", kFIB, sigmoid);
  r.def("tanh(Tensor self) -> Tensor", kFIB, tanh);
  r.def("tanh_(Tensor(a!) self) -> Tensor(a!)", kFIB, tanh);
  r.def("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", kF | kSignedInts, hardtanh);
  r.def("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)", kF | kSignedInts, hardtanh);
  r.def("hardswish(Tensor self) -> Tensor", kF, hardswish);
  r.def("hardswish_(Tensor(a!) self) -> Tensor(a!)", kF, hardswish);
  r.def("hardsigmoid(Tensor self) -> Tensor", kF, [](const Call& c) { return at::hardsigmoid(c.t(0)); });
  r.def("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", kF, leaky_relu);
  r.def("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)", kF, leaky_relu);
  r.def("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", kF,
        [](const Call& c) { return at::elu(c.t(0), c.scalar(1), c.scalar(2), c.scalar(3)); });
  r.def("celu(Tensor self, Scalar alpha=1.) -> Tensor", kF,
        [](const Call& c) { return at::celu(c.t(0), c.scalar(1)); });
  r.def("selu(Tensor self) -> Tensor", kF, [](const Call& c) { return at::selu(c.t(0)); });
  r.def("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", kF,
        [](const Call& c) { return at::softplus(c.t(0), c.scalar(1), c.scalar(2)); });
  r.def("mish(Tensor self) -> Tensor", bit(at::kFloat) | bit(at::kDouble),
        [](const Call& c) { return at::mish(c.t(0)); });
  r.def("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", kF,
        [](const Call& c) { return at::hardshrink(c.t(0), c.scalar(1)); });
  r.def("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", kF,
        [](const Call& c) { return at::softshrink(c.t(0), c.scalar(1)); });
  // Eval mode (training=False) is deterministic: a leaky relu of slope (lower + upper) / 2.
  r.def(
      "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
      "bool training=False) -> Tensor",
      kF, [](const Call& c) { return at::rrelu(c.t(0), c.scalar(1), c.scalar(2), c.b(3)); });
  r.def(
      "elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> "
      "Tensor(a!)",
      kF, [](const Call& c) { return at::elu(c.t(0), c.scalar(1), c.scalar(2), c.scalar(3)); });
  r.def("hardsigmoid_(Tensor(a!) self) -> Tensor(a!)", kF, [](const Call& c) { return at::hardsigmoid(c.t(0)); });
  r.def("relu6_(Tensor(a!) self) -> Tensor(a!)", kFI, [](const Call& c) { return at::relu6(c.t(0)); });
  r.def("threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)", kFI,
        [](const Call& c) { return at::threshold(c.t(0), c.scalar(1), c.scalar(2)); });
  r.def("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", kFI,
        [](const Call& c) { return at::threshold(c.t(0), c.scalar(1), c.scalar(2)); });
  r.def("logit(Tensor self, float? eps=None) -> Tensor", kFIB,
        [](const Call& c) { return at::logit(c.t(0), c.of(1)); });
  r.def("prelu(Tensor self, Tensor weight) -> Tensor", kF, [](const Call& c) { return at::prelu(c.t(0), c.t(1)); });
  r.def("glu(Tensor self, int dim=-1) -> Tensor", kF, [](const Call& c) { return at::glu(c.t(0), c.i(1)); });
}

}  // namespace sy_aten
