// The shape plugin (plugins/shape/) through the embedding API: its view ops against the
// aten reference plugin (byte-equal results), zero-copy (every view's data lies inside
// its input), the host's keep-alive of a view's parent, edge arguments (negative dims,
// clamped slices, empty and 0-dim tensors, non-contiguous inputs) and its rejections.
// Copies, joins, splits and the dtype sweep are in test_shape_copies.cpp.
#include "shape_test_util.hpp"

#include <limits>
#include <map>

using namespace shape_test;
using switchyard::Tensor;

namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();  // TorchScript's "to the end"

// ---- views: zero-copy and equal to aten ------------------------------------------------

TEST(ShapeViews, ViewAndReshapeOfContiguousInputs) {
  Tensor x = filled(kF32, {2, 3, 4});
  same_view_as_aten({"aten::view", {{"size", L({4, 6})}}}, {x});
  same_view_as_aten({"aten::view", {{"size", L({-1, 12})}}}, {x});
  same_view_as_aten({"aten::view", {{"size", L({2, 1, 12, 1})}}}, {x});
  same_view_as_aten({"aten::reshape", {{"shape", L({24})}}}, {x});
  same_view_as_aten({"aten::reshape", {{"shape", L({3, -1, 2})}}}, {x});
  same_view_as_aten({"aten::view_as", {}}, {x, filled(kI64, {6, 4})});
  same_view_as_aten({"aten::reshape_as", {}}, {x, filled(kBool, {4, 6})});
}

TEST(ShapeViews, ViewOfANonContiguousInputWhereStridesAllow) {
  // [2, 4, 3] laid out transposed in its last two dims: the batch dim can still split.
  Tensor x = transposed_copy(filled(kF32, {4, 4, 3}));
  ASSERT_FALSE(x.is_contiguous());
  std::vector<Tensor> y = same_view_as_aten({"aten::view", {{"size", L({2, 2, 4, 3})}}}, {x});
  EXPECT_FALSE(y[0].is_contiguous());
  same_view_as_aten({"aten::reshape", {{"shape", L({2, 2, 4, 3})}}}, {x});
  // a sliced input: every other row of a [6, 4] buffer, viewed [3, 2, 2]
  Tensor buffer = filled(kI32, {6, 4});
  Tensor rows = Tensor::from_blob(buffer.raw_data(), kI32, {3, 4}, {8, 1}, [buffer] {});
  same_view_as_aten({"aten::view", {{"size", L({3, 2, 2})}}}, {rows});
}

// One node, run after run, follows its input's shape and strides: the kernel remembers the
// last call's geometry, and a different input must not get the remembered one.
TEST(ShapeViews, OneInstanceFollowsItsInputsFromRunToRun) {
  const Op transpose{"aten::transpose", {{"dim0", I(0)}, {"dim1", I(-1)}}};
  const Op split{"aten::split", {{"split_size", I(2)}, {"dim", I(0)}}, 2};
  Tensor buffer = filled(kF32, {6, 4});
  const std::vector<Tensor> inputs = {
      filled(kF32, {4, 3}),
      filled(kF32, {4, 5}),
      Tensor::from_blob(buffer.raw_data(), kF32, {4, 3}, {4, 1}, [buffer] {}),  // rows of 4, 3 used
      filled(kF32, {4, 3}),
  };
  for (const Op& op : {transpose, split}) {
    switchyard::Runtime rt(switchyard::Options{strict_config("shape")});
    auto model = load_graph(rt, one_node(op, {inputs[0]}));
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<Tensor> got = model->run({inputs[i]});
      std::vector<Tensor> want = run_on("aten", op, {inputs[i]});
      ASSERT_EQ(got.size(), want.size()) << op.op << ", run " << i;
      for (size_t o = 0; o < got.size(); ++o) {
        EXPECT_EQ(got[o].shape(), want[o].shape()) << op.op << ", run " << i << " output " << o;
        EXPECT_EQ(got[o].strides(), want[o].strides()) << op.op << ", run " << i << " output " << o;
        EXPECT_TRUE(bytes(got[o]) == bytes(want[o])) << op.op << ", run " << i << " output " << o;
        EXPECT_TRUE(inside(got[o], inputs[i])) << op.op << ", run " << i << " output " << o << " was copied";
      }
    }
  }
}

