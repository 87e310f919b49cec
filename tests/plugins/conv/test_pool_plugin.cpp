// The conv plugin's pooling against the aten reference plugin (max_pool2d, avg_pool2d,
// adaptive_avg_pool2d), and what the plugin declines, with the reasons it gives.
#include "conv_test_util.hpp"

#include <limits>

using namespace convtest;

namespace {

ir::Attributes with(ir::Attributes a, const std::string& name, ir::Attribute v) {
  a.push_back({name, std::move(v)});
  return a;
}

void pool_case(const std::string& what, const std::string& op, Tensor x, ir::Attributes attrs) {
  compare(what, op, {in(std::move(x))}, std::move(attrs));
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not mention '" << part << "'";
}

}  // namespace

TEST(ConvPluginPool, MaxPool2d) {
  const std::string op = "aten::max_pool2d";
  pool_case("resnet 3x3 stride 2 pad 1", op, random({2, 8, 16, 16}, 1), pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("odd size", op, random({1, 5, 15, 13}, 2), pool_attrs({3, 2}, {2, 3}, {1, 0}));
  pool_case("empty stride = kernel", op, random({2, 3, 12, 10}, 3), pool_attrs({2, 2}, {}, {0, 0}));
  pool_case("stride absent", op, random({2, 3, 12, 10}, 3), {{"kernel_size", ints({3})}});
  pool_case("ceil_mode", op, random({1, 4, 14, 11}, 4),
            with(pool_attrs({3, 3}, {2, 2}, {0, 1}), "ceil_mode", integer(1)));
  pool_case("ceil_mode drops a window that would start in the padding", op, random({1, 2, 5, 5}, 5),
            with(pool_attrs({2, 2}, {2, 2}, {1, 1}), "ceil_mode", integer(1)));
  pool_case("dilation 2", op, random({2, 3, 15, 15}, 6),
            with(pool_attrs({3, 3}, {1, 2}, {1, 1}), "dilation", ints({2, 2})));
  pool_case("unbatched", op, random({4, 9, 9}, 7), pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("all negative input (padding never wins)", op, random({1, 2, 6, 6}, 8, -3.f, -1.f),
            pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("non-contiguous input", op, transposed_view({2, 3, 11, 9}, 9), pool_attrs({3, 3}, {2, 2}, {1, 1}));
}

TEST(ConvPluginPool, AvgPool2d) {
  const std::string op = "aten::avg_pool2d";
  pool_case("2x2", op, random({2, 6, 10, 10}, 1), pool_attrs({2, 2}, {2, 2}, {0, 0}));
  pool_case("padded, count_include_pad", op, random({1, 4, 11, 9}, 2), pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("padded, exclude pad", op, random({1, 4, 11, 9}, 2),
            with(pool_attrs({3, 3}, {2, 2}, {1, 1}), "count_include_pad", integer(0)));
  pool_case("ceil_mode, exclude pad", op, random({2, 3, 10, 7}, 3),
            with(with(pool_attrs({3, 3}, {2, 2}, {1, 0}), "ceil_mode", integer(1)), "count_include_pad", integer(0)));
  pool_case("ceil_mode, include pad, no overhang", op, random({1, 3, 9, 9}, 4),
            with(pool_attrs({3, 3}, {2, 2}, {1, 1}), "ceil_mode", integer(1)));
  pool_case("divisor_override", op, random({2, 3, 9, 8}, 5),
            with(pool_attrs({3, 2}, {2, 2}, {1, 1}), "divisor_override", integer(4)));
  pool_case("divisor_override with ceil_mode overhang", op, random({1, 2, 8, 8}, 6),
            with(with(pool_attrs({3, 3}, {2, 2}, {0, 0}), "ceil_mode", integer(1)), "divisor_override", integer(5)));
  pool_case("divisor_override None", op, random({1, 2, 8, 8}, 7),
            with(pool_attrs({2, 2}, {2, 2}, {0, 0}), "divisor_override", ir::Attribute::none()));
  pool_case("unbatched, odd", op, random({3, 7, 5}, 8), pool_attrs({3, 2}, {1, 2}, {1, 1}));
  pool_case("non-contiguous input", op, channel_strided({2, 3, 8, 6}, 9), pool_attrs({2, 2}, {2, 2}, {1, 0}));
}

TEST(ConvPluginPool, AdaptiveAvgPool2d) {
  const std::string op = "aten::adaptive_avg_pool2d";
  pool_case("global 1x1", op, random({2, 16, 7, 7}, 1), {{"output_size", ints({1, 1})}});
  pool_case("global 1x1, single int", op, random({2, 16, 5, 9}, 2), {{"output_size", integer(1)}});
  pool_case("evenly divisible", op, random({3, 4, 8, 12}, 3), {{"output_size", ints({2, 3})}});
  pool_case("same size", op, random({1, 4, 5, 6}, 4), {{"output_size", ints({5, 6})}});
  pool_case("unbatched", op, random({6, 9, 6}, 5), {{"output_size", ints({3, 2})}});
  pool_case("non-contiguous input", op, transposed_view({2, 5, 6, 4}, 6), {{"output_size", ints({1, 1})}});
}

TEST(ConvPluginPool, NaNAndInfinityAsInAten) {
  // oneDNN's max pooling skips NaN; ATen's (and so the plugin's) returns it.
  Tensor x = random({2, 3, 9, 8}, 3);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int64_t i : {0, 17, 40, 100, 143, 250, 431}) x.data<float>()[i] = nan;
  for (int64_t i : {5, 60, 300}) x.data<float>()[i] = inf;
  x.data<float>()[200] = -inf;
  pool_case("max, NaN and infinities", "aten::max_pool2d", x, pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("max, dilated, ceil_mode", "aten::max_pool2d", x,
            with(with(pool_attrs({2, 3}, {3, 2}, {1, 1}), "dilation", ints({2, 1})), "ceil_mode", integer(1)));
  pool_case("max, unbatched", "aten::max_pool2d", transposed_view({3, 9, 8}, 4), pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("avg, NaN and infinities", "aten::avg_pool2d", x, pool_attrs({3, 3}, {2, 2}, {1, 1}));
  pool_case("adaptive, NaN and infinities", "aten::adaptive_avg_pool2d", x, {{"output_size", ints({3, 2})}});
}

TEST(ConvPluginPool, SpatialSizeChangesBetweenRuns) {
  // A global pool over whatever size arrives: the plan (and the primitive) per shape.
  Built b = chain({{"aten::adaptive_avg_pool2d", {{"output_size", ints({1, 1})}}}}, {in(random({1, 4, 7, 7}, 1))});
  Built r = chain({{"aten::adaptive_avg_pool2d", {{"output_size", ints({1, 1})}}}}, {in(random({1, 4, 7, 7}, 1))});
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  auto ref = load_graph(runtime("aten"), std::move(r.graph));
  uint32_t seed = 20;
  for (Shape x : {Shape{1, 4, 7, 7}, Shape{2, 4, 3, 5}, Shape{1, 4, 7, 7}}) {
    Tensor input = random(x, seed++);
    expect_close(model->run({input})[0], ref->run({input})[0], "input " + switchyard::shape_string(x));
  }
}

// ---- what the plugin declines, and why (the host then falls back to aten) --------------

TEST(ConvPluginRejects, UnsupportedPoolingCases) {
  EXPECT_TRUE(
      contains(rejection("aten::adaptive_avg_pool2d", {in(random({1, 2, 7, 7}, 1))}, {{"output_size", ints({3, 3})}}),
               "does not divide"));
  EXPECT_TRUE(contains(rejection("aten::avg_pool2d", {in(random({1, 2, 8, 8}, 1))},
                                 with(pool_attrs({3, 3}, {2, 2}, {0, 0}), "ceil_mode", integer(1))),
                       "runs past the padded input"));
  EXPECT_TRUE(contains(rejection("aten::max_pool2d", {in(random({1, 2, 8, 8}, 1))}, pool_attrs({2, 2}, {2, 2}, {2, 2})),
                       "half the kernel size"));
  EXPECT_TRUE(contains(rejection("aten::max_pool2d", {in(random({2, 8}, 1))}, pool_attrs({2, 2}, {2, 2}, {0, 0})),
                       "dimensions"));
  EXPECT_TRUE(contains(rejection("aten::avg_pool2d", {in(random({1, 2, 8, 8}, 1))},
                                 with(pool_attrs({2, 2}, {2, 2}, {0, 0}), "divisor_override", integer(0))),
                       "divisor_override"));
  // The same ceil_mode avg pool without padding counted is accepted.
  EXPECT_EQ(rejection("aten::avg_pool2d", {in(random({1, 2, 8, 8}, 1))},
                      with(with(pool_attrs({3, 3}, {2, 2}, {0, 0}), "ceil_mode", integer(1)), "count_include_pad",
                           integer(0))),
            "");
}

TEST(ConvPluginRejects, DeclinedNodesFallBackToAten) {
  // conv first, aten second: the uneven adaptive pool goes to aten, with conv's reason kept.
  Tensor x = random({2, 3, 7, 10}, 1);
  Built b = chain({{"aten::adaptive_avg_pool2d", {{"output_size", ints({3, 4})}}}}, {in(x)});
  auto model = load_graph(runtime("both"), std::move(b.graph));
  std::vector<switchyard::PlanEntry> plan = model->plan({x});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].backend, "aten");
  ASSERT_FALSE(plan[0].rejected.empty());
  EXPECT_EQ(plan[0].rejected[0].backend, "conv");
  EXPECT_TRUE(contains(plan[0].rejected[0].reason, "does not divide"));
  expect_close(model->run({x})[0],
               run_on("aten", {{"aten::adaptive_avg_pool2d", {{"output_size", ints({3, 4})}}}}, {in(x)}), "fallback");
}

TEST(ConvPluginRejects, UnsupportedConvolutions) {
  auto x = [] { return in(random({1, 4, 8, 8}, 1)); };
  auto w = [] { return weight(random({4, 4, 3, 3}, 2)); };
  ir::Attributes transposed = convolution_attrs({1, 1}, {0, 0}, {1, 1}, 1, true);
  for (auto& [name, value] : transposed)
    if (name == "transposed") value = integer(1);
  EXPECT_TRUE(contains(rejection("aten::_convolution", {x(), w(), std::nullopt}, transposed), "transposed"));
  EXPECT_TRUE(contains(rejection("aten::conv2d", {x(), w()}, {{"padding", text("same")}, {"stride", ints({2, 2})}}),
                       "stride 1"));
  EXPECT_TRUE(contains(rejection("aten::conv2d", {x(), w()}, {{"padding", text("full")}}), "padding='full'"));
  EXPECT_TRUE(contains(rejection("aten::conv2d", {x(), w()}, {{"bogus", integer(1)}}), "not understood"));
  // A weight given as an input (a constant one fixes the input's channels, which the host checks first).
  EXPECT_TRUE(contains(rejection("aten::conv2d", {x(), in(random({4, 3, 3, 3}, 2))}, {}), "channels"));
  EXPECT_TRUE(contains(rejection("aten::conv2d", {x(), weight(random({6, 1, 3, 3}, 2))}, {{"groups", integer(4)}}),
                       "divisible"));
  EXPECT_TRUE(contains(rejection("aten::conv2d", {in(random({1, 4, 2, 2}, 1)), w()}, {}), "smaller than the kernel"));
  EXPECT_TRUE(
      contains(rejection("aten::_convolution", {x(), w(), std::nullopt}, {{"stride", ints({1, 1})}}), "missing"));
  // A broadcast (stride 0) input cannot be described to oneDNN.
  Tensor one = random({1, 4, 1, 8}, 3);
  Tensor expanded = Tensor::from_blob(one.raw_data(), sytest::kF32, {1, 4, 8, 8}, {32, 8, 0, 1});
  expanded.keep_alive(one.owner());
  EXPECT_TRUE(contains(rejection("aten::conv2d", {in(expanded), w()}, {}), "broadcast"));
  // float64: the kernel lists float32 only.
  Tensor x64 = Tensor::empty({kDLFloat, 64, 1}, {1, 4, 8, 8});
  Tensor w64 = Tensor::empty({kDLFloat, 64, 1}, {4, 4, 3, 3});
  EXPECT_NE(rejection("aten::conv2d", {in(x64), weight(w64)}, {}), "");
}

TEST(ConvPluginRejects, UnsupportedFusedActivations) {
  std::vector<std::optional<Arg>> args = {in(random({1, 4, 8, 8}, 1)), weight(random({4, 4, 3, 3}, 2))};
  EXPECT_TRUE(
      contains(rejection("aten::conv2d+aten::gelu", args, {{"post.approximate", text("erf")}}), "approximate='erf'"));
  EXPECT_TRUE(contains(rejection("aten::conv2d+aten::relu", args, {{"post.inplace", integer(1)}}), "not understood"));
  EXPECT_TRUE(contains(
      rejection("aten::conv2d+aten::hardtanh", args, {{"post.min_val", number(2)}, {"post.max_val", number(1)}}),
      "min_val > max_val"));
}

TEST(ConvPluginRejects, OverlappingStridesAreDeclined) {
  // Sliding windows over one buffer (strides smaller than the sizes they step over):
  // oneDNN cannot describe them, so supports() says so instead of failing at run time.
  Tensor store = random({64}, 5);
  Tensor windows = Tensor::from_blob(store.raw_data(), sytest::kF32, {1, 4, 6, 6}, {0, 8, 4, 1});
  windows.keep_alive(store.owner());
  EXPECT_TRUE(contains(rejection("aten::conv2d", {in(windows), weight(random({3, 4, 3, 3}, 6))}, {}),
                       "cannot describe the input layout"));
  EXPECT_TRUE(contains(rejection("aten::max_pool2d", {in(windows)}, pool_attrs({2, 2}, {2, 2}, {0, 0})),
                       "cannot describe the input layout"));
}
