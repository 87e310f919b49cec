// The example plugin (plugins/example/example.cpp) driven through the embedding API:
// fp32 aten::add / aten::mul (equal shapes, broadcasting, the scalar form, alpha) and
// aten::relu, over strided, expanded, empty and 0-dim inputs, plus its rejections.
// Strict selection with only "example" loaded, so nothing falls back silently.
// Expected values are worked out by hand (no LibTorch).
#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace switchyard;
using namespace sytest;

namespace {

using Shape = std::vector<int64_t>;
using Floats = std::vector<float>;

constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::string strict_example_config() {
  return write_config("example_strict",
                      "[plugins]\nload = [\"example\"]\n"
                      "[selection]\ndefault = [\"example\"]\nstrict = true\n");
}

// One node `op` over graph inputs x0, x1, ... (shapes left undeclared), its output the
// graph's only output.
ir::Graph one_node(const std::string& op, const std::vector<DLDataType>& dtypes, ir::Attributes attrs = {},
                   const std::string& name = "n") {
  ir::Graph g;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < dtypes.size(); ++i) ids.push_back(g.add_input("x" + std::to_string(i), dtypes[i]));
  g.add_node(name, op, ids, {"y"}, std::move(attrs));
  g.outputs = {g.find_value("y")};
  return g;
}

// Runs `graph` on `inputs`, checks that "example" ran every node, returns the output.
Tensor run_graph(ir::Graph graph, const std::vector<Tensor>& inputs) {
  Runtime rt(Options{strict_example_config()});
  auto model = load_graph(rt, std::move(graph));
  for (const PlanEntry& e : model->plan(inputs)) EXPECT_EQ(e.backend, "example") << e.node;
  std::vector<Tensor> out = model->run(inputs);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(model->last_stats().nodes_run, model->plan(inputs).size());
  return out.empty() ? Tensor() : out[0];
}

// `op` over `inputs` (all float32 graph inputs).
Tensor run_op(const std::string& op, const std::vector<Tensor>& inputs, ir::Attributes attrs = {}) {
  std::vector<DLDataType> dtypes;
  for (const Tensor& t : inputs) dtypes.push_back(t.dtype());
  return run_graph(one_node(op, dtypes, std::move(attrs)), inputs);
}

// The error message of running `op` over `inputs` ("" if it ran).
std::string run_error(const std::string& op, const std::vector<Tensor>& inputs, ir::Attributes attrs = {},
                      const std::string& node = "n") {
  std::vector<DLDataType> dtypes;
  for (const Tensor& t : inputs) dtypes.push_back(t.dtype());
  Runtime rt(Options{strict_example_config()});
  auto model = load_graph(rt, one_node(op, dtypes, std::move(attrs), node));
  return error_of([&] { model->run(inputs); });
}

ir::Attributes attrs_other(ir::Attribute other) { return {{"other", std::move(other)}}; }
ir::Attributes attrs_alpha(ir::Attribute alpha) { return {{"alpha", std::move(alpha)}}; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A [3, 2] strided view of a [2, 3] row-major buffer: its transpose.
Tensor transposed(Floats& buffer) { return Tensor::from_blob(buffer.data(), kF32, {3, 2}, {1, 3}); }

}  // namespace

// ---- equal shapes ----------------------------------------------------------------

TEST(ExamplePlugin, AddEqualShapes) {
  Tensor y = run_op("aten::add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {10, 20, 30, 40, 50, 60})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(same_dtype(y.dtype(), kF32));
  EXPECT_EQ(values(y), (Floats{11, 22, 33, 44, 55, 66}));
}

TEST(ExamplePlugin, MulEqualShapes) {
  Tensor y = run_op("aten::mul", {f32({2, 3}, {1, -2, 3, -4, 0.5f, 6}), f32({2, 3}, {2, 3, -1, -0.5f, 4, 0})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{2, -6, -3, 2, 2, 0}));
}

TEST(ExamplePlugin, MulOfAValueWithItself) {
  // Both inputs are the same graph value.
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32);
  g.add_node("sq", "aten::mul", {x, x}, {"y"});
  g.outputs = {g.find_value("y")};
  EXPECT_EQ(values(run_graph(std::move(g), {f32({4}, {-3, 0, 1.5f, 4})})), (Floats{9, 0, 2.25f, 16}));
}

