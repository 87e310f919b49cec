// The linalg plugin (plugins/linalg/) through the embedding API. Every case runs one node
// on "linalg" alone (strict selection, so nothing falls back silently) and the same node
// on the aten plugin (LibTorch), and compares: numpy broadcasting of matmul, transposed,
// strided and expanded inputs, constant weights (prepared at create), edge sizes (0 and
// 1), beta/alpha, einsum equations, the fused linear+activation kernels (directly and as
// the host's fusion makes them), float64, concurrent runs, the recurrent layers (every cell
// as shapes change between runs), and the reasons it declines.
#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace switchyard;
using namespace sytest;

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kF64{kDLFloat, 64, 1};

std::string linalg_config() {
  return write_config("linalg_strict",
                      "[plugins]\nload = [\"linalg\"]\n"
                      "[selection]\ndefault = [\"linalg\"]\nstrict = true\n");
}
std::string aten_config() {
  return write_config("linalg_ref", "[plugins]\nload = [\"aten\"]\n[selection]\ndefault = [\"aten\"]\n");
}

// ---- tensors ------------------------------------------------------------------------

std::mt19937& rng() {
  static std::mt19937 engine(7);
  return engine;
}

Tensor rand(Shape shape, DLDataType dtype = kF32) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype.bits == 64)
      t.data<double>()[i] = u(rng());
    else
      t.data<float>()[i] = static_cast<float>(u(rng()));
  }
  return t;
}

// A view with explicit strides into a fresh random buffer of `elements` values.
Tensor strided(Shape shape, Shape strides, int64_t elements, DLDataType dtype = kF32) {
  Tensor base = rand({elements}, dtype);
  return Tensor::from_blob(base.raw_data(), dtype, std::move(shape), std::move(strides), [base] {});
}

// `shape` seen through memory in which its last two dimensions are swapped.
Tensor transposed(Shape shape, DLDataType dtype = kF32) {
  Shape strides(shape.size());
  int64_t s = 1, n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> order;  // memory order, innermost first: dim n-2, n-1, then the rest
  order.push_back(n - 2), order.push_back(n - 1);
  for (int64_t d = n - 3; d >= 0; --d) order.push_back(d);
  for (int64_t d : order) strides[d] = s, s *= shape[d];
  return strided(shape, strides, s, dtype);
}

double at(const Tensor& t, int64_t i) {
  Tensor c = t.contiguous();
  return t.dtype().bits == 64 ? c.data<double>()[i] : c.data<float>()[i];
}

// ---- graphs -------------------------------------------------------------------------

struct Arg {
  std::optional<Tensor> tensor;  // nullopt: an absent optional input
  bool constant = false;
};
Arg in(Tensor t) { return {std::move(t), false}; }
Arg weight(Tensor t) { return {std::move(t), true}; }
Arg absent() { return {}; }

// Nodes `ops` in a chain over `args` (first op) and attributes; the second op of a
// fused name "A+B" gets the attributes prefixed "post." without the prefix.
ir::Graph chain(const std::vector<std::string>& ops, const std::vector<Arg>& args, const ir::Attributes& attrs,
                std::vector<Tensor>* inputs) {
  ir::Graph g;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].tensor) {
      ids.push_back(ir::kNoValue);
    } else if (args[i].constant) {
      ids.push_back(g.add_constant("w" + std::to_string(i), *args[i].tensor));
    } else {
      ids.push_back(g.add_input("x" + std::to_string(i), args[i].tensor->dtype()));
      inputs->push_back(*args[i].tensor);
    }
  }
  ir::Attributes first, post;
  for (const auto& [name, value] : attrs) {
    if (name.rfind("post.", 0) == 0 && ops.size() > 1)
      post.emplace_back(name.substr(5), value);
    else
      first.emplace_back(name, value);
  }
  g.add_node("n", ops[0], ids, {ops.size() > 1 ? "mid" : "y"}, first);
  if (ops.size() > 1) g.add_node("post", ops[1], {g.find_value("mid")}, {"y"}, post);
  g.outputs = {g.find_value("y")};
  return g;
}

std::vector<std::string> split_fused(const std::string& op) {
  size_t plus = op.find('+');
  if (plus == std::string::npos) return {op};
  return {op.substr(0, plus), op.substr(plus + 1)};
}