TEST(ShapeViews, ReshapeCopiesWhereNoViewExistsLikeATen) {
  Tensor x = transposed_copy(filled(kF32, {3, 5}));
  std::vector<Tensor> y = same_as_aten({"aten::reshape", {{"shape", L({-1})}}}, {x});
  EXPECT_TRUE(y[0].is_contiguous());
  EXPECT_FALSE(inside(y[0], x));
  same_as_aten({"aten::reshape_as", {}}, {x, filled(kF32, {5, 3})});
  same_as_aten({"aten::flatten", {}}, {x});
}

TEST(ShapeViews, ViewThatNoStridesAllowIsDeclinedWithATensReason) {
  Tensor x = transposed_copy(filled(kF32, {3, 5}));
  std::string msg = shape_error({"aten::view", {{"size", L({15})}}}, {x});
  EXPECT_TRUE(contains(msg, "strict mode")) << msg;
  EXPECT_TRUE(contains(msg, "view size is not compatible with input tensor's size and stride")) << msg;
  msg = shape_error({"aten::view", {{"size", L({4, -1})}}}, {filled(kF32, {3, 5})});
  EXPECT_TRUE(contains(msg, "shape '[4, -1]' is invalid for input of size 15")) << msg;
  msg = shape_error({"aten::view", {{"size", L({-1, -1})}}}, {filled(kF32, {3, 5})});
  EXPECT_TRUE(contains(msg, "only one dimension can be inferred")) << msg;
}

TEST(ShapeViews, PermuteTransposeAndT) {
  Tensor x = filled(kF32, {2, 3, 4});
  same_view_as_aten({"aten::permute", {{"dims", L({2, 0, 1})}}}, {x});
  same_view_as_aten({"aten::permute", {{"dims", L({-1, -3, -2})}}}, {x});
  same_view_as_aten({"aten::transpose", {{"dim0", I(0)}, {"dim1", I(-1)}}}, {x});
  same_view_as_aten({"aten::transpose", {{"dim0", I(-2)}, {"dim1", I(-1)}}}, {transposed_copy(x)});
  same_view_as_aten({"aten::transpose", {{"dim0", I(1)}, {"dim1", I(1)}}}, {x});
  same_view_as_aten({"aten::t", {}}, {filled(kF64, {3, 5})});
  same_view_as_aten({"aten::t", {}}, {filled(kF64, {5})});
  same_view_as_aten({"aten::t", {}}, {filled(kF64, {})});
  EXPECT_TRUE(contains(shape_error({"aten::t", {}}, {x}), "t() expects a tensor with <= 2 dimensions, but self is 3D"));
  EXPECT_TRUE(contains(shape_error({"aten::permute", {{"dims", L({0, 0, 1})}}}, {x}), "duplicate dims"));
  EXPECT_TRUE(contains(shape_error({"aten::permute", {{"dims", L({0, 1})}}}, {x}), "number of dims don't match"));
  EXPECT_TRUE(contains(shape_error({"aten::transpose", {{"dim0", I(0)}, {"dim1", I(3)}}}, {x}),
                       "dimension out of range (expected to be in range of [-3, 2], but got 3)"));
}

TEST(ShapeViews, ExpandAndExpandAs) {
  Tensor x = filled(kF32, {3, 1});
  std::vector<Tensor> y = same_view_as_aten({"aten::expand", {{"size", L({2, 3, 4})}}}, {x});
  EXPECT_EQ(y[0].strides(), (Shape{0, 1, 0}));
  same_view_as_aten({"aten::expand", {{"size", L({-1, 5})}, {"implicit", I(0)}}}, {x});
  same_view_as_aten({"aten::expand", {{"size", L({4, -1, -1})}}}, {transposed_copy(filled(kI8, {2, 3}))});
  same_view_as_aten({"aten::expand_as", {}}, {x, filled(kBool, {2, 3, 7})});
  same_view_as_aten({"aten::broadcast_to", {{"size", L({3, 6})}}}, {x});
  same_view_as_aten({"aten::expand", {{"size", L({0, 3, 1})}}}, {x});
  EXPECT_TRUE(contains(shape_error({"aten::expand", {{"size", L({3, 2, 4})}}}, {filled(kF32, {3, 3})}),
                       "must match the existing size (3) at non-singleton dimension 1"));
  EXPECT_TRUE(contains(shape_error({"aten::expand", {{"size", L({-1, 3, 1})}}}, {x}),
                       "isn't allowed in a leading, non-existing dimension 0"));
  EXPECT_TRUE(contains(shape_error({"aten::expand", {{"size", L({1})}}}, {x}), "must be greater or equal"));
}