// ---- broadcasting ----------------------------------------------------------------

TEST(ExamplePlugin, AddBroadcastsARowOverEachRow) {
  // [2,3] + [3]
  Tensor y = run_op("aten::add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{11, 22, 33, 14, 25, 36}));
}

TEST(ExamplePlugin, AddBroadcastsSelfToo) {
  // [3] + 2 * [2,3]: self is the one broadcast (and alpha shows which is which).
  Tensor y = run_op("aten::add", {f32({3}, {10, 20, 30}), f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                    attrs_alpha(ir::Attribute::of_int(2)));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{12, 24, 36, 18, 30, 42}));
}

TEST(ExamplePlugin, MulBroadcastsAColumnTimesARow) {
  // [2,1] * [1,3] -> [2,3]: both sides broadcast.
  Tensor y = run_op("aten::mul", {f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{10, 20, 30, 20, 40, 60}));
}

TEST(ExamplePlugin, AddBroadcastsAcrossRanks) {
  // [4,1,3] + [2,1] -> [4,2,3]: y[i][j][k] = a[i][0][k] + b[j][0].
  Tensor y = run_op("aten::add", {f32({4, 1, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), f32({2, 1}, {100, 200})});
  EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(values(y), (Floats{100, 101, 102, 200, 201, 202, 103, 104, 105, 203, 204, 205,
                               106, 107, 108, 206, 207, 208, 109, 110, 111, 209, 210, 211}));
}

TEST(ExamplePlugin, MulBroadcastsAConstantRowOverARank3Input) {
  // [2,2,3] * constant [3]
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {2, 2, 3});
  ir::ValueId w = g.add_constant("w", f32({3}, {1, 10, 100}));
  g.add_node("scale", "aten::mul", {x, w}, {"y"});
  g.outputs = {g.find_value("y")};
  Tensor y = run_graph(std::move(g), {f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(values(y), (Floats{1, 20, 300, 4, 50, 600, 7, 80, 900, 10, 110, 1200}));
}

TEST(ExamplePlugin, ShapesThatDoNotBroadcastAreAnErrorNamingBoth) {
  std::string msg = run_error("aten::add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}, {}, "bad.add");
  EXPECT_TRUE(contains(msg, "bad.add")) << msg;
  EXPECT_TRUE(contains(msg, "'example'")) << msg;
  EXPECT_TRUE(contains(msg, "shapes [2, 3] and [2] do not broadcast")) << msg;
}

// ---- the scalar form -------------------------------------------------------------

TEST(ExamplePlugin, ScalarFormTakesAFloatOther) {
  Tensor x = f32({3}, {1, 2, 3});
  Tensor sum = run_op("aten::add", {x}, attrs_other(ir::Attribute::of_float(0.5)));
  EXPECT_EQ(sum.shape(), (Shape{3}));
  EXPECT_EQ(values(sum), (Floats{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(values(run_op("aten::mul", {x}, attrs_other(ir::Attribute::of_float(0.5)))), (Floats{0.5f, 1, 1.5f}));
}

TEST(ExamplePlugin, ScalarFormTakesAnIntOther) {
  Tensor x = f32({2, 2}, {1, 2, 3, -4});
  Tensor prod = run_op("aten::mul", {x}, attrs_other(ir::Attribute::of_int(3)));
  EXPECT_EQ(prod.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(prod), (Floats{3, 6, 9, -12}));
  EXPECT_EQ(values(run_op("aten::add", {x}, attrs_other(ir::Attribute::of_int(-2)))), (Floats{-1, 0, 1, -6}));
}

TEST(ExamplePlugin, ScalarFormWithAnAbsentSecondInput) {
  // The importer's shape for aten::add(x, 2.5): an absent input slot plus attr `other`.
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32);
  g.add_node("n", "aten::mul", {x, ir::kNoValue}, {"y"}, attrs_other(ir::Attribute::of_float(2.5)));
  g.outputs = {g.find_value("y")};
  EXPECT_EQ(values(run_graph(std::move(g), {f32({3}, {2, -4, 0})})), (Floats{5, -10, 0}));
}

TEST(ExamplePlugin, ScalarFormWithoutOtherIsDeclined) {
  std::string msg = run_error("aten::add", {f32({2}, {1, 2})}, {}, "lonely.add");
  EXPECT_TRUE(contains(msg, "lonely.add")) << msg;
  EXPECT_TRUE(contains(msg, "strict mode")) << msg;
  EXPECT_TRUE(contains(msg, "example: 'other' is neither a tensor input nor a number attribute")) << msg;
  // A string `other` is no number either.
  msg = run_error("aten::mul", {f32({2}, {1, 2})}, attrs_other(ir::Attribute::of_string("2")));
  EXPECT_TRUE(contains(msg, "example: 'other' is neither a tensor input nor a number attribute")) << msg;
}

// ---- alpha -----------------------------------------------------------------------

TEST(ExamplePlugin, AddScalesOtherByIntAlpha) {
  Tensor y = run_op("aten::add", {f32({3}, {1, 2, 3}), f32({3}, {10, 20, 30})}, attrs_alpha(ir::Attribute::of_int(2)));
  EXPECT_EQ(values(y), (Floats{21, 42, 63}));  // self + 2 * other
}

TEST(ExamplePlugin, AddScalesOtherByFloatAndNegativeAlpha) {
  Tensor a = f32({3}, {1, 2, 3}), b = f32({3}, {10, 20, 30});
  EXPECT_EQ(values(run_op("aten::add", {a, b}, attrs_alpha(ir::Attribute::of_float(0.5)))), (Floats{6, 12, 18}));
  EXPECT_EQ(values(run_op("aten::add", {a, b}, attrs_alpha(ir::Attribute::of_int(-1)))),
            (Floats{-9, -18, -27}));  // aten::sub's lowering
}

TEST(ExamplePlugin, AlphaAppliesToTheScalarFormAndToBroadcastOther) {
  ir::Attributes scalar{{"other", ir::Attribute::of_float(2.5)}, {"alpha", ir::Attribute::of_int(2)}};
  EXPECT_EQ(values(run_op("aten::add", {f32({3}, {1, 2, 3})}, scalar)), (Floats{6, 7, 8}));
  Tensor y = run_op("aten::add", {f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30})}, attrs_alpha(ir::Attribute::of_int(3)));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{31, 61, 91, 32, 62, 92}));
}

// ---- relu ------------------------------------------------------------------------

TEST(ExamplePlugin, ReluZeroesNegativesAndKeepsTheRest) {
  Tensor y = run_op("aten::relu", {f32({2, 3}, {-1, 2, -0.5f, 0, 3.5f, -100})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{0, 2, 0, 0, 3.5f, 0}));
}

TEST(ExamplePlugin, ReluPropagatesNaNAndHandlesInfinities) {
  // `x < 0 ? 0 : x` leaves NaN (either sign) as NaN, as torch.relu does.
  Tensor y = run_op("aten::relu", {f32({5}, {kNaN, -kNaN, -kInf, kInf, -7})});
  Floats v = values(y);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(std::isnan(v[0])) << v[0];
  EXPECT_TRUE(std::isnan(v[1])) << v[1];
  EXPECT_EQ(v[2], 0.0f);
  EXPECT_EQ(v[3], kInf);
  EXPECT_EQ(v[4], 0.0f);
}

TEST(ExamplePlugin, NaNFlowsThroughAddAndMul) {
  Floats sum = values(run_op("aten::add", {f32({2}, {kNaN, 1}), f32({2}, {1, 2})}));
  EXPECT_TRUE(std::isnan(sum[0]));
  EXPECT_EQ(sum[1], 3.0f);
  Floats prod = values(run_op("aten::mul", {f32({2}, {kInf, 2})}, attrs_other(ir::Attribute::of_int(0))));
  EXPECT_TRUE(std::isnan(prod[0]));  // inf * 0
  EXPECT_EQ(prod[1], 0.0f);
}

// ---- strided and expanded inputs -------------------------------------------------

TEST(ExamplePlugin, AddReadsATransposedViewThroughItsStrides) {
  // storage [[1,2,3],[4,5,6]]; the view is its transpose [[1,4],[2,5],[3,6]].
  Floats storage{1, 2, 3, 4, 5, 6};
  Tensor view = transposed(storage);
  ASSERT_FALSE(view.is_contiguous());
  Tensor y = run_op("aten::add", {view, f32({2}, {100, 200})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (Floats{101, 204, 102, 205, 103, 206}));
  EXPECT_EQ(storage, (Floats{1, 2, 3, 4, 5, 6}));  // inputs are read, never written
}

TEST(ExamplePlugin, TransposedViewAsOtherAndBothSidesStrided) {
  Floats storage{1, 2, 3, 4, 5, 6};
  Tensor view = transposed(storage);  // [[1,4],[2,5],[3,6]]
  // contiguous self, strided other, alpha to tell them apart
  Tensor y = run_op("aten::add", {f32({3, 2}, {10, 20, 30, 40, 50, 60}), view}, attrs_alpha(ir::Attribute::of_int(2)));
  EXPECT_EQ(values(y), (Floats{12, 28, 34, 50, 56, 72}));
  // both strided (the same view twice): squares of the transpose
  EXPECT_EQ(values(run_op("aten::mul", {view, view})), (Floats{1, 16, 4, 25, 9, 36}));
}

TEST(ExamplePlugin, ReluReadsATransposedView) {
  Floats storage{-1, 2, 3, -4, 5, -6};
  Tensor y = run_op("aten::relu", {transposed(storage)});  // [[-1,-4],[2,5],[3,-6]]
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (Floats{0, 0, 2, 5, 3, 0}));
}

TEST(ExamplePlugin, MulReadsASlicedView) {
  // every other column, starting at element 1, of a [2,4] buffer: [[1,3],[5,7]]
  Floats storage{0, 1, 2, 3, 4, 5, 6, 7};
  Tensor slice = Tensor::from_blob(storage.data() + 1, kF32, {2, 2}, {4, 2});
  Tensor y = run_op("aten::mul", {slice, f32({2, 2}, {1, 10, 100, 1000})});
  EXPECT_EQ(values(y), (Floats{1, 30, 500, 7000}));
}

TEST(ExamplePlugin, AddReadsABroadcastExpandedInput) {
  // [2] expanded to [3,2] with stride 0: [[10,20],[10,20],[10,20]]
  Floats row{10, 20};
  Tensor expanded = Tensor::from_blob(row.data(), kF32, {3, 2}, {0, 1});
  Tensor y = run_op("aten::add", {f32({3, 2}, {1, 2, 3, 4, 5, 6}), expanded});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (Floats{11, 22, 13, 24, 15, 26}));
}

