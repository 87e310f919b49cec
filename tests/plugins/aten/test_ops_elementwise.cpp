// Conformance cases: element-wise arithmetic, math, comparison, activations.
// Each case runs in every dtype the kernel claims (unless it lists dtypes) and compares
// the plugin's result with LibTorch's.
#include "aten_harness.hpp"

#include <algorithm>
#include <cmath>

using namespace sy_test;

namespace {
// Integer division by zero throws in ATen: keep divisors away from 0.
at::Tensor nonzero_divisor(at::ScalarType dt, at::IntArrayRef shape) {
  if (dt == at::kBool) return at::ones(shape, dt);
  at::Tensor t = rnd_pos(dt, shape);
  return at::isFloatingType(dt) ? t + 0.5 : t + 1;
}
}  // namespace

// ---- arithmetic: tensor-tensor with broadcasting, a non-contiguous operand, the scalar form
#define SY_ARITH_CASE(NAME)                                                      \
  OP_CASE("aten::" #NAME, "broadcast_strided_scalar") {                          \
    at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4}), at_ = rnd(dt, {4, 3}).t(); \
    check("aten::" #NAME, {a, b}, {}, at::NAME(a, b));                           \
    check("aten::" #NAME, {at_, a}, {}, at::NAME(at_, a));                       \
    check("aten::" #NAME, {a}, Attrs().i("other", 2), at::NAME(a, 2));           \
  }

SY_ARITH_CASE(mul)
SY_ARITH_CASE(eq)
SY_ARITH_CASE(ne)
SY_ARITH_CASE(lt)
SY_ARITH_CASE(le)
SY_ARITH_CASE(gt)
SY_ARITH_CASE(ge)

OP_CASE("aten::add", "broadcast_strided_scalar_alpha") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4}), t = rnd(dt, {4, 3}).t();
  check("aten::add", {a, b}, {}, at::add(a, b));
  check("aten::add", {t, a}, {}, at::add(t, a));
  check("aten::add", {a}, Attrs().f("other", 1.5), at::add(a, 1.5));
  if (dt != at::kBool) check("aten::add", {a, b}, Attrs().i("alpha", 3), at::add(a, b, 3));
}
OP_CASE("aten::add", "float_alpha", at::kFloat, at::kDouble) {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {3, 4});
  check("aten::add", {a, b}, Attrs().f("alpha", 0.5), at::add(a, b, 0.5));
}
OP_CASE("aten::add_", "out_of_place") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4}), copy = a.clone();
  check("aten::add_", {a, b}, {}, at::add(a, b));
  EXPECT_TRUE(at::equal(a, copy)) << "the input was modified";
}
OP_CASE("aten::sub", "broadcast_scalar_alpha") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::sub", {a, b}, Attrs().i("alpha", 2), at::sub(a, b, 2));
  check("aten::sub", {a}, Attrs().i("other", 1), at::sub(a, 1));
}
OP_CASE("aten::sub_", "out_of_place") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::sub_", {a, b}, {}, at::sub(a, b));
}
OP_CASE("aten::rsub", "tensor_scalar") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::rsub", {a, b}, {}, at::rsub(a, b));
  check("aten::rsub", {a}, Attrs().i("other", 1), at::rsub(a, 1));
}
OP_CASE("aten::mul_", "out_of_place") {
  at::Tensor a = rnd(dt, {3, 4});
  check("aten::mul_", {a}, Attrs().i("other", 3), at::mul(a, 3));
}
OP_CASE("aten::div", "true_and_rounding") {
  at::Tensor a = rnd(dt, {3, 4}), b = nonzero_divisor(dt, {4});
  check("aten::div", {a, b}, {}, at::div(a, b));
  check("aten::div", {a}, Attrs().f("other", 0.5), at::div(a, 0.5));
  if (dt != at::kBool) {
    check("aten::div", {a, b}, Attrs().s("rounding_mode", "floor"), at::div(a, b, "floor"));
    check("aten::div", {a, b}, Attrs().s("rounding_mode", "trunc"), at::div(a, b, "trunc"));
  }
}
OP_CASE("aten::div_", "out_of_place") {
  at::Tensor a = rnd(dt, {3, 4}), b = nonzero_divisor(dt, {3, 4});
  check("aten::div_", {a, b}, {}, at::div(a, b));
}
#define SY_DIVLIKE_CASE(NAME)                                                               \
  OP_CASE("aten::" #NAME, "tensor_scalar") {                                                \
    at::Tensor a = rnd(dt, {3, 4}), b = nonzero_divisor(dt, {4});                           \
    check("aten::" #NAME, {a, b}, {}, at::NAME(a, b));                                      \
    if (dt != at::kBool) check("aten::" #NAME, {a}, Attrs().i("other", 3), at::NAME(a, 3)); \
  }
SY_DIVLIKE_CASE(remainder)
SY_DIVLIKE_CASE(fmod)
SY_DIVLIKE_CASE(floor_divide)

OP_CASE("aten::pow", "tensor_scalar") {
  at::Tensor a = rnd(dt, {3, 4});
  check("aten::pow", {a}, Attrs().i("exponent", 2), at::pow(a, 2));
}
OP_CASE("aten::pow", "tensor_tensor_and_scalar_base", at::kFloat, at::kDouble, at::kLong) {
  at::Tensor a = rnd_pos(dt, {3, 4}), e = rnd_pos(dt, {4});
  check("aten::pow", {a, e}, {}, at::pow(a, e));
  check("aten::pow", {e}, Attrs().f("self", 2.0), at::pow(2.0, e));
}
#define SY_TENSOR2_CASE(NAME)                          \
  OP_CASE("aten::" #NAME, "broadcast") {               \
    at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {4});  \
    check("aten::" #NAME, {a, b}, {}, at::NAME(a, b)); \
  }
SY_TENSOR2_CASE(minimum)
SY_TENSOR2_CASE(maximum)
SY_TENSOR2_CASE(atan2)
SY_TENSOR2_CASE(logical_and)
SY_TENSOR2_CASE(logical_or)
SY_TENSOR2_CASE(logical_xor)
SY_ARITH_CASE(bitwise_and)
SY_ARITH_CASE(bitwise_or)
SY_ARITH_CASE(bitwise_xor)

OP_CASE("aten::lerp", "scalar_and_tensor_weight") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {3, 4}), w = rnd(dt, {4}).sigmoid();
  check("aten::lerp", {a, b}, Attrs().f("weight", 0.25), at::lerp(a, b, 0.25));
  check("aten::lerp", {a, b, w}, {}, at::lerp(a, b, w));
}
OP_CASE("aten::addcmul", "value") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {3, 4}), c = rnd(dt, {4});
  check("aten::addcmul", {a, b, c}, Attrs().i("value", 2), at::addcmul(a, b, c, 2));
}
OP_CASE("aten::addcdiv", "value") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd(dt, {3, 4}), c = nonzero_divisor(dt, {4});
  check("aten::addcdiv", {a, b, c}, Attrs().f("value", 0.5), at::addcdiv(a, b, c, 0.5));
}
OP_CASE("aten::clamp", "scalar_and_tensor_bounds") {
  at::Tensor a = rnd(dt, {3, 4});
  if (dt == at::kBool) {
    check("aten::clamp", {a}, Attrs().i("min", 0).i("max", 1), at::clamp(a, 0, 1));
    return;
  }
  check("aten::clamp", {a}, Attrs().i("min", -1).i("max", 2), at::clamp(a, -1, 2));
  check("aten::clamp", {a}, Attrs().i("min", 0), at::clamp(a, 0));
  check("aten::clamp", {a}, Attrs().none("min").i("max", 1), at::clamp(a, c10::nullopt, 1));
  at::Tensor lo = rnd(dt, {4}), hi = lo + 2;
  check("aten::clamp", {a, lo, hi}, {}, at::clamp(a, lo, hi));
  check("aten::clamp", {a, at::Tensor(), hi}, {}, at::clamp(a, c10::nullopt, hi));
}
OP_CASE("aten::clamp_", "out_of_place") {
  at::Tensor a = rnd(dt, {3, 4});
  check("aten::clamp_", {a}, Attrs().i("min", 0).i("max", 1), at::clamp(a, 0, 1));
}
OP_CASE("aten::clamp_min", "scalar_tensor") {
  at::Tensor a = rnd(dt, {3, 4}), m = rnd(dt, {4});
  check("aten::clamp_min", {a}, Attrs().i("min", 0), at::clamp_min(a, 0));
  check("aten::clamp_min", {a, m}, {}, at::clamp_min(a, m));
}
OP_CASE("aten::clamp_max", "scalar_tensor") {
  at::Tensor a = rnd(dt, {3, 4}), m = rnd(dt, {4});
  check("aten::clamp_max", {a}, Attrs().i("max", 1), at::clamp_max(a, 1));
  check("aten::clamp_max", {a, m}, {}, at::clamp_max(a, m));
}

