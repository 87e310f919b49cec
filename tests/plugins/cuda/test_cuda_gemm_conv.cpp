// The cuda plugin's GEMM, convolution and pooling kernels on a GPU, each node on the cuda
// plugin alone (strict), against host references written out here in double precision,
// at several shapes (broadcast batches, 1-D operands, odd sizes) and dtypes. Without a GPU
// every test skips, naming the reason the plugin gives.
#include "api/internal.hpp"
#include "cuda_test_util.hpp"

#include <algorithm>

namespace {

using namespace cudatest;

// ---- references ----------------------------------------------------------------------------------

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// Offset of element i of `out` in a compact tensor of `shape` broadcast to it.
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

// torch.matmul in double. b_t: b holds [.., n, k] (a linear weight).
std::vector<double> matmul_ref(const Tensor& a, const Tensor& b, bool b_t, Shape* out_shape) {
  const std::vector<double> av = values_of(a), bv = values_of(b);
  Shape as = a.shape(), bs = b.shape();
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  if (b_t) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2), batch = broadcast(ab, bb);
  *out_shape = batch;
  if (!a1) out_shape->push_back(m);
  if (!b1) out_shape->push_back(n);
  std::vector<double> out(static_cast<size_t>(numel(batch) * m * n));
  for (int64_t t = 0; t < numel(batch); ++t) {
    const int64_t oa = bcast(ab, batch, t) * m * k, ob = bcast(bb, batch, t) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += av[static_cast<size_t>(oa + i * k + l)] *
               (b_t ? bv[static_cast<size_t>(ob + j * k + l)] : bv[static_cast<size_t>(ob + l * n + j)]);
        out[static_cast<size_t>((t * m + i) * n + j)] = s;
      }
  }
  return out;
}

void add_broadcast(std::vector<double>& out, const Shape& out_shape, const Tensor& bias, double beta) {
  const std::vector<double> b = values_of(bias);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] += beta * b[static_cast<size_t>(bcast(bias.shape(), out_shape, static_cast<int64_t>(i)))];
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

// ---- GEMM -----------------------------------------------------------------------------------------

TEST(CudaGemm, LinearAtSeveralShapesWithAndWithoutBias) {
  REQUIRE_GPU();
  for (const Shape& x : {Shape{4, 8}, Shape{2, 3, 8}, Shape{8}, Shape{1, 1, 8}, Shape{37, 129}, Shape{3, 197, 768}}) {
    const int64_t k = x.back();
    for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{64}, int64_t{257}}) {
      SCOPED_TRACE("linear " + switchyard::shape_string(x) + " -> " + std::to_string(n));
      const Tensor xt = random(x, 1), w = random({n, k}, 2), b = random({n}, 3);
      Shape shape;
      std::vector<double> ref = matmul_ref(xt, w, true, &shape);
      expect_close(run_cuda({{"aten::linear", {}, {}}}, {in(xt), weight(w), absent()})[0], ref, shape, 1e-5, "no bias");
      add_broadcast(ref, shape, b, 1);
      expect_close(run_cuda({{"aten::linear", {}, {}}}, {in(xt), weight(w), weight(b)})[0], ref, shape, 1e-5,
                   "constant bias");
      expect_close(run_cuda({{"aten::linear", {}, {}}}, {in(xt), in(w), in(b)})[0], ref, shape, 1e-5, "inputs");
    }
  }
}

TEST(CudaGemm, LinearBiasOfOneElementOrZeroDims) {
  REQUIRE_GPU();
  const Tensor x = random({6, 16}, 1), w = random({10, 16}, 2);
  for (const Tensor& b : {random({}, 3), random({1}, 4)}) {
    Shape shape;
    std::vector<double> ref = matmul_ref(x, w, true, &shape);
    add_broadcast(ref, shape, b, 1);
    expect_close(run_cuda({{"aten::linear", {}, {}}}, {in(x), weight(w), weight(b)})[0], ref, shape, 1e-5,
                 "bias " + switchyard::shape_string(b.shape()));
  }
}

