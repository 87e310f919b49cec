// linalg plugin: the GEMM epilogue, bias plus activation in one pass over a row block of
// C. Formulas are ATen's: relu keeps NaN, gelu "none" is the erf form and "tanh" the tanh
// approximation, silu is x / (1 + exp(-x)), hardswish x * clamp(x + 3, 0, 6) / 6.
//
// float32 erf is Eigen's (a rational function, at most 4e-7 from the true erf, 5.6 ulp;
// ATen's vectorised erf is an approximation of the same order): branch-free, so the
// compiler vectorises it inline, 1.8x faster here than libmvec's erff call.
//
// Built with -fopenmp-simd -fno-math-errno: the loops are `omp simd`, and where CMake
// found glibc's vector math library (libmvec) exp, tanh and double erf are declared `omp declare
// simd`, so the compiler calls libmvec's vector versions; with GCC the float entry is
// also cloned for AVX2 and AVX-512, picked at load time for the CPU at hand.
#include "common/vector_clones.hpp"
#include "linalg.hpp"

#include <cmath>

#include <unsupported/Eigen/SpecialFunctions>

#if defined(SY_LINALG_LIBMVEC)
extern "C" {
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
double erf(double);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
double tanh(double);
}
#endif

namespace sy_linalg {
namespace {

// The math functions by type, as the C names (those carry the simd declarations).
inline float erf_(float v) { return Eigen::numext::erf(v); }
inline double erf_(double v) { return ::erf(v); }
inline float exp_(float v) { return ::expf(v); }
inline double exp_(double v) { return ::exp(v); }
inline float tanh_(float v) { return ::tanhf(v); }
inline double tanh_(double v) { return ::tanh(v); }

template <typename T>
struct Identity {
  T operator()(T v) const { return v; }
};
template <typename T>
struct Relu {
  T operator()(T v) const { return v < T(0) ? T(0) : v; }  // NaN < 0 is false: NaN stays
};
template <typename T>
struct GeluErf {
  T operator()(T v) const { return T(0.5) * v * (T(1) + erf_(v * T(M_SQRT1_2))); }
};
template <typename T>
struct GeluTanh {
  T operator()(T v) const {
    const T kBeta = T(M_SQRT2 * M_2_SQRTPI * 0.5), kKappa = T(0.044715);
    return T(0.5) * v * (T(1) + tanh_(kBeta * (v + kKappa * v * v * v)));
  }
};
template <typename T>
struct Silu {
  T operator()(T v) const { return v / (T(1) + exp_(-v)); }
};
template <typename T>
struct Hardswish {
  T operator()(T v) const {
    T r = v + T(3);
    r = r < T(0) ? T(0) : r;
    r = r > T(6) ? T(6) : r;
    return v * r / T(6);
  }
};

template <typename T, typename F>
inline __attribute__((always_inline)) void rows_loop(T* c, int64_t rows, int64_t n, int64_t ldc, const T* bias,
                                                     int64_t brs, int64_t bcs, T beta, F f) {
  for (int64_t i = 0; i < rows; ++i) {
    T* __restrict y = c + i * ldc;
    if (bias == nullptr) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j]);
      continue;
    }
    const T* __restrict b = bias + i * brs;
    if (bcs == 1) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j] + beta * b[j]);
    } else if (bcs == 0) {
      const T bb = beta * b[0];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j] + bb);
    } else {
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j] + beta * b[j * bcs]);
    }
  }
}

template <typename T>
inline __attribute__((always_inline)) void dispatch(T* c, int64_t rows, int64_t n, int64_t ldc, const T* bias,
                                                    int64_t brs, int64_t bcs, T beta, Act act) {
  switch (act) {
    case Act::None: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, Identity<T>{});
    case Act::Relu: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, Relu<T>{});
    case Act::GeluErf: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, GeluErf<T>{});
    case Act::GeluTanh: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, GeluTanh<T>{});
    case Act::Silu: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, Silu<T>{});
    case Act::Hardswish: return rows_loop(c, rows, n, ldc, bias, brs, bcs, beta, Hardswish<T>{});
  }
}

SY_VECTOR_CLONES void epilogue_f32(float* c, int64_t rows, int64_t n, int64_t ldc, const float* bias, int64_t brs,
                                   int64_t bcs, float beta, Act act) {
  dispatch(c, rows, n, ldc, bias, brs, bcs, beta, act);
}

SY_VECTOR_CLONES void epilogue_f64(double* c, int64_t rows, int64_t n, int64_t ldc, const double* bias, int64_t brs,
                                   int64_t bcs, double beta, Act act) {
  dispatch(c, rows, n, ldc, bias, brs, bcs, beta, act);
}

}  // namespace

void epilogue(float* c, int64_t rows, int64_t n, int64_t ldc, const float* bias, int64_t brs, int64_t bcs, float beta,
              Act act) {
  epilogue_f32(c, rows, n, ldc, bias, brs, bcs, beta, act);
}

void epilogue(double* c, int64_t rows, int64_t n, int64_t ldc, const double* bias, int64_t brs, int64_t bcs,
              double beta, Act act) {
  epilogue_f64(c, rows, n, ldc, bias, brs, bcs, beta, act);
}

}  // namespace sy_linalg
