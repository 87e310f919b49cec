// The cuda plugin's host-side logic, checked on the CPU (no GPU needed): the element-wise
// arithmetic the device kernels compile (elementwise_math.hpp) against ATen's formulas,
// GEMM lowering executed through its cuBLAS column-major description against a naive
// product with numpy broadcasting, strided walks, host staging walks, and convolution and
// pooling geometry against ATen's output-size rules.
#include "broadcast.hpp"
#include "conv_plan.hpp"
#include "dynload.hpp"
#include "elementwise_math.hpp"
#include "gemm_plan.hpp"
#include "host_copy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using sycuda::Shape;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- element-wise arithmetic --------------------------------------------------------------------

float unary(sycuda::Unary k, float x, float a = 0, float b = 0, float c = 0) {
  return sycuda::apply_unary(sycuda::UnaryOp{k, a, b, c}, x);
}

TEST(CudaElementwiseMath, ActivationsMatchAtenFormulas) {
  using sycuda::Unary;
  for (double x : {-7.5, -3.0, -1.25, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.75, 3.0, 6.5}) {
    const float xf = static_cast<float>(x);
    const double gelu = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    const double gelu_tanh = 0.5 * x * (1 + std::tanh(inner));
    const double sig = 1 / (1 + std::exp(-x));
    const double r6 = std::min(std::max(x + 3, 0.0), 6.0);
    EXPECT_NEAR(unary(Unary::Relu, xf), x > 0 ? x : 0, 1e-7) << x;
    EXPECT_NEAR(unary(Unary::Gelu, xf), gelu, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::GeluTanh, xf), gelu_tanh, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Silu, xf), x * sig, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Sigmoid, xf), sig, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Tanh, xf), std::tanh(x), 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Hardswish, xf), x * r6 / 6, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Hardsigmoid, xf), r6 / 6, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Hardtanh, xf, -1, 1), std::min(std::max(x, -1.0), 1.0), 1e-7) << x;
    EXPECT_NEAR(unary(Unary::Hardtanh, xf, 0, 6), std::min(std::max(x, 0.0), 6.0), 1e-7) << x;  // relu6
    EXPECT_NEAR(unary(Unary::LeakyRelu, xf, 0.2f), x > 0 ? x : 0.2 * x, 1e-6) << x;
    EXPECT_NEAR(unary(Unary::Elu, xf, 1.5f, 2.f, 0.5f), x > 0 ? 2 * x : 2 * 1.5 * (std::exp(0.5 * x) - 1), 1e-5) << x;
    EXPECT_NEAR(unary(Unary::PowScalar, xf, 3.f), std::pow(x, 3.0), 1e-4 * std::max(1.0, std::fabs(x * x * x))) << x;
    EXPECT_NEAR(unary(Unary::PowScalar, xf, 2.f), x * x, 1e-5) << x;
    EXPECT_NEAR(unary(Unary::ClampMin, xf, 0.25f), std::max(x, 0.25), 1e-7) << x;
    EXPECT_NEAR(unary(Unary::ClampMax, xf, 0.25f), std::min(x, 0.25), 1e-7) << x;
    EXPECT_NEAR(unary(Unary::MulAdd, xf, 2.f, -1.f), 2 * x - 1, 1e-6) << x;
  }
}

TEST(CudaElementwiseMath, NanPropagatesAsInAten) {
  using sycuda::Unary;
  for (Unary k : {Unary::Relu, Unary::Gelu, Unary::Silu, Unary::Sigmoid, Unary::Tanh, Unary::Hardswish,
                  Unary::Hardsigmoid, Unary::Hardtanh, Unary::LeakyRelu, Unary::ClampMin, Unary::ClampMax})
    EXPECT_TRUE(std::isnan(unary(k, kNaN, 0, 6))) << static_cast<int>(k);
  EXPECT_EQ(unary(Unary::Relu, -kInf), 0.f);
  EXPECT_EQ(unary(Unary::Relu, kInf), kInf);
  EXPECT_EQ(unary(Unary::Sigmoid, -kInf), 0.f);
  EXPECT_EQ(unary(Unary::Hardtanh, kInf, -1, 1), 1.f);
}