TEST(CudaGemm, FusedLinearActivations) {
  REQUIRE_GPU();
  const Tensor x = random({7, 32}, 1, kF32, -3, 3), w = random({24, 32}, 2), b = random({24}, 3);
  Shape shape;
  std::vector<double> base = matmul_ref(x, w, true, &shape);
  add_broadcast(base, shape, b, 1);
  struct Act {
    std::string op;
    ir::Attributes post;
    double (*f)(double);
  };
  const std::vector<Act> acts = {
      {"aten::relu", {}, [](double v) { return v > 0 ? v : 0; }},
      {"aten::gelu", {}, gelu},
      {"aten::gelu",
       {{"post.approximate", text("tanh")}},
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {"aten::silu", {}, [](double v) { return v / (1 + std::exp(-v)); }},
      {"aten::hardswish", {}, [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; }},
  };
  for (const Act& a : acts) {
    std::vector<double> ref = base;
    for (double& v : ref) v = a.f(v);
    expect_close(run_cuda({{"aten::linear+" + a.op, a.post, {}}}, {in(x), weight(w), weight(b)})[0], ref, shape, 1e-5,
                 "linear+" + a.op);
  }
}

TEST(CudaGemm, MatmulBroadcastsAndHandlesOneDimOperands) {
  REQUIRE_GPU();
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
                                                      {{4, 12, 197, 64}, {4, 12, 64, 197}}};
  uint32_t seed = 10;
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(switchyard::shape_string(a) + " @ " + switchyard::shape_string(b));
    const Tensor at = random(a, seed++), bt = random(b, seed++);
    Shape shape;
    const std::vector<double> ref = matmul_ref(at, bt, false, &shape);
    expect_close(run_cuda({{"aten::matmul", {}, {}}}, {in(at), in(bt)})[0], ref, shape, 1e-5, "matmul");
  }
}

TEST(CudaGemm, MmBmmAddmmBaddbmm) {
  REQUIRE_GPU();
  const Tensor a = random({5, 7}, 1), b = random({7, 3}, 2);
  Shape shape;
  std::vector<double> ref = matmul_ref(a, b, false, &shape);
  expect_close(run_cuda({{"aten::mm", {}, {}}}, {in(a), in(b)})[0], ref, shape, 1e-5, "mm");
  for (const Tensor& self : {random({3}, 3), random({5, 3}, 4), random({5, 1}, 5)}) {
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{0.0, -1.5}}) {
      std::vector<double> r = matmul_ref(a, b, false, &shape);
      for (double& v : r) v *= alpha;
      if (beta != 0) add_broadcast(r, shape, self, beta);
      expect_close(
          run_cuda({{"aten::addmm", {{"beta", f64(beta)}, {"alpha", f64(alpha)}}, {}}}, {in(self), in(a), in(b)})[0], r,
          shape, 1e-5, "addmm self " + switchyard::shape_string(self.shape()) + " beta " + std::to_string(beta));
    }
  }
  const Tensor b1 = random({4, 6, 8}, 6), b2 = random({4, 8, 5}, 7);
  ref = matmul_ref(b1, b2, false, &shape);
  expect_close(run_cuda({{"aten::bmm", {}, {}}}, {in(b1), in(b2)})[0], ref, shape, 1e-5, "bmm");
  for (const Tensor& self : {random({1, 6, 5}, 8), random({4, 6, 5}, 9)}) {
    std::vector<double> r = matmul_ref(b1, b2, false, &shape);
    add_broadcast(r, shape, self, 1);
    expect_close(
        run_cuda({{"aten::baddbmm", {{"beta", i64(1)}, {"alpha", i64(1)}}, {}}}, {weight(self), in(b1), in(b2)})[0], r,
        shape, 1e-5, "baddbmm");
  }
}

TEST(CudaGemm, HalfTypesAccumulateInFloat) {
  REQUIRE_GPU();
  for (DLDataType dt : {kF16, kBF16}) {
    SCOPED_TRACE(switchyard::dtype_name(dt));
    const Tensor x = random({3, 33, 64}, 1, dt), w = random({48, 64}, 2, dt), b = random({48}, 3, dt);
    Shape shape;
    std::vector<double> ref = matmul_ref(x, w, true, &shape);
    add_broadcast(ref, shape, b, 1);
    const Tensor got = run_cuda({{"aten::linear", {}, {}}}, {in(x), weight(w), weight(b)})[0];
    EXPECT_TRUE(switchyard::same_dtype(got.dtype(), dt));
    expect_close(got, ref, shape, tolerance(dt), "linear");
    const Tensor p = random({2, 16, 32}, 4, dt), q = random({2, 32, 8}, 5, dt);
    ref = matmul_ref(p, q, false, &shape);
    expect_close(run_cuda({{"aten::bmm", {}, {}}}, {in(p), in(q)})[0], ref, shape, tolerance(dt), "bmm");
  }
}