TEST(ShapeViews, SliceClampsLikeATen) {
  Tensor x = filled(kF32, {5, 6});
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, kEnd}, {1, 4},     {-4, -1}, {-100, 100}, {4, 2},
                                                           {7, 9},    {-1, kEnd}, {3, 3},   {0, -100}};
  for (auto [start, end] : ranges)
    for (int64_t step : {1, 2, 4})
      for (int64_t dim : {0, 1, -1})
        same_view_as_aten({"aten::slice", {{"dim", I(dim)}, {"start", I(start)}, {"end", I(end)}, {"step", I(step)}}},
                          {x});
  // defaults and None: the whole dim
  same_view_as_aten({"aten::slice", {{"start", ir::Attribute::none()}, {"end", ir::Attribute::none()}}}, {x});
  same_view_as_aten({"aten::slice", {{"dim", I(1)}, {"start", I(2)}}}, {transposed_copy(x)});
  EXPECT_TRUE(contains(shape_error({"aten::slice", {{"step", I(0)}}}, {x}), "slice step must be positive"));
  EXPECT_TRUE(
      contains(shape_error({"aten::slice", {}}, {filled(kF32, {})}), "slice() cannot be applied to a 0-dim tensor"));
}

TEST(ShapeViews, SelectAndNarrow) {
  Tensor x = filled(kI64, {3, 4, 2});
  for (int64_t index : {0, 2, -1, -3}) same_view_as_aten({"aten::select", {{"dim", I(0)}, {"index", I(index)}}}, {x});
  same_view_as_aten({"aten::select", {{"dim", I(-1)}, {"index", I(1)}}}, {transposed_copy(x)});
  same_view_as_aten({"aten::select", {{"dim", I(1)}, {"index", I(-4)}}}, {x});
  EXPECT_TRUE(contains(shape_error({"aten::select", {{"dim", I(1)}, {"index", I(4)}}}, {x}),
                       "select(): index 4 out of range for tensor of size [3, 4, 2] at dimension 1"));
  same_view_as_aten({"aten::narrow", {{"dim", I(1)}, {"start", I(1)}, {"length", I(2)}}}, {x});
  same_view_as_aten({"aten::narrow", {{"dim", I(-2)}, {"start", I(-3)}, {"length", I(3)}}}, {x});
  same_view_as_aten({"aten::narrow", {{"dim", I(0)}, {"start", I(3)}, {"length", I(0)}}}, {x});
  EXPECT_TRUE(contains(shape_error({"aten::narrow", {{"dim", I(1)}, {"start", I(3)}, {"length", I(2)}}}, {x}),
                       "exceeds dimension size (4)"));
}