TEST(CudaElementwiseMath, BinaryAndComparisons) {
  using sycuda::Binary;
  sycuda::BinaryOp add{Binary::Add, 2.5}, sub{Binary::Sub, 0.5}, mx{Binary::Maximum, 1}, mn{Binary::Minimum, 1};
  EXPECT_FLOAT_EQ(sycuda::apply_binary<float>(add, 1.f, 2.f), 6.f);
  EXPECT_FLOAT_EQ(sycuda::apply_binary<float>(sub, 1.f, 2.f), 0.f);
  EXPECT_EQ(sycuda::apply_binary<int64_t>(sycuda::BinaryOp{Binary::Add, 3}, 4, 5), 19);
  EXPECT_EQ(sycuda::apply_binary<int64_t>(sycuda::BinaryOp{Binary::Mul, 1}, -4, 5), -20);
  EXPECT_TRUE(std::isnan(sycuda::apply_binary<float>(mx, kNaN, 1.f)));
  EXPECT_TRUE(std::isnan(sycuda::apply_binary<float>(mn, 1.f, kNaN)));
  EXPECT_FLOAT_EQ(sycuda::apply_binary<float>(mx, -1.f, 3.f), 3.f);
  EXPECT_FLOAT_EQ(sycuda::apply_binary<float>(sycuda::BinaryOp{Binary::Div, 1}, 1.f, 4.f), 0.25f);
  EXPECT_FLOAT_EQ(sycuda::apply_binary<float>(sycuda::BinaryOp{Binary::Pow, 1}, 2.f, 10.f), 1024.f);
  EXPECT_TRUE(sycuda::compare<float>(Binary::Le, 1.f, 1.f));
  EXPECT_FALSE(sycuda::compare<float>(Binary::Lt, 1.f, 1.f));
  EXPECT_TRUE(sycuda::compare<int64_t>(Binary::Ne, 1, 2));
  EXPECT_FALSE(sycuda::compare<float>(Binary::Eq, kNaN, kNaN));
  EXPECT_TRUE(sycuda::is_comparison(Binary::Ge));
  EXPECT_FALSE(sycuda::is_comparison(Binary::Pow));
}

// ---- broadcasting and walks -----------------------------------------------------------------------

// Offset of element i of `out` in an operand walked as launch::Walk does on the device.
int64_t walk_offset(const sycuda::launch::Walk& w, const Shape& stride, int64_t i) {
  int64_t off = 0;
  for (int d = w.ndim - 1; d >= 0; --d) {
    off += (i % w.size[d]) * stride[static_cast<size_t>(d)];
    i /= w.size[d];
  }
  return off;
}

// Offset of element i of `out` in a compact operand of `shape` broadcast to it (numpy rules).
int64_t broadcast_offset(const Shape& shape, const Shape& out, int64_t i) {
  std::vector<int64_t> index(out.size());
  for (size_t d = out.size(); d-- > 0;) index[d] = i % out[d], i /= out[d];
  int64_t off = 0, step = 1;
  for (size_t k = 1; k <= shape.size(); ++k) {
    const int64_t s = shape[shape.size() - k];
    if (s != 1) off += index[out.size() - k] * step;
    step *= s;
  }
  return off;
}

TEST(CudaBroadcast, WalksVisitWhatNumpyBroadcastingReads) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{4, 1, 3}, {5, 3}},
                                                      {{2, 3, 4}, {}},
                                                      {{1}, {7}},
                                                      {{6, 1, 1, 5}, {1, 4, 3, 1}},
                                                      {{2, 3, 4, 5}, {2, 3, 4, 5}},
                                                      {{3, 1}, {1, 3}},
                                                      {{1, 1, 9}, {9}},
                                                      {{2, 1, 2, 1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1, 2, 1, 2}}};
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(sycuda::str(a) + " x " + sycuda::str(b));
    const Shape out = sycuda::broadcast_shapes(a, b, "test");
    Shape sa = sycuda::broadcast_strides(a, out), sb = sycuda::broadcast_strides(b, out);
    const sycuda::launch::Walk w = sycuda::make_walk(out, {&sa, &sb});
    EXPECT_LE(w.ndim, sycuda::launch::kMaxDims);
    int64_t n = 1;
    for (int d = 0; d < w.ndim; ++d) n *= w.size[d];
    ASSERT_EQ(n, sycuda::product(out));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(walk_offset(w, sa, i), broadcast_offset(a, out, i)) << "element " << i;
      ASSERT_EQ(walk_offset(w, sb, i), broadcast_offset(b, out, i)) << "element " << i;
    }
  }
}