Tensor run_with(const std::string& config, ir::Graph g, const std::vector<Tensor>& inputs, const std::string& backend) {
  Runtime rt(Options{config});
  auto model = load_graph(rt, std::move(g));
  for (const PlanEntry& e : model->plan(inputs)) EXPECT_EQ(e.backend, backend) << e.node;
  std::vector<Tensor> out = model->run(inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

// Runs `op` on linalg alone (as one node, fused names included) and on aten (a fused
// op as its two nodes), and expects the same shape, dtype and values.
void expect_matches_aten(const std::string& op, const std::vector<Arg>& args, const ir::Attributes& attrs = {}) {
  SCOPED_TRACE(op);
  std::vector<Tensor> in_linalg, in_aten;
  Tensor got = run_with(linalg_config(), chain({op}, args, attrs, &in_linalg), in_linalg, "linalg");
  Tensor ref = run_with(aten_config(), chain(split_fused(op), args, attrs, &in_aten), in_aten, "aten");
  ASSERT_TRUE(got.defined() && ref.defined());
  ASSERT_EQ(got.shape(), ref.shape());
  ASSERT_TRUE(same_dtype(got.dtype(), ref.dtype()));
  const bool f64 = got.dtype().bits == 64;
  const double atol = f64 ? 1e-12 : 1e-5, rtol = f64 ? 1e-12 : 1e-5;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double g = at(got, i), r = at(ref, i);
    if (std::isnan(r)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << ": " << g << " vs NaN";
      continue;
    }
    if (std::isinf(r)) {
      EXPECT_EQ(g, r) << "element " << i;
      continue;
    }
    ASSERT_LE(std::fabs(g - r), atol + rtol * std::fabs(r)) << "element " << i << ": " << g << " vs " << r;
  }
}

// The error of planning `op` on linalg alone (strict): it names linalg's reason.
std::string rejection(const std::string& op, const std::vector<Arg>& args, const ir::Attributes& attrs = {}) {
  std::vector<Tensor> inputs;
  Runtime rt(Options{linalg_config()});
  auto model = load_graph(rt, chain({op}, args, attrs, &inputs));
  std::string msg = error_of([&] { model->plan(inputs); });
  EXPECT_TRUE(msg.find("linalg") != std::string::npos) << msg;
  return msg;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ir::Attributes attrs(std::initializer_list<std::pair<std::string, ir::Attribute>> list) { return ir::Attributes(list); }
ir::Attribute num(double v) { return ir::Attribute::of_float(v); }
ir::Attribute integer(int64_t v) { return ir::Attribute::of_int(v); }
ir::Attribute text(const std::string& s) { return ir::Attribute::of_string(s); }

}  // namespace

// ---- linear ---------------------------------------------------------------------------

TEST(LinalgLinear, MatrixVectorAndBatchedInputs) {
  expect_matches_aten("aten::linear", {in(rand({4, 8})), weight(rand({5, 8})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({2, 3, 8})), weight(rand({5, 8})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({2, 2, 3, 8})), weight(rand({6, 8}))});
  expect_matches_aten("aten::linear", {in(rand({8})), weight(rand({5, 8})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({1, 8})), weight(rand({1, 8})), weight(rand({1}))});
}

TEST(LinalgLinear, BiasAbsentOrAnInputOrBroadcast) {
  expect_matches_aten("aten::linear", {in(rand({4, 8})), weight(rand({5, 8})), absent()});
  expect_matches_aten("aten::linear", {in(rand({4, 8})), in(rand({5, 8})), in(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({2, 4, 8})), weight(rand({5, 8})), in(rand({}))});
  expect_matches_aten("aten::linear", {in(rand({4, 8})), weight(rand({5, 8})), in(rand({1}))});
}

TEST(LinalgLinear, WeightsFedPerRunAreReadEveryRun) {
  // The first run plans; a weight fed at run time must not be packed then and kept.
  for (const char* op : {"aten::linear", "aten::linear+aten::relu"}) {
    SCOPED_TRACE(op);
    std::vector<Tensor> first_linalg, first_aten;
    const std::vector<Arg> args = {in(rand({6, 16})), in(rand({12, 16})), in(rand({12}))};
    Runtime linalg(Options{linalg_config()}), aten(Options{aten_config()});
    auto model = load_graph(linalg, chain({op}, args, {}, &first_linalg));
    auto ref = load_graph(aten, chain(split_fused(op), args, {}, &first_aten));
    std::vector<Tensor> feeds = {rand({6, 16}), rand({12, 16}), rand({12})};
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int run = 0; run < 3; ++run) {  // the same buffers, new values: as a serving loop feeds them
      for (Tensor& t : feeds)
        for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng());
      const Tensor got = model->run(feeds)[0], want = ref->run(feeds)[0];
      for (int64_t i = 0; i < want.numel(); ++i)
        ASSERT_NEAR(at(got, i), at(want, i), 1e-5 + 1e-5 * std::fabs(at(want, i)))
            << "run " << run << ", element " << i;
    }
  }
}

