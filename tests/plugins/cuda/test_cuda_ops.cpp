// The cuda plugin's own kernels on a GPU: element-wise ops (broadcasting, scalars, 0-dim
// constants, integer and bool dtypes, float16/bfloat16), where/masked_fill, batch_norm,
// fills, softmax, layer_norm, shape ops, gathers and the fused attention, each against a
// host reference; then chains that keep values on the device, concurrent runs and node_io
// capture of device values. Without a GPU every test skips, naming the reason.
#include "api/internal.hpp"
#include "cuda_test_util.hpp"
#include "elementwise_math.hpp"

#include <algorithm>
#include <thread>

namespace {

using namespace cudatest;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

int64_t bcast(const Shape& shape, const Shape& out, int64_t i) {
  std::vector<int64_t> index(out.size());
  for (size_t d = out.size(); d-- > 0;) index[d] = i % out[d], i /= out[d];
  int64_t off = 0, step = 1;
  for (size_t k = 1; k <= shape.size(); ++k) {
    if (shape[shape.size() - k] != 1) off += index[out.size() - k] * step;
    step *= shape[shape.size() - k];
  }
  return off;
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 1; i <= out.size(); ++i) {
    const int64_t x = i <= a.size() ? a[a.size() - i] : 1, y = i <= b.size() ? b[b.size() - i] : 1;
    out[out.size() - i] = x == 1 ? y : x;
  }
  return out;
}

// Rounds a reference to what `dtype` stores (the device rounds its result once).
double rounded(double v, DLDataType dtype) {
  if (dtype.code == kDLFloat && dtype.bits == 16) return half_to_float(float_to_half(static_cast<float>(v)));
  if (dtype.code == kDLBfloat) return bf16_to_float(float_to_bf16(static_cast<float>(v)));
  return v;
}

// ---- element-wise --------------------------------------------------------------------------------

TEST(CudaElementwise, UnaryOpsInEveryFloatDtype) {
  REQUIRE_GPU();
  using sycuda::Unary;
  struct Case {
    std::string op;
    ir::Attributes attrs;
    sycuda::UnaryOp u;
  };
  const std::vector<Case> cases = {
      {"aten::relu", {}, {Unary::Relu}},
      {"aten::gelu", {{"approximate", text("none")}}, {Unary::Gelu}},
      {"aten::gelu", {{"approximate", text("tanh")}}, {Unary::GeluTanh}},
      {"aten::silu", {}, {Unary::Silu}},
      {"aten::sigmoid", {}, {Unary::Sigmoid}},
      {"aten::tanh", {}, {Unary::Tanh}},
      {"aten::hardswish", {}, {Unary::Hardswish}},
      {"aten::hardsigmoid", {}, {Unary::Hardsigmoid}},
      {"aten::hardtanh", {{"min_val", f64(-0.5)}, {"max_val", f64(2)}}, {Unary::Hardtanh, -0.5f, 2.f}},
      {"aten::relu6", {}, {Unary::Hardtanh, 0.f, 6.f}},
      {"aten::leaky_relu", {{"negative_slope", f64(0.1)}}, {Unary::LeakyRelu, 0.1f}},
      {"aten::exp", {}, {Unary::Exp}},
      {"aten::neg", {}, {Unary::Neg}},
      {"aten::abs", {}, {Unary::Abs}},
      {"aten::erf", {}, {Unary::Erf}},
      {"aten::clamp", {{"min", f64(-1)}, {"max", f64(1.5)}}, {Unary::Hardtanh, -1.f, 1.5f}},
      {"aten::clamp", {{"min", f64(0.25)}}, {Unary::ClampMin, 0.25f}},
  };
  for (DLDataType dt : {kF32, kF16, kBF16}) {
    Tensor x = random({3, 257}, 7, dt, -8, 8);
    if (dt.bits == 32) x.data<float>()[3] = NAN;
    const std::vector<double> xv = values_of(x);
    for (const Case& c : cases) {
      std::vector<double> ref;
      for (double v : xv) ref.push_back(rounded(sycuda::apply_unary(c.u, static_cast<float>(v)), dt));
      const Tensor got = run_cuda({{c.op, c.attrs, {}}}, {in(x)})[0];
      EXPECT_TRUE(switchyard::same_dtype(got.dtype(), dt));
      expect_close(got, ref, {3, 257}, tolerance(dt, 2e-6), c.op + " " + switchyard::dtype_name(dt));
    }
  }
  const Tensor b = bools({4}, {1, 0, 0, 1});
  expect_close(run_cuda({{"aten::logical_not", {}, {}}}, {in(b)})[0], {0, 1, 1, 0}, {4}, 0, "logical_not");
}