TEST(CudaBroadcast, MergesContiguousDimsAndRejectsMismatches) {
  Shape s = sycuda::broadcast_strides({2, 3, 4}, {2, 3, 4});
  EXPECT_EQ(sycuda::make_walk({2, 3, 4}, {&s}).ndim, 1);  // one contiguous run
  EXPECT_THROW(sycuda::broadcast_shapes({2, 3}, {4, 3}, "x"), sy::Error);
  EXPECT_EQ(sycuda::wrap_dim(-1, 3, "t"), 2);
  EXPECT_EQ(sycuda::wrap_dim(0, 0, "t"), 0);
  EXPECT_THROW(sycuda::wrap_dim(3, 3, "t"), sy::Error);
}

// ---- host staging walks -------------------------------------------------------------------------

TEST(CudaHostCopy, GatherAndScatterFollowStrides) {
  // A [3, 4] view with strides [1, 3] (a transposed [4, 3] buffer) and a sliced [2, 3]
  // view (strides [8, 2]) of a larger buffer.
  std::vector<float> buffer(64);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  struct View {
    Shape shape, strides;
    int64_t offset;
  };
  for (const View& v : {View{{3, 4}, {1, 3}, 0}, View{{2, 3}, {8, 2}, 5}, View{{2, 2, 2}, {16, 1, 4}, 1}}) {
    int64_t shape[3], strides[3];
    for (size_t d = 0; d < v.shape.size(); ++d) shape[d] = v.shape[d], strides[d] = v.strides[d];
    DLTensor t{};
    t.data = buffer.data();
    t.byte_offset = static_cast<uint64_t>(v.offset) * sizeof(float);
    t.ndim = static_cast<int32_t>(v.shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = strides;
    EXPECT_FALSE(sycuda::is_compact(t));
    const int64_t n = sycuda::element_count(t);
    std::vector<float> packed(static_cast<size_t>(n));
    // Two chunks, as the staging does.
    sycuda::gather_elements(t, 0, n / 2, packed.data());
    sycuda::gather_elements(t, n / 2, n - n / 2, packed.data() + n / 2);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = v.offset, rest = i;
      for (size_t d = v.shape.size(); d-- > 0;) off += (rest % v.shape[d]) * v.strides[d], rest /= v.shape[d];
      ASSERT_EQ(packed[static_cast<size_t>(i)], buffer[static_cast<size_t>(off)]) << "element " << i;
    }
    std::vector<float> copy(buffer.size(), -1.f);
    t.data = copy.data();
    sycuda::scatter_elements(packed.data(), 0, n, t);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = v.offset, rest = i;
      for (size_t d = v.shape.size(); d-- > 0;) off += (rest % v.shape[d]) * v.strides[d], rest /= v.shape[d];
      ASSERT_EQ(copy[static_cast<size_t>(off)], buffer[static_cast<size_t>(off)]);
    }
  }
}

// ---- GEMM lowering --------------------------------------------------------------------------------

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (float& x : v) x = u(rng);
  return v;
}

// torch.matmul's definition, written out: 1-D operands get a dim of 1 that the result
// drops, batch dims broadcast. `b_t`: b is stored [.., n, k] (linear's weight).
std::vector<double> reference_matmul(const Shape& as, const std::vector<float>& a, const Shape& bs,
                                     const std::vector<float>& b, bool b_t, Shape* out_shape) {
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  Shape am = a1 ? Shape{1, as[0]} : as;
  Shape bm = b1 ? Shape{bs[0], 1} : bs;
  if (b_t) std::swap(bm[bm.size() - 1], bm[bm.size() - 2]);  // logical [k, n]
  const int64_t m = am[am.size() - 2], k = am.back(), n = bm.back();
  const Shape ab(am.begin(), am.end() - 2), bb(bm.begin(), bm.end() - 2);
  const Shape batch = sycuda::broadcast_shapes(ab, bb, "batch");
  *out_shape = batch;
  if (!a1) out_shape->push_back(m);
  if (!b1) out_shape->push_back(n);
  const int64_t count = sycuda::product(batch);
  std::vector<double> out(static_cast<size_t>(count * m * n));
  for (int64_t t = 0; t < count; ++t) {
    const int64_t oa = broadcast_offset(ab, batch, t) * m * k, ob = broadcast_offset(bb, batch, t) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) {
          const double bv = b_t ? b[static_cast<size_t>(ob + j * k + l)] : b[static_cast<size_t>(ob + l * n + j)];
          s += static_cast<double>(a[static_cast<size_t>(oa + i * k + l)]) * bv;
        }
        out[static_cast<size_t>((t * m + i) * n + j)] = s;
      }
  }
  return out;
}