TEST(CudaGemm, PrecisionOptionIsHonouredAndTyposAreDeclined) {
  REQUIRE_GPU();
  const Tensor x = random({64, 256}, 1), w = random({128, 256}, 2);
  Shape shape;
  const std::vector<double> ref = matmul_ref(x, w, true, &shape);
  for (const char* p : {"tf32", "float16", "bfloat16"}) {
    switchyard::Runtime rt(switchyard::Options{cuda_only_config(
        std::string("[[rules]]\nop = \"aten::linear\"\nbackends = [\"cuda\"]\noptions = { precision = \"") + p +
        "\" }\n")});
    // Reduced precision inside: float16 rounding of inputs over 256 terms, about 1e-3.
    expect_close(run_cuda({{"aten::linear", {}, {}}}, {in(x), weight(w)}, &rt)[0], ref, shape, 3e-2, p);
  }
  switchyard::Runtime rt(switchyard::Options{cuda_only_config(
      "[[rules]]\nop = \"aten::linear\"\nbackends = [\"cuda\"]\noptions = { precision = \"float61\" }\n")});
  Built b = chain({{"aten::linear", {}, {}}}, {in(x), weight(w)});
  auto model = load_graph(rt, std::move(b.graph));
  const std::string err = sytest::error_of([&] { model->plan(b.feeds); });
  EXPECT_NE(err.find("float61"), std::string::npos) << err;
}

TEST(CudaGemm, DeclinesWhatItDoesNotDo) {
  REQUIRE_GPU();
  EXPECT_NE(cuda_error({{"aten::linear", {}, {}}}, {in(random({2, 4}, 1)), in(random({4}, 2))}).find("2-D weight"),
            std::string::npos);
  EXPECT_NE(
      cuda_error({{"aten::mm", {}, {}}}, {in(random({2, 4}, 1)), in(random({5, 3}, 2))}).find("cannot be multiplied"),
      std::string::npos);
  EXPECT_NE(
      cuda_error({{"aten::matmul", {}, {}}}, {in(random({2, 4}, 1)), in(random({4, 3}, 2, kF16))}).find("mixed dtypes"),
      std::string::npos);
}

// ---- convolution and pooling ----------------------------------------------------------------------

#define REQUIRE_CUDNN()                                                            \
  do {                                                                             \
    if (!has_cuda_op("aten::_convolution"))                                        \
      GTEST_SKIP() << "missing resource: the cuda plugin was built without cuDNN"; \
  } while (0)

struct ConvCase {
  Shape x, w;
  Shape stride, padding, dilation;
  int64_t groups;
  bool bias;
};

// Direct convolution in double (NCHW, 2-D).
std::vector<double> conv_ref(const Tensor& x, const Tensor& w, const Tensor* b, const ConvCase& c, Shape* out) {
  const std::vector<double> xv = values_of(x), wv = values_of(w);
  const std::vector<double> bv = b ? values_of(*b) : std::vector<double>{};
  const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], K = c.w[0], R = c.w[2], S = c.w[3], G = c.groups;
  const int64_t OH = (H + 2 * c.padding[0] - c.dilation[0] * (R - 1) - 1) / c.stride[0] + 1;
  const int64_t OW = (W + 2 * c.padding[1] - c.dilation[1] * (S - 1) - 1) / c.stride[1] + 1;
  *out = {N, K, OH, OW};
  std::vector<double> y(static_cast<size_t>(N * K * OH * OW));
  const int64_t cg = C / G, kg = K / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b ? bv[static_cast<size_t>(k)] : 0;
          const int64_t g = k / kg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t q = 0; q < S; ++q) {
                const int64_t ih = oh * c.stride[0] - c.padding[0] + r * c.dilation[0];
                const int64_t iw = ow * c.stride[1] - c.padding[1] + q * c.dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += xv[static_cast<size_t>(((n * C + g * cg + ci) * H + ih) * W + iw)] *
                     wv[static_cast<size_t>(((k * cg + ci) * R + r) * S + q)];
              }
          y[static_cast<size_t>(((n * K + k) * OH + oh) * OW + ow)] = s;
        }
  return y;
}