TEST(CudaElementwise, BinaryOpsBroadcastAndTakeScalars) {
  REQUIRE_GPU();
  struct Case {
    std::string op;
    double (*f)(double, double);
  };
  const std::vector<Case> ops = {{"aten::add", [](double a, double b) { return a + b; }},
                                 {"aten::sub", [](double a, double b) { return a - b; }},
                                 {"aten::mul", [](double a, double b) { return a * b; }},
                                 {"aten::div", [](double a, double b) { return a / b; }},
                                 {"aten::maximum", [](double a, double b) { return std::max(a, b); }},
                                 {"aten::minimum", [](double a, double b) { return std::min(a, b); }}};
  const std::vector<std::pair<Shape, Shape>> shapes = {{{4, 5}, {4, 5}}, {{4, 1, 3}, {5, 3}},
                                                       {{2, 3, 4}, {}},  {{3, 1}, {1, 7}},
                                                       {{1}, {6}},       {{2, 1, 4, 1, 3}, {5, 1, 3}}};
  uint32_t seed = 1;
  for (DLDataType dt : {kF32, kF16}) {
    for (const auto& [as, bs] : shapes) {
      const Tensor a = random(as, seed++, dt, 0.5, 2), b = random(bs, seed++, dt, 0.5, 2);
      const std::vector<double> av = values_of(a), bv = values_of(b);
      const Shape out = broadcast(as, bs);
      for (const Case& c : ops) {
        std::vector<double> ref;
        for (int64_t i = 0; i < numel(out); ++i)
          ref.push_back(
              rounded(c.f(av[static_cast<size_t>(bcast(as, out, i))], bv[static_cast<size_t>(bcast(bs, out, i))]), dt));
        ir::Attributes attrs;
        if (c.op == "aten::add" || c.op == "aten::sub") attrs = {{"alpha", i64(1)}};
        expect_close(run_cuda({{c.op, attrs, {}}}, {in(a), in(b)})[0], ref, out, tolerance(dt, 1e-6),
                     c.op + " " + switchyard::shape_string(as) + " " + switchyard::shape_string(bs));
      }
    }
  }
  // alpha, a Scalar `other`, a 0-dim float64 constant (a traced Python number) and rsub.
  const Tensor x = random({5, 6}, 9);
  const std::vector<double> xv = values_of(x);
  std::vector<double> ref;
  for (double v : xv) ref.push_back(v - 2.5 * 3.0);
  expect_close(run_cuda({{"aten::sub", {{"other", f64(3.0)}, {"alpha", f64(2.5)}}, {}}}, {in(x)})[0], ref, {5, 6}, 1e-6,
               "sub Scalar alpha");
  ref.clear();
  for (double v : xv) ref.push_back(static_cast<float>(v) / static_cast<float>(std::sqrt(32.0)));
  expect_close(run_cuda({{"aten::div", {}, {}}}, {in(x), weight(scalar_f64(std::sqrt(32.0)))})[0], ref, {5, 6}, 1e-6,
               "div by a 0-dim float64 constant");
  ref.clear();
  for (double v : xv) ref.push_back(1.0 - 2 * v);
  expect_close(run_cuda({{"aten::rsub", {{"other", f64(1.0)}, {"alpha", i64(2)}}, {}}}, {in(x)})[0], ref, {5, 6}, 1e-6,
               "rsub");
}

TEST(CudaElementwise, IntegerArithmeticAndComparisons) {
  REQUIRE_GPU();
  const Tensor a = ints({2, 3}, {0, 5, -3, 7, 0, 2}), b = ints({3}, {0, 4, 2});
  expect_close(run_cuda({{"aten::add", {{"alpha", i64(3)}}, {}}}, {in(a), in(b)})[0], {0, 17, 3, 7, 12, 8}, {2, 3}, 0,
               "int add");
  const Tensor eq = run_cuda({{"aten::eq", {{"other", i64(0)}}, {}}}, {in(a)})[0];
  EXPECT_TRUE(switchyard::same_dtype(eq.dtype(), kBool));
  expect_close(eq, {1, 0, 0, 0, 1, 0}, {2, 3}, 0, "eq Scalar");
  expect_close(run_cuda({{"aten::lt", {}, {}}}, {in(a), in(b)})[0], {0, 0, 1, 0, 1, 0}, {2, 3}, 0, "lt");
  const Tensor f = random({4, 4}, 3);
  const std::vector<double> fv = values_of(f);
  std::vector<double> ref;
  for (double v : fv) ref.push_back(v >= 0.1 ? 1 : 0);
  expect_close(run_cuda({{"aten::ge", {{"other", f64(0.1)}}, {}}}, {in(f)})[0], ref, {4, 4}, 0, "ge float");
  EXPECT_NE(cuda_error({{"aten::div", {}, {}}}, {in(a), in(b)}).find("integer"), std::string::npos);
  EXPECT_NE(cuda_error({{"aten::add", {}, {}}}, {in(a), in(f)}).find("promotion"), std::string::npos);
}