void expect_plan_matches(const sycuda::GemmPlan& p, const Shape& as, const Shape& bs, bool b_t, const Shape* bias_shape,
                         double beta, double alpha) {
  const std::vector<float> a = random_values(sycuda::product(as), 1), b = random_values(sycuda::product(bs), 2);
  const std::vector<float> bias = bias_shape ? random_values(sycuda::product(*bias_shape), 3) : std::vector<float>{};
  Shape ref_shape;
  std::vector<double> ref = reference_matmul(as, a, bs, b, b_t, &ref_shape);
  ASSERT_EQ(p.out_shape, ref_shape);
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] *= alpha;
    if (bias_shape && beta != 0)
      ref[i] += beta * bias[static_cast<size_t>(broadcast_offset(*bias_shape, ref_shape, static_cast<int64_t>(i)))];
  }
  std::vector<float> out(ref.size(), 0.f);
  if (p.broadcast_bias)  // the device path copies the broadcast bias into the output first
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = bias[static_cast<size_t>(broadcast_offset(*bias_shape, ref_shape, static_cast<int64_t>(i)))];
  sycuda::run_plan_on_host(p, a.data(), b.data(), p.vector_bias ? bias.data() : nullptr, out.data());
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-4) << "element " << i;
}

TEST(CudaGemmPlan, MatmulBroadcastingAndOneDimOperands) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 4}, {4, 5}},
                                                      {{2, 3, 4}, {4, 5}},
                                                      {{4}, {4, 5}},
                                                      {{3, 4}, {4}},
                                                      {{4}, {4}},
                                                      {{2, 3, 4}, {2, 4, 5}},
                                                      {{2, 1, 3, 4}, {5, 4, 6}},
                                                      {{1, 3, 4}, {7, 4, 2}},
                                                      {{2, 3, 4}, {4}},
                                                      {{4}, {3, 4, 5}},
                                                      {{6, 1, 2, 3}, {1, 5, 3, 2}},
                                                      {{1, 1, 3, 4}, {4, 5}},
                                                      {{2, 3, 1, 4}, {3, 4, 2}}};
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(sycuda::str(a) + " @ " + sycuda::str(b));
    expect_plan_matches(sycuda::plan_matmul(a, b), a, b, false, nullptr, 0, 1);
  }
}

TEST(CudaGemmPlan, FoldsBatchIntoRowsOrStridedBatchesWithOuterLoops) {
  sycuda::GemmPlan p = sycuda::plan_matmul({2, 3, 4}, {4, 5});
  EXPECT_EQ(p.m, 6);  // one GEMM of 2 * 3 rows
  EXPECT_EQ(p.batch, 1);
  p = sycuda::plan_matmul({2, 3, 4}, {2, 4, 5});
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.stride_a, 12);
  EXPECT_EQ(p.stride_b, 20);
  EXPECT_TRUE(p.outer.empty());
  p = sycuda::plan_matmul({2, 1, 3, 4}, {5, 4, 6});  // a repeats over 5, b over 2
  EXPECT_EQ(p.batch, 5);
  EXPECT_EQ(p.stride_a, 0);
  ASSERT_EQ(p.outer, (Shape{2}));
  EXPECT_EQ(p.outer_b[0], 0);
}