TEST(ShapeViews, SqueezeUnsqueezeFlattenUnflatten) {
  Tensor x = filled(kF16, {2, 1, 3, 1});
  same_view_as_aten({"aten::squeeze", {}}, {x});
  for (int64_t dim : {1, -1, 0, 2}) same_view_as_aten({"aten::squeeze", {{"dim", I(dim)}}}, {x});
  same_view_as_aten({"aten::squeeze", {{"dim", I(0)}}}, {filled(kF16, {})});
  same_view_as_aten({"aten::squeeze", {}}, {filled(kF16, {1, 1})});
  for (int64_t dim : {0, 2, 4, -1, -5}) same_view_as_aten({"aten::unsqueeze", {{"dim", I(dim)}}}, {x});
  same_view_as_aten({"aten::unsqueeze", {{"dim", I(1)}}}, {transposed_copy(filled(kF16, {3, 4}))});
  same_view_as_aten({"aten::unsqueeze", {{"dim", I(-1)}}}, {filled(kF16, {})});
  Tensor y = filled(kBF16, {2, 3, 4, 5});
  same_view_as_aten({"aten::flatten", {}}, {y});
  same_view_as_aten({"aten::flatten", {{"start_dim", I(1)}, {"end_dim", I(-1)}}}, {y});
  same_view_as_aten({"aten::flatten", {{"start_dim", I(-3)}, {"end_dim", I(2)}}}, {y});
  same_view_as_aten({"aten::flatten", {{"start_dim", I(2)}, {"end_dim", I(2)}}}, {y});
  same_view_as_aten({"aten::flatten", {}}, {filled(kBF16, {})});
  same_view_as_aten({"aten::flatten", {{"start_dim", I(0)}, {"end_dim", I(1)}}}, {transposed_copy(y)});
  same_view_as_aten({"aten::unflatten", {{"dim", I(1)}, {"sizes", L({3, 1})}}}, {y});
  same_view_as_aten({"aten::unflatten", {{"dim", I(-1)}, {"sizes", L({-1, 5})}}}, {y});
  EXPECT_TRUE(contains(shape_error({"aten::flatten", {{"start_dim", I(2)}, {"end_dim", I(1)}}}, {y}),
                       "start_dim cannot come after end_dim"));
  EXPECT_TRUE(contains(shape_error({"aten::unflatten", {{"dim", I(1)}, {"sizes", L({2, 2})}}}, {y}),
                       "don't multiply up to the size of dim 1 (3)"));
  EXPECT_TRUE(contains(shape_error({"aten::squeeze", {{"dim", I(4)}}}, {x}), "dimension out of range"));
}

TEST(ShapeViews, AliasAndDetachAreTheInputItself) {
  Tensor x = transposed_copy(filled(kU8, {3, 4}));
  for (const char* op : {"aten::alias", "aten::detach"}) {
    std::vector<Tensor> y = same_view_as_aten({op, {}}, {x});
    EXPECT_EQ(y[0].raw_data(), x.raw_data());
    EXPECT_EQ(y[0].strides(), x.strides());
  }
}

TEST(ShapeViews, EmptyTensors) {
  Tensor e = filled(kF32, {0, 4});
  same_as_aten({"aten::view", {{"size", L({4, 0})}}}, {e});
  same_as_aten({"aten::reshape", {{"shape", L({2, 0, 2})}}}, {e});
  same_as_aten({"aten::transpose", {{"dim0", I(0)}, {"dim1", I(1)}}}, {e});
  same_as_aten({"aten::slice", {{"dim", I(1)}, {"start", I(1)}, {"end", I(3)}}}, {e});
  same_as_aten({"aten::select", {{"dim", I(1)}, {"index", I(2)}}}, {e});
  same_as_aten({"aten::expand", {{"size", L({3, 0, 4})}}}, {e});
  EXPECT_TRUE(contains(shape_error({"aten::view", {{"size", L({-1, 0})}}}, {e}), "can be any value and is ambiguous"));
}

// ---- the host keeps a view's parent alive ---------------------------------------------

std::string shape_then_aten_config() {
  return sytest::write_config("shape_then_aten",
                              "[plugins]\nload = [\"shape\", \"aten\"]\n"
                              "[selection]\ndefault = [\"shape\", \"aten\"]\n");
}