TEST(CudaElementwise, WhereMaskedFillBatchNormAndFills) {
  REQUIRE_GPU();
  const Tensor x = random({2, 3, 4}, 1), y = random({3, 1}, 2);
  const Tensor c = bools({3, 4}, {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0});
  const std::vector<double> xv = values_of(x), yv = values_of(y), cv = values_of(c);
  std::vector<double> ref;
  for (int64_t i = 0; i < 24; ++i)
    ref.push_back(cv[static_cast<size_t>(i % 12)] ? xv[static_cast<size_t>(i)] : yv[static_cast<size_t>((i % 12) / 4)]);
  expect_close(run_cuda({{"aten::where", {}, {}}}, {in(c), in(x), in(y)})[0], ref, {2, 3, 4}, 0, "where");
  ref.clear();
  for (int64_t i = 0; i < 24; ++i)
    ref.push_back(cv[static_cast<size_t>(i % 12)] ? -INFINITY : xv[static_cast<size_t>(i)]);
  expect_close(run_cuda({{"aten::masked_fill", {{"value", f64(-INFINITY)}}, {}}}, {in(x), in(c)})[0], ref, {2, 3, 4}, 0,
               "masked_fill");
  // batch_norm in inference.
  const Tensor img = random({2, 3, 5, 5}, 3), mean = random({3}, 4), var = random({3}, 5, kF32, 0.5, 2),
               w = random({3}, 6), b = random({3}, 7);
  const std::vector<double> iv = values_of(img), mv = values_of(mean), vv = values_of(var), wv = values_of(w),
                            bv = values_of(b);
  ref.clear();
  for (int64_t i = 0; i < 150; ++i) {
    const size_t ch = static_cast<size_t>((i / 25) % 3);
    ref.push_back((iv[static_cast<size_t>(i)] - mv[ch]) / std::sqrt(vv[ch] + 1e-5) * wv[ch] + bv[ch]);
  }
  expect_close(run_cuda({{"aten::batch_norm",
                          {{"training", i64(0)}, {"momentum", f64(0.1)}, {"eps", f64(1e-5)}, {"cudnn_enabled", i64(1)}},
                          {}}},
                        {in(img), weight(w), weight(b), weight(mean), weight(var)})[0],
               ref, {2, 3, 5, 5}, 1e-5, "batch_norm");
  const Tensor z = run_cuda({{"aten::zeros_like", {{"dtype", i64(6)}}, {}}}, {in(img)})[0];
  EXPECT_EQ(z.shape(), img.shape());
  for (double v : values_of(z)) ASSERT_EQ(v, 0.0);
  expect_close(run_cuda({{"aten::full_like", {{"fill_value", f64(2.5)}}, {}}}, {in(random({3}, 1))})[0],
               {2.5, 2.5, 2.5}, {3}, 0, "full_like");
}

// ---- softmax and layer norm ------------------------------------------------------------------------