TEST(LinalgLinear, StridedInputsAndWeights) {
  // Transposed input and weight: BLAS transpose flags, no copy.
  expect_matches_aten("aten::linear", {in(transposed({6, 8})), weight(transposed({5, 8})), weight(rand({5}))});
  // A batched input whose batch does not fold into rows (transposed per batch).
  expect_matches_aten("aten::linear", {in(transposed({3, 6, 8})), weight(rand({5, 8}))});
  // Sequence-first attention's input, [T, B, E] viewed over a [B, T, E] buffer: its rows
  // are gathered for one GEMM against the packed weight, bias and all.
  expect_matches_aten("aten::linear",
                      {in(strided({4, 3, 8}, {8, 32, 1}, 96)), weight(rand({5, 8})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(strided({4, 3, 8}, {8, 32, 1}, 96)), weight(rand({40, 8})), absent()});
  // Every other column: no leading dimension fits, so a copy.
  expect_matches_aten("aten::linear", {in(strided({6, 8}, {16, 2}, 96)), in(strided({5, 8}, {16, 2}, 80))});
  // The same as a constant weight: prepared once at create.
  expect_matches_aten("aten::linear", {in(rand({6, 8})), weight(strided({5, 8}, {16, 2}, 80)), weight(rand({5}))});
  // Expanded input (stride 0 along rows) and a strided bias.
  expect_matches_aten("aten::linear",
                      {in(strided({4, 8}, {0, 1}, 8)), weight(rand({5, 8})), in(strided({5}, {3}, 15))});
}

TEST(LinalgLinear, EdgeSizes) {
  expect_matches_aten("aten::linear", {in(rand({0, 8})), weight(rand({5, 8})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({4, 8})), weight(rand({0, 8})), weight(rand({0}))});
  // k = 0: the product is zero, the result is the bias.
  expect_matches_aten("aten::linear", {in(rand({4, 0})), weight(rand({5, 0})), weight(rand({5}))});
  expect_matches_aten("aten::linear", {in(rand({1, 1})), weight(rand({1, 1}))});
}

TEST(LinalgLinear, Float64) {
  expect_matches_aten("aten::linear", {in(rand({5, 7}, kF64)), weight(rand({3, 7}, kF64)), weight(rand({3}, kF64))});
  expect_matches_aten("aten::linear+aten::gelu", {in(rand({5, 7}, kF64)), weight(rand({3, 7}, kF64))});
}

// ---- fused epilogues --------------------------------------------------------------------

TEST(LinalgFused, EveryActivationMatchesLinearThenTheActivation) {
  for (const char* op : {"aten::linear+aten::relu", "aten::linear+aten::gelu", "aten::linear+aten::silu",
                         "aten::linear+aten::hardswish"}) {
    expect_matches_aten(op, {in(rand({7, 16})), weight(rand({9, 16})), weight(rand({9}))});
    expect_matches_aten(op, {in(rand({2, 3, 16})), weight(transposed({9, 16}))});
    expect_matches_aten(op, {in(rand({16})), weight(rand({9, 16})), weight(rand({9}))});
  }
  expect_matches_aten("aten::linear+aten::gelu", {in(rand({7, 16})), weight(rand({9, 16})), weight(rand({9}))},
                      attrs({{"post.approximate", text("tanh")}}));
  expect_matches_aten("aten::linear+aten::gelu", {in(rand({7, 16})), weight(rand({9, 16}))},
                      attrs({{"post.approximate", text("none")}}));
}

TEST(LinalgFused, ManyRowBlocksAndLargeValues) {
  // 1100 rows of 1000 columns span several epilogue row blocks (about 2 MiB each); inputs
  // scaled so that silu/gelu see large positive and negative arguments.
  Tensor x = rand({1100, 24});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 8.0f;
  for (const char* op : {"aten::linear+aten::gelu", "aten::linear+aten::silu", "aten::linear+aten::relu"})
    expect_matches_aten(op, {in(x), weight(rand({1000, 24})), weight(rand({1000}))});
}

TEST(LinalgFused, ReluKeepsNaN) {
  Tensor x = rand({3, 4});
  x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  expect_matches_aten("aten::linear+aten::relu", {in(x), weight(rand({2, 4})), weight(rand({2}))});
}

// GELU (both forms) and the bias run inside oneDNN's matmul on a constant weight, relu and
// the rest after it: NaN and infinities must come out where ATen puts them either way.
TEST(LinalgFused, NaNAndInfinitiesThroughEveryActivation) {
  Tensor x = rand({4, 6});
  x.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();   // row 0
  x.data<float>()[8] = std::numeric_limits<float>::infinity();    // row 1
  x.data<float>()[15] = -std::numeric_limits<float>::infinity();  // row 2
  for (const char* op : {"aten::linear", "aten::linear+aten::relu", "aten::linear+aten::gelu",
                         "aten::linear+aten::silu", "aten::linear+aten::hardswish"})
    expect_matches_aten(op, {in(x), weight(rand({5, 6})), weight(rand({5}))});
  expect_matches_aten("aten::linear+aten::gelu", {in(x), weight(rand({5, 6})), weight(rand({5}))},
                      attrs({{"post.approximate", text("tanh")}}));
}

TEST(LinalgFused, TheHostFusesLinearAndGeluOntoLinalg) {
  std::vector<Tensor> inputs, ref_inputs;
  std::vector<Arg> args{in(rand({6, 16})), weight(rand({10, 16})), weight(rand({10}))};
  ir::Attributes a = attrs({{"post.approximate", text("tanh")}});
  Runtime rt(Options{linalg_config()});
  auto model = load_graph(rt, chain({"aten::linear", "aten::gelu"}, args, a, &inputs));
  bool fused = false;
  for (const PlanEntry& e : model->plan(inputs)) {
    EXPECT_EQ(e.backend, "linalg") << e.node;
    fused = fused || e.op == "aten::linear+aten::gelu";
  }
  EXPECT_TRUE(fused);
  Tensor got = model->run(inputs)[0];
  Tensor ref = run_with(aten_config(), chain({"aten::linear", "aten::gelu"}, args, a, &ref_inputs), ref_inputs, "aten");
  ASSERT_EQ(got.shape(), ref.shape());
  for (int64_t i = 0; i < ref.numel(); ++i) ASSERT_NEAR(at(got, i), at(ref, i), 1e-5) << i;
}

// ---- addmm / mm -------------------------------------------------------------------------

TEST(LinalgAddmm, BetaAlphaAndBroadcastSelf) {
  expect_matches_aten("aten::addmm", {in(rand({5})), in(rand({4, 6})), weight(rand({6, 5}))});
  expect_matches_aten("aten::addmm", {in(rand({4, 5})), in(rand({4, 6})), in(transposed({6, 5}))},
                      attrs({{"beta", num(0.5)}, {"alpha", integer(2)}}));
  expect_matches_aten("aten::addmm", {in(rand({4, 1})), in(transposed({4, 6})), in(rand({6, 5}))},
                      attrs({{"alpha", num(-1.5)}}));
  expect_matches_aten("aten::addmm", {in(rand({})), in(rand({4, 6})), in(rand({6, 5}))});
  // A full [M, N] self over several epilogue row blocks.
  expect_matches_aten("aten::addmm", {in(rand({600, 2048})), in(rand({600, 8})), in(rand({8, 2048}))},
                      attrs({{"beta", num(0.5)}}));
}

TEST(LinalgAddmm, BetaZeroIgnoresSelfEvenNaN) {
  Tensor self = rand({4, 5});
  for (int64_t i = 0; i < self.numel(); ++i) self.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  expect_matches_aten("aten::addmm", {in(self), in(rand({4, 6})), in(rand({6, 5}))}, attrs({{"beta", integer(0)}}));
}

TEST(LinalgMm, ShapesAndStrides) {
  expect_matches_aten("aten::mm", {in(rand({3, 4})), in(rand({4, 5}))});
  expect_matches_aten("aten::mm", {in(transposed({3, 4})), in(transposed({4, 5}))});
  expect_matches_aten("aten::mm", {in(strided({3, 4}, {1, 6}, 24)), in(strided({4, 5}, {10, 2}, 40))});
  expect_matches_aten("aten::mm", {in(rand({1, 4})), in(rand({4, 1}))});
  expect_matches_aten("aten::mm", {in(rand({3, 0})), in(rand({0, 5}))});
}

// ---- matmul -----------------------------------------------------------------------------

TEST(LinalgMatmul, EveryBroadcastingCase) {
  expect_matches_aten("aten::matmul", {in(rand({6})), in(rand({6}))});                 // dot
  expect_matches_aten("aten::matmul", {in(rand({6})), in(rand({6, 3}))});              // 1-D x 2-D
  expect_matches_aten("aten::matmul", {in(rand({6})), in(rand({2, 6, 3}))});           // 1-D x N-D
  expect_matches_aten("aten::matmul", {in(rand({4, 6})), in(rand({6}))});              // 2-D x 1-D
  expect_matches_aten("aten::matmul", {in(rand({2, 3, 4, 6})), in(rand({6}))});        // N-D x 1-D
  expect_matches_aten("aten::matmul", {in(rand({2, 3, 4, 6})), in(rand({6, 5}))});     // N-D x 2-D
  expect_matches_aten("aten::matmul", {in(rand({4, 6})), in(rand({2, 6, 5}))});        // 2-D x N-D
  expect_matches_aten("aten::matmul", {in(rand({2, 1, 4, 6})), in(rand({3, 6, 5}))});  // batch broadcast
  expect_matches_aten("aten::matmul", {in(rand({1, 4, 6})), in(rand({3, 6, 5}))});
}

TEST(LinalgMatmul, StridedBatches) {
  expect_matches_aten("aten::matmul", {in(transposed({2, 3, 4, 6})), in(transposed({3, 6, 5}))});
  expect_matches_aten("aten::matmul", {in(strided({3, 4, 6}, {0, 6, 1}, 24)), in(rand({3, 6, 5}))});
  expect_matches_aten("aten::matmul", {in(strided({3, 4, 6}, {48, 12, 2}, 144)), in(rand({6}))});
  expect_matches_aten("aten::matmul", {in(rand({3, 4, 6})), in(strided({6}, {3}, 18))});
  expect_matches_aten("aten::matmul", {in(strided({6}, {3}, 18)), in(rand({6, 5}))});  // strided row
  expect_matches_aten("aten::matmul", {in(strided({6}, {3}, 18)), in(transposed({6, 5}))});
  expect_matches_aten("aten::linear", {in(strided({1, 8}, {8, 2}, 16)), weight(rand({5, 8}))});
}

TEST(LinalgMatmul, EdgeSizes) {
  expect_matches_aten("aten::matmul", {in(rand({0, 4, 6})), in(rand({6, 5}))});
  expect_matches_aten("aten::matmul", {in(rand({2, 4, 0})), in(rand({2, 0, 5}))});
  expect_matches_aten("aten::matmul", {in(rand({1})), in(rand({1}))});
  expect_matches_aten("aten::matmul", {in(rand({0})), in(rand({0}))});
}

// ---- bmm / baddbmm ------------------------------------------------------------------------

TEST(LinalgBmm, PlainAndTransposed) {
  expect_matches_aten("aten::bmm", {in(rand({3, 4, 6})), in(rand({3, 6, 5}))});
  expect_matches_aten("aten::bmm", {in(rand({3, 4, 6})), in(transposed({3, 6, 5}))});  // q @ k^T
  expect_matches_aten("aten::bmm", {in(rand({1, 1, 6})), in(rand({1, 6, 1}))});
  expect_matches_aten("aten::bmm", {in(rand({0, 4, 6})), in(rand({0, 6, 5}))});
}

TEST(LinalgBaddbmm, BetaAlphaAndBroadcastSelf) {
  expect_matches_aten("aten::baddbmm", {in(rand({3, 4, 5})), in(rand({3, 4, 6})), in(rand({3, 6, 5}))});
  expect_matches_aten("aten::baddbmm", {in(rand({1, 4, 5})), in(rand({3, 4, 6})), in(transposed({3, 6, 5}))},
                      attrs({{"beta", num(0.25)}, {"alpha", num(0.125)}}));
  expect_matches_aten("aten::baddbmm", {in(rand({5})), in(rand({3, 4, 6})), in(rand({3, 6, 5}))},
                      attrs({{"beta", integer(0)}}));
  expect_matches_aten("aten::baddbmm", {in(rand({3, 4, 1})), in(rand({3, 4, 6})), in(rand({3, 6, 5}))},
                      attrs({{"alpha", integer(-2)}}));
}

// ---- einsum -----------------------------------------------------------------------------

void einsum(const std::string& eq, Tensor a, Tensor b) {
  SCOPED_TRACE(eq);
  expect_matches_aten("aten::einsum", {in(std::move(a)), in(std::move(b))}, attrs({{"equation", text(eq)}}));
}

TEST(LinalgEinsum, CommonContractions) {
  einsum("ij,jk->ik", rand({3, 4}), rand({4, 5}));
  einsum("ij,jk->ki", rand({3, 4}), rand({4, 5}));  // permuted output
  einsum("ij,kj->ik", rand({3, 4}), rand({5, 4}));  // x @ w^T
  einsum("bij,bjk->bik", rand({2, 3, 4}), rand({2, 4, 5}));
  einsum("bhqd,bhkd->bhqk", rand({2, 3, 4, 8}), rand({2, 3, 5, 8}));  // attention scores
  einsum("bhqk,bhkd->bqhd", rand({2, 3, 4, 5}), rand({2, 3, 5, 8}));
  einsum("i,i->", rand({6}), rand({6}));
  einsum("ij,j->i", rand({3, 6}), rand({6}));
  einsum("i,j->ij", rand({3}), rand({4}));                     // outer product
  einsum("ij,jk", rand({3, 4}), rand({4, 5}));                 // implicit output
  einsum("ba,ac", rand({3, 4}), rand({4, 5}));                 // implicit, sorted
  einsum("abc,cd->abd", transposed({2, 3, 4}), rand({4, 5}));  // rows that need a copy
  einsum("ij , jk -> ik", rand({3, 4}), rand({4, 5}));         // spaces
}

TEST(LinalgEinsum, EllipsisAndBroadcasting) {
  einsum("...ij,...jk->...ik", rand({2, 3, 4}), rand({2, 4, 5}));
  einsum("...ij,...jk->...ik", rand({2, 1, 3, 4}), rand({3, 4, 5}));
  einsum("...ij,jk", rand({2, 3, 4}), rand({4, 5}));
  einsum("bij,bjk->bik", rand({1, 3, 4}), rand({2, 4, 5}));
}

// ---- threads ----------------------------------------------------------------------------

TEST(LinalgThreads, ConcurrentRunsOfOneModelAgree) {
  std::vector<Tensor> inputs;
  // A strided constant weight (prepared) and a strided input (copied per run).
  ir::Graph g =
      chain({"aten::linear+aten::gelu"},
            {in(strided({40, 32}, {64, 2}, 2560)), weight(strided({48, 32}, {64, 2}, 3072)), weight(rand({48}))}, {},
            &inputs);
  Runtime rt(Options{linalg_config()});
  auto model = load_graph(rt, std::move(g));
  std::vector<float> expected = values(model->run(inputs)[0]);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      RunContext context;
      for (int r = 0; r < 25; ++r)
        if (values(model->run(inputs, context)[0]) != expected) ++mismatches[t];
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// ---- recurrent layers -------------------------------------------------------------------

namespace {

// aten::lstm (or gru, rnn_tanh, rnn_relu) over [input, h0(, c0), params...]: input and
// states are graph inputs of any shape, the weights constants, as in a traced model.
struct Recurrent {
  std::string op = "aten::lstm";
  int64_t features = 6, hidden = 5, layers = 2;
  bool bidirectional = true, batch_first = true;
  int64_t gates() const { return op == "aten::lstm" ? 4 : op == "aten::gru" ? 3 : 1; }
  int64_t states() const { return op == "aten::lstm" ? 2 : 1; }
  size_t outputs() const { return static_cast<size_t>(1 + states()); }
  // Drawn as nn.LSTM draws them, uniform in +-1/sqrt(hidden): larger recurrent weights
  // make a tanh RNN chaotic, and two correct float32 runs part after some 30 steps.
  std::vector<Tensor> params(DLDataType dtype = kF32) const {
    std::vector<Tensor> p;
    const int64_t dirs = bidirectional ? 2 : 1;
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    auto draw = [&](Shape shape) {
      Tensor t = rand(std::move(shape), dtype);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (dtype.bits == 64)
          t.data<double>()[i] *= bound;
        else
          t.data<float>()[i] *= static_cast<float>(bound);
      }
      return t;
    };
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t d = 0; d < dirs; ++d) {
        p.push_back(draw({gates() * hidden, l == 0 ? features : dirs * hidden}));
        p.push_back(draw({gates() * hidden, hidden}));
        p.push_back(draw({gates() * hidden}));
        p.push_back(draw({gates() * hidden}));
      }
    return p;
  }
  ir::Attributes attributes() const {
    ir::Attributes a{
        {"has_biases", integer(1)}, {"num_layers", integer(layers)},           {"dropout", num(0)},
        {"train", integer(0)},      {"bidirectional", integer(bidirectional)}, {"batch_first", integer(batch_first)}};
    if (op == "aten::lstm") a.emplace_back("hx.len", integer(2));
    return a;
  }
  // The graph; `params` constants, unless `fed`.
  ir::Graph graph(const std::vector<Tensor>& params, const ir::Attributes& a, bool fed = false) const {
    ir::Graph g;
    const DLDataType dtype = params[0].dtype();
    std::vector<ir::ValueId> ids{g.add_input("x", dtype)};
    for (int64_t k = 0; k < states(); ++k) ids.push_back(g.add_input("h" + std::to_string(k), dtype));
    for (size_t i = 0; i < params.size(); ++i)
      ids.push_back(fed ? g.add_input("p" + std::to_string(i), params[i].dtype())
                        : g.add_constant("w" + std::to_string(i), params[i]));
    std::vector<std::string> names;
    for (size_t o = 0; o < outputs(); ++o) names.push_back("y" + std::to_string(o));
    g.add_node("rnn", op, ids, names, a);
    for (const std::string& n : names) g.outputs.push_back(g.find_value(n));
    return g;
  }
  // Input and states for `batch` sequences of `steps`.
  std::vector<Tensor> inputs(int64_t batch, int64_t steps, DLDataType dtype = kF32) const {
    std::vector<Tensor> in{batch_first ? rand({batch, steps, features}, dtype) : rand({steps, batch, features}, dtype)};
    for (int64_t k = 0; k < states(); ++k) in.push_back(rand({layers * (bidirectional ? 2 : 1), batch, hidden}, dtype));
    return in;
  }
};

void expect_close(const Tensor& got, const Tensor& ref, const std::string& what) {
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_NEAR(at(got, i), at(ref, i), 1e-5 + 1e-4 * std::fabs(at(ref, i))) << what << ", element " << i;
}

}  // namespace