TEST(ShapeKeepAlive, AViewOutlivesItsParentsOtherConsumers) {
  // p = x + x (aten); v = transpose(p) (shape, a view of p); q = relu(p) is p's last
  // consumer, after which the executor drops p. v, a graph output, must keep p's memory.
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32);
  g.add_node("p", "aten::add", {x, x}, {"p"});
  g.add_node("v", "aten::transpose", {g.find_value("p")}, {"v"}, {{"dim0", I(0)}, {"dim1", I(1)}});
  g.add_node("c", "aten::slice", {g.find_value("p")}, {"c"}, {{"dim", I(1)}, {"start", I(1)}});
  g.add_node("q", "aten::relu", {g.find_value("p")}, {"q"});
  g.outputs = {g.find_value("v"), g.find_value("c"), g.find_value("q")};
  switchyard::Runtime rt(switchyard::Options{shape_then_aten_config()});
  auto model = load_graph(rt, std::move(g));

  std::vector<const void*> p_data(1, nullptr);
  int64_t p_bytes = 0;
  model->set_node_callback([&](const switchyard::NodeEvent& e) {
    if (e.node == "p") p_data[0] = e.outputs[0].raw_data(), p_bytes = static_cast<int64_t>(e.outputs[0].nbytes());
  });
  std::vector<Tensor> out;
  {
    Tensor in = sytest::f32({2, 3}, {1, -2, 3, -4, 5, -6});
    out = model->run({in});
  }  // the caller's input is gone too
  for (const auto& e : model->plan({sytest::f32({2, 3}, {0, 0, 0, 0, 0, 0})}))
    if (e.node == "v" || e.node == "c") EXPECT_EQ(e.backend, "shape") << e.node;
  ASSERT_EQ(out.size(), 3u);
  // zero-copy: both views point into p's buffer
  const char* lo = static_cast<const char*>(p_data[0]);
  for (int k : {0, 1}) {
    const char* d = static_cast<const char*>(out[k].raw_data());
    EXPECT_TRUE(d >= lo && d < lo + p_bytes) << "output " << k << " is not a view of p";
  }
  // churn the allocator so freed memory would be reused, then read the views
  std::vector<Tensor> churn;
  for (int i = 0; i < 64; ++i) churn.push_back(sytest::f32({2, 3}, {9, 9, 9, 9, 9, 9}));
  EXPECT_EQ(sytest::values(out[0]), (std::vector<float>{2, -8, -4, 10, 6, -12}));
  EXPECT_EQ(sytest::values(out[1]), (std::vector<float>{-4, 6, 10, -12}));
  EXPECT_EQ(sytest::values(out[2]), (std::vector<float>{2, 0, 6, 0, 10, 0}));
  // the view keeps its parent alive by reference: dropping the model changes nothing
  model.reset();
  EXPECT_EQ(sytest::values(out[0]), (std::vector<float>{2, -8, -4, 10, 6, -12}));
}

TEST(ShapeKeepAlive, AViewOfAGraphInputKeepsTheCallersMemory) {
  switchyard::Runtime rt(switchyard::Options{strict_config("shape")});
  auto model = load_graph(rt, one_node({"aten::select", {{"dim", I(0)}, {"index", I(1)}}}, {filled(kI32, {3, 2})}));
  Tensor y;
  const void* input_data = nullptr;
  {
    Tensor x = filled(kI32, {3, 2});
    input_data = x.raw_data();
    y = model->run({x})[0];
  }
  EXPECT_EQ(static_cast<const char*>(y.raw_data()), static_cast<const char*>(input_data) + 2 * sizeof(int32_t));
  Tensor want = filled(kI32, {3, 2});
  EXPECT_EQ(y.data<int32_t>()[0], want.data<int32_t>()[2]);
  EXPECT_EQ(y.data<int32_t>()[1], want.data<int32_t>()[3]);
}

// A copy (contiguous of a transpose, a reshape no view expresses) is written into the
// host's arena; a reshape of a contiguous value stays a view. x -> t -> contiguous ->
// reshape -> relu, then t -> reshape (a copy) -> relu.
TEST(ShapeMemoryPlan, CopiesShareTheArenaAndViewsStayViews) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32);
  g.add_node("sq", "aten::mul", {x, x}, {"sq"});
  g.add_node("t", "aten::transpose", {g.find_value("sq")}, {"t"}, {{"dim0", I(0)}, {"dim1", I(1)}});
  g.add_node("c", "aten::contiguous", {g.find_value("t")}, {"c"});
  g.add_node("r", "aten::reshape", {g.find_value("c")}, {"r"}, {{"shape", L({-1})}});
  g.add_node("a", "aten::relu", {g.find_value("r")}, {"a"});
  g.add_node("rc", "aten::reshape", {g.find_value("t")}, {"rc"}, {{"shape", L({-1})}});
  g.add_node("b", "aten::relu", {g.find_value("rc")}, {"b"});
  g.outputs = {g.find_value("a"), g.find_value("b")};
  switchyard::Runtime rt(switchyard::Options{shape_then_aten_config()});
  auto model = load_graph(rt, std::move(g));
  const std::vector<Tensor> feeds = {filled(kF32, {3, 5})};
  for (const auto& e : model->plan(feeds))
    if (e.node == "c" || e.node == "r" || e.node == "rc") {
      EXPECT_EQ(e.backend, "shape") << e.node;
      EXPECT_TRUE(e.rejected.empty()) << e.node << ": the copy kernel's refusal of a view is no verdict";
    }
  std::map<std::string, std::string> placement;
  for (const auto& v : model->memory_plan(feeds).values) placement[v.value] = v.placement;
  EXPECT_EQ(placement["c"], "arena");
  EXPECT_EQ(placement["rc"], "arena");
  EXPECT_EQ(placement["r"], "view of c");
  // x^2 transposed, flattened: both outputs are the same values.
  const std::vector<Tensor> out = model->run(feeds);
  const float* in = feeds[0].data<float>();
  for (const Tensor& o : out) {
    ASSERT_EQ(o.shape(), (std::vector<int64_t>{15}));
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(o.data<float>()[j * 3 + i], in[i * 5 + j] * in[i * 5 + j]);
  }
}