TEST(CudaReduce, SoftmaxOverAnyDimAndLogSoftmax) {
  REQUIRE_GPU();
  for (DLDataType dt : {kF32, kF16, kBF16}) {
    for (const auto& [shape, dim] : {std::pair{Shape{4, 7}, int64_t{-1}}, std::pair{Shape{3, 1000}, int64_t{1}},
                                     std::pair{Shape{2, 5, 3}, int64_t{1}}, std::pair{Shape{2, 3, 4, 5}, int64_t{0}},
                                     std::pair{Shape{2, 4100}, int64_t{-1}}}) {
      const Tensor x = random(shape, 3, dt, -6, 6);
      const std::vector<double> xv = values_of(x);
      const int64_t d = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
      int64_t outer = 1, inner = 1;
      for (int64_t k = 0; k < static_cast<int64_t>(shape.size()); ++k)
        (k < d ? outer : (k > d ? inner : outer)) *= k == d ? 1 : shape[k];
      const int64_t size = shape[static_cast<size_t>(d)];
      std::vector<double> soft(xv.size()), logsoft(xv.size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t r = 0; r < inner; ++r) {
          double m = -INFINITY, s = 0;
          for (int64_t j = 0; j < size; ++j) m = std::max(m, xv[static_cast<size_t>((o * size + j) * inner + r)]);
          for (int64_t j = 0; j < size; ++j) s += std::exp(xv[static_cast<size_t>((o * size + j) * inner + r)] - m);
          for (int64_t j = 0; j < size; ++j) {
            const size_t i = static_cast<size_t>((o * size + j) * inner + r);
            soft[i] = std::exp(xv[i] - m) / s;
            logsoft[i] = xv[i] - m - std::log(s);
          }
        }
      const std::string what =
          switchyard::dtype_name(dt) + " " + switchyard::shape_string(shape) + " dim " + std::to_string(dim);
      expect_close(run_cuda({{"aten::softmax", {{"dim", i64(dim)}}, {}}}, {in(x)})[0], soft, shape, tolerance(dt),
                   "softmax " + what);
      expect_close(run_cuda({{"aten::log_softmax", {{"dim", i64(dim)}}, {}}}, {in(x)})[0], logsoft, shape,
                   tolerance(dt, 2e-5), "log_softmax " + what);
    }
  }
  // A row holding NaN is NaN; a row of -inf is NaN (0/0), as ATen.
  Tensor x = random({3, 5}, 1);
  x.data<float>()[2] = NAN;
  for (int j = 0; j < 5; ++j) x.data<float>()[10 + j] = -INFINITY;
  const std::vector<double> got = values_of(run_cuda({{"aten::softmax", {{"dim", i64(1)}}, {}}}, {in(x)})[0]);
  for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(got[static_cast<size_t>(j)])) << j;
  for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isfinite(got[static_cast<size_t>(5 + j)])) << j;
  for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(got[static_cast<size_t>(10 + j)])) << j;
}

TEST(CudaReduce, LayerNorm) {
  REQUIRE_GPU();
  for (DLDataType dt : {kF32, kF16, kBF16}) {
    for (const Shape& shape : {Shape{4, 128}, Shape{2, 197, 768}, Shape{3, 7}, Shape{2, 5000}, Shape{2, 3, 4, 6}}) {
      const Shape norm = shape.size() == 4 ? Shape{4, 6} : Shape{shape.back()};
      const int64_t cols = numel(norm), rows = numel(shape) / cols;
      const Tensor x = random(shape, 1, dt, -3, 5), w = random(norm, 2, dt), b = random(norm, 3, dt);
      const std::vector<double> xv = values_of(x), wv = values_of(w), bv = values_of(b);
      std::vector<double> ref, plain;
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < cols; ++j) mean += xv[static_cast<size_t>(r * cols + j)];
        mean /= static_cast<double>(cols);
        for (int64_t j = 0; j < cols; ++j) var += std::pow(xv[static_cast<size_t>(r * cols + j)] - mean, 2);
        var /= static_cast<double>(cols);
        for (int64_t j = 0; j < cols; ++j) {
          const double n = (xv[static_cast<size_t>(r * cols + j)] - mean) / std::sqrt(var + 1e-5);
          plain.push_back(n);
          ref.push_back(n * wv[static_cast<size_t>(j)] + bv[static_cast<size_t>(j)]);
        }
      }
      const std::string what = switchyard::dtype_name(dt) + " " + switchyard::shape_string(shape);
      const ir::Attributes attrs = {{"normalized_shape", list(norm)}, {"eps", f64(1e-5)}, {"cudnn_enable", i64(1)}};
      expect_close(run_cuda({{"aten::layer_norm", attrs, {}}}, {in(x), weight(w), weight(b)})[0], ref, shape,
                   tolerance(dt, 2e-5), "layer_norm " + what);
      expect_close(run_cuda({{"aten::layer_norm", attrs, {}}}, {in(x), absent(), absent()})[0], plain, shape,
                   tolerance(dt, 2e-5), "layer_norm without affine " + what);
    }
  }
}

// ---- shape ops and gathers --------------------------------------------------------------------------