ir::Attributes conv_attrs(const ConvCase& c) {
  return {{"stride", list(c.stride)}, {"padding", list(c.padding)},     {"dilation", list(c.dilation)},
          {"transposed", i64(0)},     {"output_padding", list({0, 0})}, {"groups", i64(c.groups)},
          {"benchmark", i64(0)},      {"deterministic", i64(0)},        {"cudnn_enabled", i64(1)},
          {"allow_tf32", i64(1)}};
}

TEST(CudaConv, ConvolutionsAsTheImporterEmitsThem) {
  REQUIRE_GPU();
  REQUIRE_CUDNN();
  const std::vector<ConvCase> cases = {
      {{1, 3, 16, 16}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 4, 15, 13}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1, 1}, 2, true},
      {{2, 8, 12, 12}, {8, 1, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 8, false},     // depthwise, dilated
      {{1, 3, 224, 224}, {64, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false},  // resnet's stem
      {{4, 16, 7, 7}, {32, 16, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE("conv x " + switchyard::shape_string(c.x) + " w " + switchyard::shape_string(c.w));
    const Tensor x = random(c.x, seed++), w = random(c.w, seed++), b = random({c.w[0]}, seed++);
    Shape shape;
    std::vector<double> ref = conv_ref(x, w, c.bias ? &b : nullptr, c, &shape);
    const std::vector<Arg> args = {in(x), weight(w), c.bias ? weight(b) : absent()};
    expect_close(run_cuda({{"aten::_convolution", conv_attrs(c), {}}}, args)[0], ref, shape, 1e-5, "_convolution");
    for (double& v : ref) v = v > 0 ? v : 0;
    expect_close(run_cuda({{"aten::_convolution+aten::relu", conv_attrs(c), {}}}, args)[0], ref, shape, 1e-5,
                 "_convolution+relu");
  }
}

TEST(CudaConv, Conv2dDefaultsUnbatchedAndConv1d) {
  REQUIRE_GPU();
  REQUIRE_CUDNN();
  const ConvCase c{{1, 3, 9, 9}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true};
  const Tensor x = random({3, 9, 9}, 1), w = random(c.w, 2), b = random({4}, 3);
  Shape shape;
  Tensor xb = Tensor::from_blob(x.raw_data(), kF32, {1, 3, 9, 9}, {}, [x] {});
  std::vector<double> ref = conv_ref(xb, w, &b, c, &shape);
  expect_close(run_cuda({{"aten::conv2d", {{"padding", text("same")}}, {}}}, {in(x), weight(w), weight(b)})[0], ref,
               {4, 9, 9}, 1e-5, "unbatched conv2d padding='same'");
  // conv1d: [2, 3, 20] with a [5, 3, 4] weight, stride 2.
  const Tensor x1 = random({2, 3, 20}, 4), w1 = random({5, 3, 4}, 5);
  const ConvCase c1{{2, 3, 1, 20}, {5, 3, 1, 4}, {1, 2}, {0, 0}, {1, 1}, 1, false};
  ref = conv_ref(Tensor::from_blob(x1.raw_data(), kF32, {2, 3, 1, 20}, {}, [x1] {}),
                 Tensor::from_blob(w1.raw_data(), kF32, {5, 3, 1, 4}, {}, [w1] {}), nullptr, c1, &shape);
  expect_close(run_cuda({{"aten::conv1d", {{"stride", list({2})}}, {}}}, {in(x1), weight(w1)})[0], ref, {2, 5, 9}, 1e-5,
               "conv1d");
}

TEST(CudaConv, HalfConvolution) {
  REQUIRE_GPU();
  REQUIRE_CUDNN();
  const ConvCase c{{2, 8, 10, 10}, {16, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true};
  const Tensor x = random(c.x, 1, kF16), w = random(c.w, 2, kF16), b = random({16}, 3, kF16);
  Shape shape;
  const std::vector<double> ref = conv_ref(x, w, &b, c, &shape);
  expect_close(run_cuda({{"aten::_convolution", conv_attrs(c), {}}}, {in(x), weight(w), weight(b)})[0], ref, shape,
               tolerance(kF16), "float16 convolution");
}

std::vector<double> pool_ref(const Tensor& x, bool max, int64_t k, int64_t s, int64_t p, bool include_pad, Shape* out) {
  const std::vector<double> xv = values_of(x);
  const Shape xs = x.shape();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OH = (H + 2 * p - k) / s + 1, OW = (W + 2 * p - k) / s + 1;
  *out = {N, C, OH, OW};
  std::vector<double> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = max ? -INFINITY : 0;
        int64_t count = 0;
        for (int64_t r = 0; r < k; ++r)
          for (int64_t q = 0; q < k; ++q) {
            const int64_t ih = oh * s - p + r, iw = ow * s - p + q;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double v = xv[static_cast<size_t>((nc * H + ih) * W + iw)];
            acc = max ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
            ++count;
          }
        y.push_back(max ? acc : acc / static_cast<double>(include_pad ? k * k : count));
      }
  return y;
}

TEST(CudaPool, MaxAndAvgPooling) {
  REQUIRE_GPU();
  REQUIRE_CUDNN();
  Tensor x = random({2, 3, 13, 11}, 1);
  x.data<float>()[5] = NAN;  // max pooling keeps NaN, as ATen does
  for (auto [k, s, p] : {std::tuple{3, 2, 1}, std::tuple{2, 2, 0}, std::tuple{3, 1, 0}}) {
    SCOPED_TRACE("kernel " + std::to_string(k) + " stride " + std::to_string(s) + " pad " + std::to_string(p));
    Shape shape;
    std::vector<double> ref = pool_ref(x, true, k, s, p, true, &shape);
    expect_close(run_cuda({{"aten::max_pool2d",
                            {{"kernel_size", list({k, k})},
                             {"stride", list({s, s})},
                             {"padding", list({p, p})},
                             {"dilation", list({1, 1})},
                             {"ceil_mode", i64(0)}},
                            {}}},
                          {in(x)})[0],
                 ref, shape, 1e-6, "max_pool2d");
    for (bool include : {true, false}) {
      ref = pool_ref(x, false, k, s, p, include, &shape);
      for (double& v : ref) v = std::isnan(v) ? NAN : v;
      expect_close(run_cuda({{"aten::avg_pool2d",
                              {{"kernel_size", list({k, k})},
                               {"stride", list({s, s})},
                               {"padding", list({p, p})},
                               {"ceil_mode", i64(0)},
                               {"count_include_pad", i64(include)}},
                              {}}},
                            {in(x)})[0],
                   ref, shape, 1e-6, include ? "avg_pool2d count_include_pad" : "avg_pool2d");
    }
  }
}

TEST(CudaPool, AdaptiveAveragePoolingWithUnevenWindows) {
  REQUIRE_GPU();
  for (auto [h, w, oh, ow] :
       {std::tuple{7, 7, 1, 1}, std::tuple{10, 7, 3, 4}, std::tuple{56, 56, 1, 1}, std::tuple{5, 5, 7, 7}}) {
    const Tensor x = random({2, 4, h, w}, 3);
    const std::vector<double> xv = values_of(x);
    std::vector<double> ref;
    for (int64_t pl = 0; pl < 8; ++pl)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh, w0 = j * w / ow,
                        w1 = ((j + 1) * w + ow - 1) / ow;
          double s = 0;
          for (int64_t a = h0; a < h1; ++a)
            for (int64_t b = w0; b < w1; ++b) s += xv[static_cast<size_t>((pl * h + a) * w + b)];
          ref.push_back(s / static_cast<double>((h1 - h0) * (w1 - w0)));
        }
    expect_close(run_cuda({{"aten::adaptive_avg_pool2d", {{"output_size", list({oh, ow})}}, {}}}, {in(x)})[0], ref,
                 {2, 4, oh, ow}, 1e-6, "adaptive_avg_pool2d " + std::to_string(h) + "x" + std::to_string(w));
  }
}

}  // namespace