TEST(CudaGemmPlan, LinearAddmmBaddbmm) {
  const Shape w = {5, 4}, bn = {5}, b0 = {}, b1 = {1};
  for (const Shape& x : {Shape{3, 4}, Shape{2, 3, 4}, Shape{4}, Shape{1, 1, 4}}) {
    SCOPED_TRACE("linear " + sycuda::str(x));
    expect_plan_matches(sycuda::plan_linear(x, w, nullptr), x, w, true, nullptr, 0, 1);
    const sycuda::GemmPlan pv = sycuda::plan_linear(x, w, &bn);
    EXPECT_TRUE(pv.vector_bias);
    expect_plan_matches(pv, x, w, true, &bn, 1, 1);
    expect_plan_matches(sycuda::plan_linear(x, w, &b0), x, w, true, &b0, 1, 1);
    expect_plan_matches(sycuda::plan_linear(x, w, &b1), x, w, true, &b1, 1, 1);
  }
  const Shape m1 = {3, 4}, m2 = {4, 5};
  for (const Shape& self : {Shape{5}, Shape{3, 5}, Shape{3, 1}, Shape{}}) {
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{0.0, 1.5}}) {
      SCOPED_TRACE("addmm self " + sycuda::str(self) + " beta " + std::to_string(beta));
      expect_plan_matches(sycuda::plan_addmm(self, m1, m2, beta, alpha), m1, m2, false, &self, beta, alpha);
    }
  }
  const Shape b1s = {2, 3, 4}, b2s = {2, 4, 5};
  for (const Shape& self : {Shape{1, 3, 5}, Shape{2, 3, 5}, Shape{5}}) {
    SCOPED_TRACE("baddbmm self " + sycuda::str(self));
    expect_plan_matches(sycuda::plan_baddbmm(self, b1s, b2s, 1.0, 1.0), b1s, b2s, false, &self, 1.0, 1.0);
    expect_plan_matches(sycuda::plan_baddbmm(self, b1s, b2s, 0.25, 3.0), b1s, b2s, false, &self, 0.25, 3.0);
  }
  expect_plan_matches(sycuda::plan_bmm({3, 2, 4}, {3, 4, 6}), {3, 2, 4}, {3, 4, 6}, false, nullptr, 0, 1);
  expect_plan_matches(sycuda::plan_mm({2, 4}, {4, 6}), {2, 4}, {4, 6}, false, nullptr, 0, 1);
}

TEST(CudaGemmPlan, ShapeErrorsNameTheOperands) {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const sy::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([] { sycuda::plan_matmul({3, 4}, {5, 6}); }).find("cannot be multiplied"), std::string::npos);
  EXPECT_NE(message([] { sycuda::plan_bmm({2, 3, 4}, {3, 4, 5}); }).find("same batch size"), std::string::npos);
  EXPECT_NE(message([] {
              sycuda::plan_linear({3, 4}, {5, 3}, nullptr);
            }).find("cannot be multiplied"),
            std::string::npos);
  EXPECT_NE(message([] { sycuda::plan_mm({3, 4, 1}, {4, 5}); }).find("must be a matrix"), std::string::npos);
  const Shape bad_bias = {3, 4};
  EXPECT_NE(message([&] { sycuda::plan_linear({3, 4}, {5, 4}, &bad_bias); }).find("bias"), std::string::npos);
  EXPECT_NE(message([] { sycuda::plan_addmm({4, 5}, {3, 4}, {4, 5}, 1, 1); }).find("broadcast"), std::string::npos);
}

TEST(CudaGemmPlan, ColumnMajorCallOfALinear) {
  const sycuda::ColumnMajorGemm c = sycuda::column_major(sycuda::plan_linear({8, 16}, {32, 16}, nullptr));
  // out^T [32 x 8] = W [32 x 16 read transposed from its 16 x 32 column-major storage] @ x^T.
  EXPECT_TRUE(c.trans_a);
  EXPECT_FALSE(c.trans_b);
  EXPECT_EQ(c.m, 32);
  EXPECT_EQ(c.n, 8);
  EXPECT_EQ(c.k, 16);
  EXPECT_EQ(c.ld_a, 16);
  EXPECT_EQ(c.ld_b, 16);
  EXPECT_EQ(c.ld_c, 32);
}

// ---- convolution and pooling geometry ------------------------------------------------------------

int64_t aten_conv_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