// Element i of a compact tensor of `shape` seen through a permutation `perm` of its dims.
std::vector<double> permuted(const std::vector<double>& v, const Shape& shape, const Shape& perm, Shape* out) {
  out->clear();
  for (int64_t p : perm) out->push_back(shape[static_cast<size_t>(p)]);
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) strides[d] = s, s *= shape[d];
  std::vector<double> r;
  for (int64_t i = 0; i < numel(*out); ++i) {
    int64_t rest = i, off = 0;
    for (size_t d = out->size(); d-- > 0;)
      off += (rest % (*out)[d]) * strides[static_cast<size_t>(perm[d])], rest /= (*out)[d];
    r.push_back(v[static_cast<size_t>(off)]);
  }
  return r;
}

TEST(CudaShape, ViewsReshapesPermutesSlicesAndSplits) {
  REQUIRE_GPU();
  const Tensor x = random({2, 3, 4}, 1);
  const std::vector<double> xv = values_of(x);
  expect_close(run_cuda({{"aten::view", {{"size", list({4, -1})}}, {}}}, {in(x)})[0], xv, {4, 6}, 0, "view");
  expect_close(run_cuda({{"aten::flatten", {{"start_dim", i64(1)}, {"end_dim", i64(-1)}}, {}}}, {in(x)})[0], xv,
               {2, 12}, 0, "flatten");
  expect_close(run_cuda({{"aten::unsqueeze", {{"dim", i64(1)}}, {}}}, {in(x)})[0], xv, {2, 1, 3, 4}, 0, "unsqueeze");
  Shape out;
  std::vector<double> ref = permuted(xv, {2, 3, 4}, {2, 0, 1}, &out);
  expect_close(run_cuda({{"aten::permute", {{"dims", list({2, 0, 1})}}, {}}}, {in(x)})[0], ref, out, 0, "permute");
  ref = permuted(xv, {2, 3, 4}, {0, 2, 1}, &out);
  expect_close(run_cuda({{"aten::transpose", {{"dim0", i64(1)}, {"dim1", i64(2)}}, {}}}, {in(x)})[0], ref, out, 0,
               "transpose");
  // transpose -> contiguous -> view, as the decomposed attention does.
  expect_close(run_cuda({{"aten::transpose", {{"dim0", i64(1)}, {"dim1", i64(2)}}, {}},
                         {"aten::contiguous", {{"memory_format", i64(0)}}, {}},
                         {"aten::view", {{"size", list({2, 12})}}, {}}},
                        {in(x)})[0],
               ref, {2, 12}, 0, "transpose, contiguous, view");
  // slice dim 2, 1:4:2 and select dim 1 index -1.
  ref.clear();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 1; c < 4; c += 2) ref.push_back(xv[static_cast<size_t>((a * 3 + b) * 4 + c)]);
  expect_close(
      run_cuda({{"aten::slice", {{"dim", i64(2)}, {"start", i64(1)}, {"end", i64(INT64_MAX)}, {"step", i64(2)}}, {}}},
               {in(x)})[0],
      ref, {2, 3, 2}, 0, "slice");
  ref.clear();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 4; ++c) ref.push_back(xv[static_cast<size_t>((a * 3 + 2) * 4 + c)]);
  expect_close(run_cuda({{"aten::select", {{"dim", i64(1)}, {"index", i64(-1)}}, {}}}, {in(x)})[0], ref, {2, 4}, 0,
               "select");
  // chunk into 3 along the last dim of [2, 6]: three outputs.
  const Tensor y = random({2, 6}, 2);
  const std::vector<double> yv = values_of(y);
  const std::vector<Tensor> parts = run_cuda({{"aten::chunk", {{"chunks", i64(3)}, {"dim", i64(-1)}}, {}, 3}}, {in(y)});
  ASSERT_EQ(parts.size(), 3u);
  for (int64_t p = 0; p < 3; ++p)
    expect_close(parts[static_cast<size_t>(p)],
                 {yv[static_cast<size_t>(2 * p)], yv[static_cast<size_t>(2 * p + 1)],
                  yv[static_cast<size_t>(6 + 2 * p)], yv[static_cast<size_t>(7 + 2 * p)]},
                 {2, 2}, 0, "chunk " + std::to_string(p));
  // expand [1, 1, 4] to [3, 2, 4].
  const Tensor e = random({1, 1, 4}, 3);
  const std::vector<double> ev = values_of(e);
  ref.clear();
  for (int i = 0; i < 6; ++i) ref.insert(ref.end(), ev.begin(), ev.end());
  expect_close(run_cuda({{"aten::expand", {{"size", list({3, 2, -1})}, {"implicit", i64(0)}}, {}}}, {in(e)})[0], ref,
               {3, 2, 4}, 0, "expand");
}