// ---- rejections --------------------------------------------------------------------------

TEST(ShapeRejections, ArgumentsItDoesNotKnowAreDeclinedNotIgnored) {
  Tensor x = filled(kF32, {2, 3});
  std::string msg = shape_error({"aten::transpose", {{"dim0", I(0)}, {"dim1", I(1)}, {"conjugate", I(1)}}}, {x});
  EXPECT_TRUE(contains(msg, "shape: unexpected attribute 'conjugate'")) << msg;
  msg = shape_error({"aten::contiguous", {{"memory_format", I(2)}}}, {filled(kF32, {1, 2, 3, 4})});
  EXPECT_TRUE(contains(msg, "memory_format 2 is not supported")) << msg;
  msg = shape_error({"aten::view", {}}, {x});
  EXPECT_TRUE(contains(msg, "attribute 'size' is missing")) << msg;
  msg = shape_error({"aten::view", {{"size", ir::Attribute::of_string("6")}}}, {x});
  EXPECT_TRUE(contains(msg, "attribute 'size' is missing or not an int list")) << msg;
  // None is as good as absent
  same_view_as_aten({"aten::squeeze", {{"dim", ir::Attribute::none()}}}, {filled(kF32, {1, 3})});
}

TEST(ShapeRejections, WrongNumberOfInputsOrOutputs) {
  Tensor x = filled(kF32, {6});
  std::string msg = shape_error({"aten::chunk", {{"chunks", I(3)}}, 2}, {x});
  EXPECT_TRUE(contains(msg, "makes 3 output(s) for these arguments, node has 2")) << msg;
  msg = shape_error({"aten::view_as", {}}, {x});
  EXPECT_TRUE(contains(msg, "takes 2 tensor input(s), node has 1")) << msg;
}

TEST(ShapePlugin, AdvertisesEveryDtypeAndProducesItsOutputs) {
  switchyard::Runtime rt(switchyard::Options{strict_config("shape")});
  std::vector<switchyard::PluginInfo> plugins = rt.plugins();
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].name, "shape");
  std::vector<std::string> ops, host_allocated;
  for (const auto& k : plugins[0].kernels) {
    ops.push_back(k.op);
    EXPECT_EQ(k.family, "shape") << k.op;
    if (k.host_allocated_outputs) host_allocated.push_back(k.op);
    EXPECT_EQ(k.dtypes, (std::vector<std::string>{"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32",
                                                  "int64", "uint8", "bool"}))
        << k.op;
  }
  for (const char* op :
       {"aten::view",    "aten::reshape",   "aten::permute", "aten::transpose",        "aten::t",
        "aten::expand",  "aten::slice",     "aten::select",  "aten::squeeze",          "aten::unsqueeze",
        "aten::flatten", "aten::unflatten", "aten::alias",   "aten::detach",           "aten::contiguous",
        "aten::cat",     "aten::stack",     "aten::split",   "aten::split_with_sizes", "aten::chunk",
        "aten::unbind",  "aten::embedding"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  // Copies and gathers write into host-allocated outputs (the memory plan's); views are produced.
  EXPECT_EQ(host_allocated,
            (std::vector<std::string>{"aten::reshape", "aten::reshape_as", "aten::flatten", "aten::contiguous",
                                      "aten::cat", "aten::concat", "aten::stack", "aten::embedding"}));
}

}  // namespace