TEST(ExamplePlugin, ExpandedSelfInMulAndRelu) {
  // a column [2] expanded along dim 1: [[2,2,2],[3,3,3]]
  Floats column{2, 3};
  Tensor expanded = Tensor::from_blob(column.data(), kF32, {2, 3}, {1, 0});
  EXPECT_EQ(values(run_op("aten::mul", {expanded, f32({2, 3}, {1, 2, 3, 4, 5, 6})})), (Floats{2, 4, 6, 12, 15, 18}));
  Floats signs{-1, 4};
  Tensor expanded_signs = Tensor::from_blob(signs.data(), kF32, {2, 3}, {1, 0});
  Tensor y = run_op("aten::relu", {expanded_signs});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (Floats{0, 0, 0, 4, 4, 4}));
}

TEST(ExamplePlugin, FullyExpandedScalarAndAnExpandedInputThatAlsoBroadcasts) {
  // one float expanded to [2,2] (all strides 0), in the scalar form with alpha
  float seven = 7;
  Tensor sevens = Tensor::from_blob(&seven, kF32, {2, 2}, {0, 0});
  ir::Attributes attrs{{"other", ir::Attribute::of_int(1)}, {"alpha", ir::Attribute::of_float(-3)}};
  Tensor y = run_op("aten::add", {sevens}, attrs);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(y), (Floats{4, 4, 4, 4}));
  // an expanded [2,3] (stride-0 rows) times a [2,1] that broadcasts along dim 1
  Floats row{1, 2, 3};
  Tensor rows = Tensor::from_blob(row.data(), kF32, {2, 3}, {0, 1});  // [[1,2,3],[1,2,3]]
  Tensor z = run_op("aten::mul", {rows, f32({2, 1}, {10, -1})});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(z), (Floats{10, 20, 30, -1, -2, -3}));
}