TEST(CudaShape, CatAndStackOfEveryDtype) {
  REQUIRE_GPU();
  const Tensor a = random({2, 3}, 1), b = random({2, 5}, 2), empty = Tensor::empty(kF32, {0});
  const std::vector<double> av = values_of(a), bv = values_of(b);
  std::vector<double> ref;
  for (int r = 0; r < 2; ++r) {
    ref.insert(ref.end(), av.begin() + r * 3, av.begin() + r * 3 + 3);
    ref.insert(ref.end(), bv.begin() + r * 5, bv.begin() + r * 5 + 5);
  }
  expect_close(run_cuda({{"aten::cat", {{"dim", i64(1)}}, {}}}, {in(a), in(empty), in(b)})[0], ref, {2, 8}, 0, "cat");
  const Tensor i1 = ints({3}, {1, 2, 3}), i2 = ints({3}, {4, 5, 6});
  expect_close(run_cuda({{"aten::stack", {{"dim", i64(1)}}, {}}}, {in(i1), in(i2)})[0], {1, 4, 2, 5, 3, 6}, {3, 2}, 0,
               "stack int64");
}

TEST(CudaShape, EmbeddingAndIndexSelect) {
  REQUIRE_GPU();
  const Tensor table = random({10, 4}, 1);
  const std::vector<double> tv = values_of(table);
  const Tensor ids = ints({2, 3}, {0, 9, 3, -1, 4, 4});
  std::vector<double> ref;
  for (int64_t id : {0, 9, 3, 9, 4, 4}) ref.insert(ref.end(), tv.begin() + id * 4, tv.begin() + id * 4 + 4);
  expect_close(
      run_cuda(
          {{"aten::embedding", {{"padding_idx", i64(-1)}, {"scale_grad_by_freq", i64(0)}, {"sparse", i64(0)}}, {}}},
          {weight(table), in(ids)})[0],
      ref, {2, 3, 4}, 0, "embedding");
  ref.clear();
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c : {3, 0}) ref.push_back(tv[static_cast<size_t>(r * 4 + c)]);
  expect_close(run_cuda({{"aten::index_select", {{"dim", i64(1)}}, {}}}, {in(table), in(ints({2}, {3, 0}))})[0], ref,
               {10, 2}, 0, "index_select");
  // An index out of range fails the run with the node's name, not a silent zero.
  const std::string err = cuda_error({{"aten::embedding", {}, {}}}, {weight(table), in(ints({2}, {1, 10}))});
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
}

// ---- attention -------------------------------------------------------------------------------------

struct AttnRef {
  std::vector<double> out, weights;
};

// softmax(q k^T * scale + mask) v over broadcast lead dims, in double.
AttnRef attention_ref(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale,
                      Shape* lead_out) {
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  const int64_t L = qs[qs.size() - 2], E = qs.back(), S = ks[ks.size() - 2], Ev = vs.back();
  const Shape ql(qs.begin(), qs.end() - 2), kl(ks.begin(), ks.end() - 2), vl(vs.begin(), vs.end() - 2);
  const Shape lead = broadcast(broadcast(ql, kl), vl);
  *lead_out = lead;
  const std::vector<double> qv = values_of(q), kv = values_of(k), vv = values_of(v);
  const std::vector<double> mv = mask ? values_of(*mask) : std::vector<double>{};
  Shape full = lead;
  full.insert(full.end(), {L, S});
  const bool bool_mask = mask && mask->dtype().code == 6;
  AttnRef r;
  for (int64_t t = 0; t < numel(lead); ++t) {
    const int64_t oq = bcast(ql, lead, t) * L * E, ok = bcast(kl, lead, t) * S * E, ov = bcast(vl, lead, t) * S * Ev;
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += qv[static_cast<size_t>(oq + i * E + e)] * kv[static_cast<size_t>(ok + j * E + e)];
        double sc = dot * scale;
        bool keep = !causal || j <= i;
        if (mask) {
          const double mvv = mv[static_cast<size_t>(bcast(mask->shape(), full, (t * L + i) * S + j))];
          if (bool_mask)
            keep = keep && mvv != 0;
          else
            sc += mvv;
        }
        s[static_cast<size_t>(j)] = keep ? sc : -INFINITY;
        m = std::max(m, s[static_cast<size_t>(j)]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = (m == -INFINITY ? 0 : std::exp(x - m)));
      for (double& x : s) x = sum > 0 ? x / sum : NAN;
      r.weights.insert(r.weights.end(), s.begin(), s.end());
      for (int64_t d = 0; d < Ev; ++d) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += s[static_cast<size_t>(j)] * vv[static_cast<size_t>(ov + j * Ev + d)];
        r.out.push_back(o);
      }
    }
  }
  return r;
}