TEST(CudaConvPlan, OutputShapesFollowAten) {
  sycuda::ConvParams p;
  p.producer = "aten::_convolution";
  for (int64_t stride : {1, 2, 3})
    for (int64_t pad : {0, 1, 2})
      for (int64_t dil : {1, 2})
        for (int64_t groups : {1, 2}) {
          p.stride = {stride, stride};
          p.padding = {pad, pad};
          p.dilation = {dil, dil};
          p.groups = groups;
          const Shape x = {2, 4, 11, 9}, w = {6, 4 / groups, 3, 2};
          const sycuda::ConvGeometry g = sycuda::conv_geometry(p, x, w, nullptr);
          EXPECT_EQ(g.out_shape,
                    (Shape{2, 6, aten_conv_out(11, 3, pad, stride, dil), aten_conv_out(9, 2, pad, stride, dil)}));
          EXPECT_EQ(g.groups, groups);
        }
  // conv1d as a height of 1; an unbatched conv2d; padding='same' with an odd kernel.
  sycuda::ConvParams c1;
  c1.producer = "aten::conv1d";
  c1.spatial = 1;
  c1.unbatched_ok = true;
  sycuda::ConvGeometry g = sycuda::conv_geometry(c1, {2, 3, 10}, {4, 3, 3}, nullptr);
  EXPECT_EQ(g.out_shape, (Shape{2, 4, 8}));
  EXPECT_EQ(g.h, 1);
  EXPECT_EQ(g.r, 1);
  sycuda::ConvParams c2 = c1;
  c2.producer = "aten::conv2d";
  c2.spatial = 2;
  c2.pad_mode = "same";
  g = sycuda::conv_geometry(c2, {3, 8, 8}, {5, 3, 3, 3}, nullptr);
  EXPECT_EQ(g.out_shape, (Shape{5, 8, 8}));
  EXPECT_EQ(g.pad_h, 1);
  // What cuDNN's descriptors cannot express is declined, not approximated.
  EXPECT_THROW(sycuda::conv_geometry(c2, {1, 3, 8, 8}, {5, 3, 2, 2}, nullptr), sy::Unsupported);
  sycuda::ConvParams c3;
  c3.producer = "aten::convolution";
  EXPECT_THROW(sycuda::conv_geometry(c3, {1, 2, 4, 4, 4}, {3, 2, 1, 1, 1}, nullptr), sy::Unsupported);
  // Shape errors name the mismatch.
  const Shape bad_bias = {7};
  EXPECT_THROW(sycuda::conv_geometry(p, {1, 4, 8, 8}, {6, 3, 3, 3}, nullptr), sy::Error);
  p.groups = 1;
  EXPECT_THROW(sycuda::conv_geometry(p, {1, 4, 8, 8}, {6, 4, 3, 3}, &bad_bias), sy::Error);
}

TEST(CudaConvPlan, PoolingSizesAndWhatCudnnCannotDo) {
  sycuda::PoolParams p;
  p.kernel = {3, 3};
  p.stride = {2, 2};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  EXPECT_EQ(sycuda::pool_geometry(p, {1, 64, 112, 112}).out_shape, (Shape{1, 64, 56, 56}));  // resnet's stem
  EXPECT_EQ(sycuda::pool_geometry(p, {64, 7, 7}).out_shape, (Shape{64, 4, 4}));
  p.ceil_mode = true;  // 113 -> 57 either way: accepted
  EXPECT_EQ(sycuda::pool_geometry(p, {1, 8, 113, 113}).out_shape, (Shape{1, 8, 57, 57}));
  EXPECT_THROW(sycuda::pool_geometry(p, {1, 8, 112, 112}), sy::Unsupported);  // ceil: 57, floor: 56
  p.padding = {0, 0};  // 8 -> floor 3, ceil 4: cuDNN would drop the last window
  EXPECT_THROW(sycuda::pool_geometry(p, {1, 8, 8, 8}), sy::Unsupported);
  p.ceil_mode = false;
  EXPECT_THROW(sycuda::pool_geometry(p, {1, 8, 2, 2}), sy::Error);  // smaller than the kernel
}

// ---- the libraries opened on first use -------------------------------------------------------------

// The plugin opens cuBLASLt and cuDNN only once a GPU is usable; here, without one, the same
// code opens them and resolves every entry point the kernels call (a wrong soname or name
// would otherwise show only on a GPU machine).
TEST(CudaDynload, OpensCublasLtAndCudnnAndResolvesEveryEntryPoint) {
  const sycuda::lib::CublasLt& lt = sycuda::lib::lt();
#define SY_CHECK_ENTRY(name) EXPECT_NE(lt.name, nullptr) << #name;
  SY_CUBLASLT_FUNCTIONS(SY_CHECK_ENTRY)
#undef SY_CHECK_ENTRY
  EXPECT_STREQ(lt.cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
#ifdef SY_CUDA_WITH_CUDNN
  const sycuda::lib::Cudnn& dnn = sycuda::lib::dnn();
#define SY_CHECK_ENTRY(name) EXPECT_NE(dnn.name, nullptr) << #name;
  SY_CUDNN_FUNCTIONS(SY_CHECK_ENTRY)
#undef SY_CHECK_ENTRY
  EXPECT_NE(std::string(dnn.cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)), "");
#endif
}

}  // namespace
