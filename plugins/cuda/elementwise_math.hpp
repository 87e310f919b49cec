// cuda plugin, internal: the arithmetic of every element-wise op, one function per op,
// compiled for the device (elementwise.cu) and for the host (the plugin's unit tests check
// it against ATen's formulas without a GPU). Values are float; NaN propagates as in ATen
// (relu, clamp and hardtanh of NaN are NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define SY_HD __host__ __device__ __forceinline__
#else
#define SY_HD inline
#endif

namespace sycuda {

enum class Unary : int32_t {
  Identity,
  Relu,
  Gelu,
  GeluTanh,
  Silu,
  Sigmoid,
  Tanh,
  Hardswish,
  Hardsigmoid,
  Hardtanh,   // clamp to [a, b]
  LeakyRelu,  // slope a
  Elu,        // alpha a, scale b, input_scale c
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Abs,
  Erf,
  Reciprocal,
  Sin,
  Cos,
  PowScalar,  // x ** a
  ClampMin,   // max(x, a)
  ClampMax,   // min(x, a)
  MulAdd,     // x * a + b (a scalar operand folded in)
};

struct UnaryOp {
  Unary kind = Unary::Identity;
  float a = 0, b = 0, c = 0;
};

enum class Binary : int32_t { Add, Sub, Mul, Div, Maximum, Minimum, Pow, Eq, Ne, Lt, Le, Gt, Ge };

struct BinaryOp {
  Binary kind = Binary::Add;
  double alpha = 1;  // add/sub: a + alpha * b, a - alpha * b
};

SY_HD bool is_comparison(Binary k) { return k >= Binary::Eq; }

SY_HD bool sy_isnan(float x) { return x != x; }

SY_HD float apply_unary(const UnaryOp& op, float x) {
  switch (op.kind) {
    case Unary::Identity: return x;
    case Unary::Relu: return sy_isnan(x) ? x : (x > 0.f ? x : 0.f);
    case Unary::Gelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752440f));
    case Unary::GeluTanh: {
      const float kBeta = 0.79788456080286535588f;  // sqrt(2 / pi)
      const float inner = kBeta * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.f + tanhf(inner));
    }
    case Unary::Silu: return x / (1.f + expf(-x));
    case Unary::Sigmoid: return 1.f / (1.f + expf(-x));
    case Unary::Tanh: return tanhf(x);
    case Unary::Hardswish: {
      const float r = x + 3.f;
      return x * (r < 0.f ? 0.f : (r > 6.f ? 6.f : r)) / 6.f;
    }
    case Unary::Hardsigmoid: {
      const float r = x + 3.f;
      return sy_isnan(x) ? x : (r < 0.f ? 0.f : (r > 6.f ? 6.f : r)) / 6.f;
    }
    case Unary::Hardtanh: return sy_isnan(x) ? x : (x < op.a ? op.a : (x > op.b ? op.b : x));
    case Unary::LeakyRelu: return x > 0.f ? x : x * op.a;
    case Unary::Elu: return x > 0.f ? op.b * x : op.b * op.a * (expf(x * op.c) - 1.f);
    case Unary::Neg: return -x;
    case Unary::Exp: return expf(x);
    case Unary::Log: return logf(x);
    case Unary::Sqrt: return sqrtf(x);
    case Unary::Rsqrt: return 1.f / sqrtf(x);
    case Unary::Abs: return fabsf(x);
    case Unary::Erf: return erff(x);
    case Unary::Reciprocal: return 1.f / x;
    case Unary::Sin: return sinf(x);
    case Unary::Cos: return cosf(x);
    case Unary::PowScalar: return op.a == 2.f ? x * x : (op.a == 0.5f ? sqrtf(x) : powf(x, op.a));
    case Unary::ClampMin: return sy_isnan(x) ? x : (x < op.a ? op.a : x);
    case Unary::ClampMax: return sy_isnan(x) ? x : (x > op.a ? op.a : x);
    case Unary::MulAdd: return x * op.a + op.b;
  }
  return x;
}

// Arithmetic in float (the float dtypes) or int64 (the integer ones), as ATen computes it.
template <typename Acc>
SY_HD Acc apply_binary(const BinaryOp& op, Acc a, Acc b) {
  switch (op.kind) {
    case Binary::Add: return op.alpha == 1 ? a + b : a + static_cast<Acc>(op.alpha) * b;
    case Binary::Sub: return op.alpha == 1 ? a - b : a - static_cast<Acc>(op.alpha) * b;
    case Binary::Mul: return a * b;
    case Binary::Div: return a / b;
    // NaN wins, as in torch.maximum / torch.minimum.
    case Binary::Maximum: return a != a ? a : (b != b ? b : (a > b ? a : b));
    case Binary::Minimum: return a != a ? a : (b != b ? b : (a < b ? a : b));
    case Binary::Pow:
      if constexpr (std::is_floating_point_v<Acc>)
        return powf(a, b);
      else
        return static_cast<Acc>(pow(static_cast<double>(a), static_cast<double>(b)));
    default: return a;  // comparisons: compare()
  }
}

template <typename Acc>
SY_HD bool compare(Binary kind, Acc a, Acc b) {
  switch (kind) {
    case Binary::Eq: return a == b;
    case Binary::Ne: return a != b;
    case Binary::Lt: return a < b;
    case Binary::Le: return a <= b;
    case Binary::Gt: return a > b;
    case Binary::Ge: return a >= b;
    default: return false;
  }
}

}  // namespace sycuda