TEST(CudaAttention, FusedAttentionMatchesTheDefinition) {
  REQUIRE_GPU();
  struct Case {
    Shape q, k, v;
    bool causal;
    int mask;  // 0 none, 1 bool [L, S], 2 float [B, 1, L, S]
  };
  const std::vector<Case> cases = {
      {{2, 4, 16, 32}, {2, 4, 16, 32}, {2, 4, 16, 32}, false, 0},
      {{2, 4, 37, 64}, {2, 4, 37, 64}, {2, 4, 37, 64}, true, 0},
      {{1, 2, 5, 8}, {1, 2, 70, 8}, {1, 2, 70, 24}, false, 1},
      {{2, 3, 33, 16}, {2, 3, 33, 16}, {2, 3, 33, 16}, false, 2},
      {{4, 197, 64}, {4, 197, 64}, {4, 197, 64}, false, 0},
      {{2, 1, 9, 128}, {2, 3, 9, 128}, {1, 3, 9, 128}, false, 0},  // broadcast lead dims
  };
  uint32_t seed = 1;
  for (DLDataType dt : {kF32, kF16}) {
    for (const Case& c : cases) {
      const int64_t L = c.q[c.q.size() - 2], S = c.k[c.k.size() - 2];
      const Tensor q = random(c.q, seed++, dt), k = random(c.k, seed++, dt), v = random(c.v, seed++, dt);
      std::optional<Tensor> mask;
      if (c.mask == 1) {
        std::vector<int> keep;
        for (int64_t i = 0; i < L * S; ++i) keep.push_back((i * 7) % 3 != 0);
        mask = bools({L, S}, keep);
      } else if (c.mask == 2) {
        mask = random({c.q[0], 1, L, S}, seed++, dt, -2, 2);
      }
      Shape lead;
      const AttnRef ref =
          attention_ref(q, k, v, mask ? &*mask : nullptr, c.causal, 1 / std::sqrt(double(c.q.back())), &lead);
      Shape out = lead;
      out.insert(out.end(), {L, c.v.back()});
      const std::string what = switchyard::dtype_name(dt) + " q " + switchyard::shape_string(c.q);
      const ir::Attributes attrs = {{"dropout_p", f64(0)}, {"is_causal", i64(c.causal)}};
      expect_close(run_cuda({{"aten::scaled_dot_product_attention", attrs, {}}},
                            {in(q), in(k), in(v), mask ? in(*mask) : absent()})[0],
                   ref.out, out, tolerance(dt, 2e-5), "sdpa " + what);
      // LibTorch 1.13's form returns the softmax weights too.
      if (lead == broadcast(Shape(c.q.begin(), c.q.end() - 2), Shape(c.k.begin(), c.k.end() - 2))) {
        const std::vector<Tensor> two =
            run_cuda({{"aten::_scaled_dot_product_attention",
                       {{"dropout_p", f64(0)}, {"need_attn_weights", i64(0)}, {"is_causal", i64(c.causal)}},
                       {},
                       2}},
                     {in(q), in(k), in(v), mask ? in(*mask) : absent()});
        ASSERT_EQ(two.size(), 2u);
        expect_close(two[0], ref.out, out, tolerance(dt, 2e-5), "_sdpa output " + what);
        Shape w = lead;
        w.insert(w.end(), {L, S});
        expect_close(two[1], ref.weights, w, tolerance(dt, 2e-5), "_sdpa weights " + what);
      }
    }
  }
  // A fully masked row is NaN, as ATen's math path.
  const Tensor q = random({1, 2, 4}, 1), kk = random({1, 3, 4}, 2);
  const std::vector<double> got =
      values_of(run_cuda({{"aten::scaled_dot_product_attention", {}, {}}},
                         {in(q), in(kk), in(kk), in(bools({2, 3}, {0, 0, 0, 1, 1, 0}))})[0]);
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(std::isnan(got[static_cast<size_t>(d)])) << d;
  for (int d = 4; d < 8; ++d) EXPECT_TRUE(std::isfinite(got[static_cast<size_t>(d)])) << d;
}