TEST(ExamplePlugin, ContiguousThenStridedInputsOfOneShapeShareAPlanButReadCorrectly) {
  // Plans are cached per dtype+shape, not strides: the second run must still honour them.
  Runtime rt(Options{strict_example_config()});
  auto model = load_graph(rt, one_node("aten::relu", {kF32}));
  EXPECT_EQ(values(model->run({f32({3, 2}, {-1, 2, 3, -4, 5, -6})})[0]), (Floats{0, 2, 3, 0, 5, 0}));
  Floats storage{-1, 2, 3, -4, 5, -6};
  EXPECT_EQ(values(model->run({transposed(storage)})[0]), (Floats{0, 0, 2, 5, 3, 0}));
}

// ---- empty and 0-dim tensors -----------------------------------------------------

TEST(ExamplePlugin, EmptyTensors) {
  Tensor empty = Tensor::empty(kF32, {0, 3});
  Tensor r = run_op("aten::relu", {empty});
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
  EXPECT_EQ(r.numel(), 0);
  Tensor s = run_op("aten::add", {empty, f32({3}, {1, 2, 3})});
  EXPECT_EQ(s.shape(), (Shape{0, 3}));
  EXPECT_EQ(s.numel(), 0);
  Tensor p = run_op("aten::mul", {empty, f32({1, 3}, {1, 2, 3})});
  EXPECT_EQ(p.shape(), (Shape{0, 3}));
  Tensor q = run_op("aten::mul", {empty}, attrs_other(ir::Attribute::of_float(2)));
  EXPECT_EQ(q.shape(), (Shape{0, 3}));
  // [0,3] against [2,3] does not broadcast (0 vs 2)
  std::string msg = run_error("aten::add", {empty, f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(contains(msg, "shapes [0, 3] and [2, 3] do not broadcast")) << msg;
}

TEST(ExamplePlugin, ZeroDimTensors) {
  Tensor r = run_op("aten::relu", {f32({}, {-3})});
  EXPECT_EQ(r.shape(), Shape{});
  EXPECT_EQ(values(r), (Floats{0}));
  EXPECT_EQ(values(run_op("aten::relu", {f32({}, {2.5f})})), (Floats{2.5f}));

  Tensor s = run_op("aten::add", {f32({}, {7}), f32({}, {5})}, attrs_alpha(ir::Attribute::of_int(2)));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(values(s), (Floats{17}));

  // 0-dim other broadcasts over [3]; 0-dim self broadcasts up to [2,2]
  Tensor p = run_op("aten::mul", {f32({3}, {1, 2, 3}), f32({}, {5})});
  EXPECT_EQ(p.shape(), (Shape{3}));
  EXPECT_EQ(values(p), (Floats{5, 10, 15}));
  Tensor q = run_op("aten::add", {f32({}, {100}), f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(q.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(q), (Floats{101, 102, 103, 104}));

  Tensor t = run_op("aten::mul", {f32({}, {4})}, attrs_other(ir::Attribute::of_float(-0.25)));
  EXPECT_EQ(t.shape(), Shape{});
  EXPECT_EQ(values(t), (Floats{-1}));
}

// ---- a chain ---------------------------------------------------------------------

TEST(ExamplePlugin, ChainOfAllThreeOps) {
  // y = relu(x * 2 + b) with x strided
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {3, 2});
  ir::ValueId b = g.add_constant("b", f32({2}, {-5, 1}));
  g.add_node("scale", "aten::mul", {x}, {"s"}, attrs_other(ir::Attribute::of_int(2)));
  g.add_node("shift", "aten::add", {g.find_value("s"), b}, {"t"});
  g.add_node("act", "aten::relu", {g.find_value("t")}, {"y"});
  g.outputs = {g.find_value("y")};
  Floats storage{1, 2, 3, 4, 5, 6};
  // x = [[1,4],[2,5],[3,6]]; 2x + b = [[-3,9],[-1,11],[1,13]]
  Tensor y = run_graph(std::move(g), {transposed(storage)});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (Floats{0, 9, 0, 11, 1, 13}));
}

// ---- rejections ------------------------------------------------------------------

TEST(ExamplePlugin, Int64InputIsAStrictModeErrorNamingNodeAndBackend) {
  Tensor ints = Tensor::empty(kI64, {2});
  std::string msg = run_error("aten::add", {ints, ints}, {}, "idx.add");
  EXPECT_TRUE(contains(msg, "strict mode")) << msg;
  EXPECT_TRUE(contains(msg, "node 'idx.add'")) << msg;
  EXPECT_TRUE(contains(msg, "aten::add")) << msg;
  EXPECT_TRUE(contains(msg, "example: dtype int64 of input 0 not supported (kernel takes float32)")) << msg;
}

TEST(ExamplePlugin, Int64OtherIsRejectedToo) {
  std::string msg = run_error("aten::mul", {f32({2}, {1, 2}), Tensor::empty(kI64, {2})}, {}, "mixed.mul");
  EXPECT_TRUE(contains(msg, "strict mode")) << msg;
  EXPECT_TRUE(contains(msg, "node 'mixed.mul'")) << msg;
  EXPECT_TRUE(contains(msg, "example: dtype int64 of input 1 not supported (kernel takes float32)")) << msg;
}

TEST(ExamplePlugin, Float64ReluIsRejected) {
  std::string msg = run_error("aten::relu", {Tensor::empty(kF64, {2})}, {}, "wide.relu");
  EXPECT_TRUE(contains(msg, "node 'wide.relu'")) << msg;
  EXPECT_TRUE(contains(msg, "example: dtype float64 of input 0 not supported")) << msg;
}

TEST(ExamplePlugin, PluginAdvertisesItsThreeFp32Kernels) {
  Runtime rt(Options{strict_example_config()});
  std::vector<PluginInfo> plugins = rt.plugins();
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].name, "example");
  std::vector<std::string> ops;
  for (const KernelInfo& k : plugins[0].kernels) {
    ops.push_back(k.op);
    EXPECT_EQ(k.dtypes, (std::vector<std::string>{"float32"})) << k.op;
    EXPECT_TRUE(k.host_allocated_outputs) << k.op;
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"aten::add", "aten::mul", "aten::relu"}));
}