// Bidirectional layers run their directions at once; a unidirectional stack at 40 steps
// runs as a wavefront of chunks, at fewer steps layer after layer.
TEST(LinalgRecurrent, EveryCellMatchesAtenAsShapesChangeBetweenRuns) {
  for (const char* op : {"aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu"})
    for (int variant = 0; variant < 4; ++variant) {
      Recurrent r;
      r.op = op;
      r.features = 8, r.hidden = 24;
      r.batch_first = variant % 2 == 0;
      r.bidirectional = variant < 2;
      SCOPED_TRACE(std::string(op) + (r.batch_first ? ", batch_first" : "") +
                   (r.bidirectional ? ", bidirectional" : ""));
      const std::vector<Tensor> params = r.params();
      Runtime mine(Options{linalg_config()}), theirs(Options{aten_config()});
      auto got = load_graph(mine, r.graph(params, r.attributes()));
      auto want = load_graph(theirs, r.graph(params, r.attributes()));
      // One loaded model: batch and sequence length change, then come back (a cached plan).
      for (auto [batch, steps] : std::vector<std::pair<int64_t, int64_t>>{{2, 7}, {5, 3}, {1, 1}, {3, 40}, {2, 7}}) {
        const std::vector<Tensor> in = r.inputs(batch, steps);
        for (const PlanEntry& e : got->plan(in)) EXPECT_EQ(e.backend, "linalg") << e.node;
        const std::vector<Tensor> a = got->run(in), b = want->run(in);
        ASSERT_EQ(a.size(), r.outputs());
        ASSERT_EQ(b.size(), r.outputs());
        for (size_t o = 0; o < a.size(); ++o)
          expect_close(
              a[o], b[o],
              "batch " + std::to_string(batch) + ", steps " + std::to_string(steps) + ", output " + std::to_string(o));
      }
    }
}