// ---- chains, concurrency, node_io -------------------------------------------------------------------

// linear -> gelu -> linear -> softmax: intermediate values stay in the cuda storage.
std::vector<Step> mlp_steps(const Tensor& w2) {
  return {{"aten::linear", {}, {}},
          {"aten::gelu", {{"approximate", text("none")}}, {}},
          {"aten::linear", {}, {weight(w2), absent()}},
          {"aten::softmax", {{"dim", i64(-1)}}, {}}};
}

std::vector<double> mlp_ref(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  const std::vector<double> xv = values_of(x), w1v = values_of(w1), b1v = values_of(b1), w2v = values_of(w2);
  const int64_t rows = x.shape()[0], k = x.shape()[1], h = w1.shape()[0], n = w2.shape()[0];
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> hid(static_cast<size_t>(h)), o(static_cast<size_t>(n));
    for (int64_t j = 0; j < h; ++j) {
      double s = b1v[static_cast<size_t>(j)];
      for (int64_t l = 0; l < k; ++l) s += xv[static_cast<size_t>(r * k + l)] * w1v[static_cast<size_t>(j * k + l)];
      hid[static_cast<size_t>(j)] = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
    }
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < h; ++l) s += hid[static_cast<size_t>(l)] * w2v[static_cast<size_t>(j * h + l)];
      o[static_cast<size_t>(j)] = s;
      m = std::max(m, s);
    }
    for (double& v : o) sum += (v = std::exp(v - m));
    for (double v : o) out.push_back(v / sum);
  }
  return out;
}

TEST(CudaChain, ValuesStayOnTheDeviceBetweenNodes) {
  REQUIRE_GPU();
  const Tensor x = random({9, 32}, 1), w1 = random({64, 32}, 2), b1 = random({64}, 3), w2 = random({16, 64}, 4);
  const std::vector<Tensor> out = run_cuda(mlp_steps(w2), {in(x), weight(w1), weight(b1)});
  expect_close(out[0], mlp_ref(x, w1, b1, w2), {9, 16}, 1e-5, "linear, gelu, linear, softmax");
}

TEST(CudaChain, ConcurrentRunsOfOneModel) {
  REQUIRE_GPU();
  const Tensor w1 = random({64, 32}, 2), b1 = random({64}, 3), w2 = random({16, 64}, 4);
  Built b = chain(mlp_steps(w2), {in(random({9, 32}, 1)), weight(w1), weight(b1)});
  auto model = load_graph(cuda_runtime(), std::move(b.graph));
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      switchyard::RunContext ctx;
      for (int i = 0; i < 20; ++i) {
        const Tensor x = random({5 + t, 32}, static_cast<uint32_t>(100 * t + i));
        const std::vector<Tensor> out = model->run({x}, ctx);
        const std::vector<double> ref = mlp_ref(x, w1, b1, w2), got = values_of(out[0]);
        for (size_t e = 0; e < ref.size(); ++e)
          if (std::fabs(got[e] - ref[e]) > 1e-5) {
            failures[static_cast<size_t>(t)] = "thread " + std::to_string(t) + " run " + std::to_string(i) +
                                               " element " + std::to_string(e) + ": " + std::to_string(got[e]) +
                                               " vs " + std::to_string(ref[e]);
            return;
          }
      }
    });
  for (std::thread& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_TRUE(f.empty()) << f;
}

TEST(CudaChain, NodeIoCaptureCopiesDeviceValuesBack) {
  REQUIRE_GPU();
  switchyard::Runtime rt(switchyard::Options{cuda_only_config("[runtime]\nnode_io = \"all\"\n")});
  const Tensor x = random({3, 8}, 1), w1 = random({6, 8}, 2), b1 = random({6}, 3), w2 = random({4, 6}, 4);
  Built b = chain(mlp_steps(w2), {in(x), weight(w1), weight(b1)});
  auto model = load_graph(rt, std::move(b.graph));
  const std::vector<Tensor> out = model->run(b.feeds);
  const std::vector<switchyard::NodeIO>& io = model->node_io();
  ASSERT_EQ(io.size(), 4u);
  for (const switchyard::NodeIO& r : io)
    for (const Tensor& t : r.outputs)
      EXPECT_EQ(t.device().device_type, kDLCPU) << r.node << ": node_io holds a device tensor";
  // The last record's output is the graph output.
  expect_close(io.back().outputs[0], values_of(out[0]), out[0].shape(), 0, "node_io of the last node");
}

}  // namespace