// ---- unary ops, on a transposed (non-contiguous) input
#define SY_UNARY_CASE(NAME)                      \
  OP_CASE("aten::" #NAME, "strided") {           \
    at::Tensor x = rnd(dt, {5, 3}).t();          \
    check("aten::" #NAME, {x}, {}, at::NAME(x)); \
  }
SY_UNARY_CASE(neg)
SY_UNARY_CASE(abs)
SY_UNARY_CASE(sign)
SY_UNARY_CASE(sgn)
SY_UNARY_CASE(reciprocal)
SY_UNARY_CASE(square)
SY_UNARY_CASE(exp)
SY_UNARY_CASE(expm1)
SY_UNARY_CASE(log)
SY_UNARY_CASE(log2)
SY_UNARY_CASE(log10)
SY_UNARY_CASE(log1p)
SY_UNARY_CASE(sqrt)
SY_UNARY_CASE(rsqrt)
SY_UNARY_CASE(sin)
SY_UNARY_CASE(cos)
SY_UNARY_CASE(tan)
SY_UNARY_CASE(atan)
SY_UNARY_CASE(erf)
SY_UNARY_CASE(floor)
SY_UNARY_CASE(ceil)
SY_UNARY_CASE(round)
SY_UNARY_CASE(trunc)
SY_UNARY_CASE(isnan)
SY_UNARY_CASE(logical_not)
SY_UNARY_CASE(bitwise_not)
SY_UNARY_CASE(relu)
SY_UNARY_CASE(relu6)
SY_UNARY_CASE(silu)
SY_UNARY_CASE(sigmoid)
SY_UNARY_CASE(tanh)
SY_UNARY_CASE(hardswish)
SY_UNARY_CASE(hardsigmoid)
SY_UNARY_CASE(selu)
SY_UNARY_CASE(mish)
SY_UNARY_CASE(log_sigmoid)

// The in-place spellings run out of place and leave the input alone.
#define SY_INPLACE_CASE(NAME, FN)                     \
  OP_CASE("aten::" #NAME, "out_of_place") {           \
    at::Tensor x = rnd(dt, {3, 4}), copy = x.clone(); \
    check("aten::" #NAME, {x}, {}, at::FN(x));        \
    EXPECT_TRUE(at::equal(x, copy));                  \
  }
SY_INPLACE_CASE(relu_, relu)
SY_INPLACE_CASE(silu_, silu)
SY_INPLACE_CASE(sigmoid_, sigmoid)
SY_INPLACE_CASE(tanh_, tanh)
SY_INPLACE_CASE(hardswish_, hardswish)
SY_INPLACE_CASE(hardtanh_, hardtanh)
SY_INPLACE_CASE(leaky_relu_, leaky_relu)
SY_INPLACE_CASE(gelu_, gelu)

OP_CASE("aten::nan_to_num", "replacements") {
  at::Tensor x = rnd(dt, {3, 4});
  if (at::isFloatingType(dt)) x = at::where(x > 1, at::full_like(x, NAN), x);
  check("aten::nan_to_num", {x}, {}, at::nan_to_num(x));
  check("aten::nan_to_num", {x}, Attrs().f("nan", 7.0), at::nan_to_num(x, 7.0));
}
OP_CASE("aten::where", "tensor_and_scalar_branches") {
  at::Tensor cond = rnd(at::kBool, {3, 4}), a = rnd(dt, {3, 4}), b = rnd(dt, {4});
  check("aten::where", {cond, a, b}, {}, at::where(cond, a, b));
  check("aten::where", {cond, a}, Attrs().i("other", 0), at::where(cond, a, 0));
  check("aten::where", {cond, b}, Attrs().i("self", 1), at::where(cond, 1, b));
}
OP_CASE("aten::masked_fill", "scalar_and_tensor_value") {
  at::Tensor x = rnd(dt, {3, 4}), mask = rnd(at::kBool, {4});
  check("aten::masked_fill", {x, mask}, Attrs().i("value", 1), at::masked_fill(x, mask, 1));
  at::Tensor v = rnd(dt, {});
  check("aten::masked_fill", {x, mask, v}, {}, at::masked_fill(x, mask, v));
}
OP_CASE("aten::masked_fill_", "out_of_place") {
  at::Tensor x = rnd(dt, {3, 4}), mask = rnd(at::kBool, {3, 4});
  check("aten::masked_fill_", {x, mask}, Attrs().i("value", 0), at::masked_fill(x, mask, 0));
}

// ---- activations with attributes
OP_CASE("aten::gelu", "none_and_tanh") {
  at::Tensor x = rnd(dt, {4, 3}).t();
  check("aten::gelu", {x}, {}, at::gelu(x));
  check("aten::gelu", {x}, Attrs().s("approximate", "none"), at::gelu(x, "none"));
  check("aten::gelu", {x}, Attrs().s("approximate", "tanh"), at::gelu(x, "tanh"));
}
OP_CASE("aten::hardtanh", "bounds") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::hardtanh", {x}, {}, at::hardtanh(x));
  check("aten::hardtanh", {x}, Attrs().i("min_val", 0).i("max_val", 2), at::hardtanh(x, 0, 2));
}
OP_CASE("aten::leaky_relu", "slope") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::leaky_relu", {x}, {}, at::leaky_relu(x));
  check("aten::leaky_relu", {x}, Attrs().f("negative_slope", 0.2), at::leaky_relu(x, 0.2));
}
OP_CASE("aten::elu", "params") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::elu", {x}, Attrs().f("alpha", 0.5), at::elu(x, 0.5));
}
OP_CASE("aten::celu", "alpha") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::celu", {x}, Attrs().f("alpha", 2.0), at::celu(x, 2.0));
}
OP_CASE("aten::softplus", "beta_threshold") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::softplus", {x}, Attrs().i("beta", 2).i("threshold", 1), at::softplus(x, 2, 1));
}
OP_CASE("aten::hardshrink", "lambd") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::hardshrink", {x}, Attrs().f("lambd", 0.3), at::hardshrink(x, 0.3));
}
OP_CASE("aten::threshold", "threshold_value") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::threshold", {x}, Attrs().i("threshold", 0).i("value", 5), at::threshold(x, 0, 5));
}
OP_CASE("aten::logit", "eps") {
  at::Tensor x = rnd(dt, {3, 4});
  if (at::isFloatingType(dt)) x = x.sigmoid();
  check("aten::logit", {x}, {}, at::logit(x));
  check("aten::logit", {x}, Attrs().f("eps", 1e-3), at::logit(x, 1e-3));
}
OP_CASE("aten::prelu", "per_channel") {
  at::Tensor x = rnd(dt, {2, 3, 4}), w = rnd(dt, {3});
  check("aten::prelu", {x, w}, {}, at::prelu(x, w));
}
OP_CASE("aten::glu", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::glu", {x}, {}, at::glu(x));
  check("aten::glu", {x}, Attrs().i("dim", 1), at::glu(x, 1));
}