TEST(LinalgRecurrent, ConcurrentRunsOfOneModelAgree) {
  for (bool bidirectional : {true, false}) {  // directions at once; a wavefront of chunks
    Recurrent r;
    r.op = bidirectional ? "aten::lstm" : "aten::gru";
    r.features = 8, r.hidden = 24, r.bidirectional = bidirectional;
    Runtime rt(Options{linalg_config()});
    auto model = load_graph(rt, r.graph(r.params(), r.attributes()));
    const std::vector<Tensor> inputs = r.inputs(3, 40);
    const std::vector<Tensor> first = model->run(inputs);
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        RunContext context;
        for (int k = 0; k < 25; ++k) {
          const std::vector<Tensor> out = model->run(inputs, context);
          for (size_t o = 0; o < out.size(); ++o)
            if (values(out[o]) != values(first[o])) ++mismatches[t];
        }
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << r.op << ", thread " << t;
  }
}

TEST(LinalgRecurrent, DeclinesWhatItLeavesToAten) {
  Recurrent r;
  auto reason = [&](const std::vector<Tensor>& params, const ir::Attributes& a, std::vector<Tensor> in,
                    bool fed = false) {
    Runtime rt(Options{linalg_config()});
    auto model = load_graph(rt, r.graph(params, a, fed));
    if (fed) in.insert(in.end(), params.begin(), params.end());
    std::string msg = error_of([&] { model->plan(in); });
    EXPECT_TRUE(contains(msg, "linalg")) << msg;
    return msg;
  };
  ir::Attributes a = r.attributes();
  EXPECT_TRUE(contains(reason(r.params(kF64), a, r.inputs(2, 3, kF64)), "dtype float64 of input 0 not supported"));
  ir::Attributes dropout = a;
  for (auto& [name, value] : dropout) {
    if (name == "dropout") value = num(0.5);
    if (name == "train") value = integer(1);
  }
  EXPECT_TRUE(contains(reason(r.params(), dropout, r.inputs(2, 3)),
                       "train=True with dropout 0.5 between layers is left to aten"));
  std::vector<Tensor> proj = r.params();  // an LSTM with proj_size: w_hr after each group
  for (size_t i = 4; i <= proj.size(); i += 5)
    proj.insert(proj.begin() + static_cast<std::ptrdiff_t>(i), rand({3, r.hidden}));
  EXPECT_TRUE(contains(reason(proj, a, r.inputs(2, 3)), "LSTM projections (proj_size) are left to aten"));
  EXPECT_TRUE(contains(reason(r.params(), a, r.inputs(2, 3), true), "weights fed at run time"));
  ir::Attributes packed;  // lstm.data: no batch_first
  for (const auto& [name, value] : a)
    if (name != "batch_first") packed.emplace_back(name, value);
  EXPECT_TRUE(contains(reason(r.params(), packed, r.inputs(2, 3)), "a packed sequence"));
}

TEST(LinalgRecurrent, TheDefaultConfigRunsLstmAndGruOnLinalg) {
  const char* source = std::getenv("SWITCHYARD_SOURCE_DIR");  // ctest sets it
  if (source == nullptr)
    GTEST_SKIP() << "missing resource: SWITCHYARD_SOURCE_DIR (CTest sets it; the source tree holds the fixture)";
  const std::string config = std::string(source) + "/configs/default.toml";
  for (const char* op : {"aten::lstm", "aten::gru"}) {
    Recurrent r;
    r.op = op;
    Runtime rt(Options{config});
    auto model = load_graph(rt, r.graph(r.params(), r.attributes()));
    for (const PlanEntry& e : model->plan(r.inputs(2, 4))) EXPECT_EQ(e.backend, "linalg") << op;
  }
}

// ---- declines ---------------------------------------------------------------------------

TEST(LinalgDeclines, DtypesTheyDoNotTake) {
  Tensor i64 = Tensor::empty(kI64, {2, 2});
  std::string msg = rejection("aten::mm", {in(i64), in(i64)});
  EXPECT_TRUE(contains(msg, "int64")) << msg;
  EXPECT_TRUE(contains(rejection("aten::mm", {in(rand({2, 2})), in(rand({2, 2}, kF64))}),
                       "'self' is float32 but 'mat2' is float64: mixed dtypes are not supported"));
}