// ---- more unary math, with inputs inside each function's domain
namespace {
// Values in [lo, hi]: uniform for floating dtypes, integers in range otherwise.
at::Tensor in_range(at::ScalarType dt, at::IntArrayRef shape, double lo, double hi) {
  if (at::isFloatingType(dt)) return (at::rand(shape) * (hi - lo) + lo).to(dt);
  if (dt == at::kBool) return rnd(dt, shape);
  int64_t l = static_cast<int64_t>(std::ceil(dt == at::kByte ? std::max(lo, 0.0) : lo));
  return at::randint(l, static_cast<int64_t>(std::floor(hi)) + 1, shape, at::kLong).to(dt);
}
}  // namespace
#define SY_RANGE_CASE(NAME, LO, HI)                  \
  OP_CASE("aten::" #NAME, "strided_in_domain") {     \
    at::Tensor x = in_range(dt, {5, 3}, LO, HI).t(); \
    check("aten::" #NAME, {x}, {}, at::NAME(x));     \
  }
SY_RANGE_CASE(erfc, -3, 3)
SY_RANGE_CASE(erfinv, -0.95, 0.95)
SY_RANGE_CASE(exp2, -4, 4)
SY_RANGE_CASE(asin, -1, 1)
SY_RANGE_CASE(acos, -1, 1)
SY_RANGE_CASE(sinh, -3, 3)
SY_RANGE_CASE(cosh, -3, 3)
SY_RANGE_CASE(asinh, -4, 4)
SY_RANGE_CASE(acosh, 1, 5)
SY_RANGE_CASE(atanh, -0.9, 0.9)
SY_RANGE_CASE(lgamma, 0.1, 6)
SY_RANGE_CASE(digamma, 0.1, 6)
SY_RANGE_CASE(frac, -4, 4)
SY_RANGE_CASE(angle, -4, 4)
SY_RANGE_CASE(signbit, -4, 4)
SY_RANGE_CASE(isposinf, -4, 4)
SY_RANGE_CASE(isneginf, -4, 4)
SY_UNARY_CASE(isinf)
SY_UNARY_CASE(isfinite)

OP_CASE("aten::isinf", "infinities", at::kFloat, at::kDouble) {
  at::Tensor x = at::tensor({1.0, INFINITY, -INFINITY, NAN}, at::kDouble).to(dt);
  check("aten::isinf", {x}, {}, at::isinf(x));
  check("aten::isfinite", {x}, {}, at::isfinite(x));
  check("aten::isposinf", {x}, {}, at::isposinf(x));
  check("aten::isneginf", {x}, {}, at::isneginf(x));
}
OP_CASE("aten::positive", "identity") {
  at::Tensor x = rnd(dt, {5, 3}).t();
  check("aten::positive", {x}, {}, at::positive(x));
}
OP_CASE("aten::round", "decimals", at::kFloat, at::kDouble) {
  at::Tensor x = rnd(dt, {3, 4}) * 100;
  check("aten::round", {x}, Attrs().i("decimals", 2), at::round(x, 2));
  check("aten::round", {x}, Attrs().i("decimals", -1), at::round(x, -1));
}

// ---- more binary ops
SY_TENSOR2_CASE(fmax)
SY_TENSOR2_CASE(fmin)
SY_TENSOR2_CASE(hypot)
SY_TENSOR2_CASE(logaddexp)
SY_TENSOR2_CASE(logaddexp2)
SY_TENSOR2_CASE(nextafter)
SY_TENSOR2_CASE(copysign)
SY_TENSOR2_CASE(heaviside)
SY_TENSOR2_CASE(isclose)
SY_ARITH_CASE(__and__)
SY_ARITH_CASE(__or__)
SY_ARITH_CASE(__xor__)
OP_CASE("aten::fmax", "nan_ignored", at::kFloat, at::kDouble) {
  at::Tensor a = at::tensor({1.0, NAN, 3.0, NAN}, at::kDouble).to(dt);
  at::Tensor b = at::tensor({NAN, 2.0, 1.0, NAN}, at::kDouble).to(dt);
  check("aten::fmax", {a, b}, {}, at::fmax(a, b));
  check("aten::fmin", {a, b}, {}, at::fmin(a, b));
}
OP_CASE("aten::xlogy", "tensor_scalar") {
  at::Tensor a = rnd(dt, {3, 4}), b = rnd_pos(dt, {4});
  check("aten::xlogy", {a, b}, {}, at::xlogy(a, b));
  check("aten::xlogy", {a}, Attrs().i("other", 3), at::xlogy(a, 3));
}
OP_CASE("aten::isclose", "tolerances_nan", at::kFloat, at::kDouble) {
  at::Tensor a = rnd(dt, {3, 4}), b = a + 1e-3;
  b[0][0] = NAN;
  a[0][0] = NAN;
  auto attrs = Attrs().f("rtol", 0).f("atol", 2e-3).b("equal_nan", true);
  check("aten::isclose", {a, b}, attrs, at::isclose(a, b, 0, 2e-3, true));
}
OP_CASE("aten::true_divide", "tensor_scalar") {
  at::Tensor a = rnd(dt, {3, 4}), b = nonzero_divisor(dt, {4});
  check("aten::true_divide", {a, b}, {}, at::true_divide(a, b));
  check("aten::true_divide", {a}, Attrs().i("other", 4), at::true_divide(a, 4));
}
// Shift counts stay within the type's width (larger ones are undefined behaviour in C++).
#define SY_SHIFT_CASE(NAME)                                                       \
  OP_CASE("aten::" #NAME, "tensor_scalar") {                                      \
    at::Tensor a = rnd(dt, {3, 4}), b = at::randint(0, 4, {4}, at::kLong).to(dt); \
    check("aten::" #NAME, {a, b}, {}, at::NAME(a, b));                            \
    check("aten::" #NAME, {a}, Attrs().i("other", 2), at::NAME(a, 2));            \
  }
SY_SHIFT_CASE(bitwise_left_shift)
SY_SHIFT_CASE(bitwise_right_shift)
SY_SHIFT_CASE(__lshift__)
SY_SHIFT_CASE(__rshift__)

// ---- more activations
OP_CASE("aten::softshrink", "lambd") {
  at::Tensor x = rnd(dt, {4, 3}).t();
  check("aten::softshrink", {x}, {}, at::softshrink(x));
  check("aten::softshrink", {x}, Attrs().f("lambd", 0.2), at::softshrink(x, 0.2));
}
OP_CASE("aten::rrelu", "eval_is_deterministic") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::rrelu", {x}, {}, at::rrelu(x));
  check("aten::rrelu", {x}, Attrs().f("lower", 0.1).f("upper", 0.5).b("training", false).none("generator"),
        at::leaky_relu(x, 0.3));
}
SY_INPLACE_CASE(hardsigmoid_, hardsigmoid)
SY_INPLACE_CASE(relu6_, relu6)
OP_CASE("aten::elu_", "out_of_place") {
  at::Tensor x = rnd(dt, {3, 4}), copy = x.clone();
  check("aten::elu_", {x}, Attrs().f("alpha", 0.5), at::elu(x, 0.5));
  EXPECT_TRUE(at::equal(x, copy));
}
OP_CASE("aten::threshold_", "out_of_place") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::threshold_", {x}, Attrs().i("threshold", 0).i("value", 5), at::threshold(x, 0, 5));
}