TEST(LinalgDeclines, ShapesThatDoNotMultiply) {
  EXPECT_TRUE(
      contains(rejection("aten::mm", {in(rand({2, 3, 4})), in(rand({4, 5}))}), "self must be a matrix, got 3-D"));
  EXPECT_TRUE(contains(rejection("aten::mm", {in(rand({2, 3})), in(rand({4, 5}))}),
                       "self and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
  EXPECT_TRUE(contains(rejection("aten::bmm", {in(rand({2, 3, 4})), in(rand({3, 4, 5}))}),
                       "self and mat2 must have the same batch size, got 2 and 3"));
  EXPECT_TRUE(
      contains(rejection("aten::matmul", {in(rand({2, 3, 4})), in(rand({3, 5}))}), "cannot be multiplied (4 != 3)"));
  EXPECT_TRUE(contains(rejection("aten::matmul", {in(rand({2, 3, 4})), in(rand({3, 4, 5}))}), "do not broadcast"));
  EXPECT_TRUE(contains(rejection("aten::addmm", {in(rand({3})), in(rand({4, 6})), in(rand({6, 5}))}),
                       "bias of shape [3] does not broadcast to [4, 5]"));
  EXPECT_TRUE(contains(rejection("aten::linear", {in(rand({4, 8})), weight(rand({8}))}),
                       "weight is 1-D; only a 2-D weight is handled"));
  EXPECT_TRUE(contains(rejection("aten::linear", {in(rand({2, 4, 8})), weight(rand({5, 8})), in(rand({4, 5}))}),
                       "bias is 2-D; only a 0-D or 1-D bias is handled"));
}

TEST(LinalgDeclines, AttributesItDoesNotKnow) {
  EXPECT_TRUE(contains(rejection("aten::mm", {in(rand({2, 2})), in(rand({2, 2}))}, attrs({{"alpha", num(2)}})),
                       "unexpected attribute 'alpha'"));
  EXPECT_TRUE(contains(rejection("aten::linear+aten::gelu", {in(rand({2, 2})), weight(rand({2, 2}))},
                                 attrs({{"post.approximate", text("cubic")}})),
                       "gelu approximate='cubic': expected 'none' or 'tanh'"));
}

TEST(LinalgDeclines, EinsumEquationsItDoesNotHandle) {
  auto reason = [](const std::string& eq, std::vector<Arg> args) {
    return rejection("aten::einsum", args, attrs({{"equation", text(eq)}}));
  };
  EXPECT_TRUE(contains(reason("ij->ji", {in(rand({2, 3}))}), "only two-operand contractions are handled"));
  EXPECT_TRUE(contains(reason("ij,jk,kl->il", {in(rand({2, 3})), in(rand({3, 4})), in(rand({4, 5}))}),
                       "only two-operand contractions are handled"));
  EXPECT_TRUE(contains(reason("ii,ij->j", {in(rand({3, 3})), in(rand({3, 4}))}), "repeats in operand 0 (a diagonal)"));
  EXPECT_TRUE(
      contains(reason("ij,jk->k", {in(rand({2, 3})), in(rand({3, 4}))}), "'i' is summed within operand 0 alone"));
  EXPECT_TRUE(contains(reason("ij,jk->ik", {in(rand({2, 3})), in(rand({4, 5}))}), "'j' has sizes 3 and 4"));
  EXPECT_TRUE(contains(reason("ij,jk->iz", {in(rand({2, 3})), in(rand({3, 4}))}), "'z' appears in no operand"));
  EXPECT_TRUE(contains(reason("ijk,jk->i", {in(rand({2, 3})), in(rand({3, 4}))}),
                       "operand 0 has 2 dimensions for 3 subscripts"));
}

TEST(LinalgDeclines, StrictSelectionReportsTheReason) {
  std::vector<Tensor> inputs;
  Runtime rt(Options{linalg_config()});
  auto model = load_graph(rt, chain({"aten::mm"}, {in(rand({2, 3})), in(rand({4, 5}))}, {}, &inputs));
  std::string msg = error_of([&] { model->run(inputs); });
  EXPECT_TRUE(contains(msg, "linalg")) << msg;
  EXPECT_TRUE(contains(msg, "shapes cannot be multiplied (2x3 and 4x5)")) << msg;
}
