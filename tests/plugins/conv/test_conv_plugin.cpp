// The conv plugin's convolutions against the aten reference plugin, node by node:
// conv1d / conv2d / convolution / _convolution, strided, padded (ints, "same", "valid"),
// dilated, grouped, depthwise, with and without bias, odd sizes, batch > 1, unbatched
// input, weights as constants and as graph inputs, non-contiguous inputs, shapes that
// change between runs, concurrent runs, and every fused activation.
// Pooling and the rejections are in test_pool_plugin.cpp.
#include "conv_test_util.hpp"

#include <limits>
#include <thread>

using namespace convtest;

namespace {

// conv2d of input [n, c, h, w] with weight [oc, c / groups, kh, kw] (constant) and bias.
void conv2d_case(const std::string& what, Shape x, Shape w, ir::Attributes attrs, bool bias = true,
                 const std::string& op = "aten::conv2d") {
  std::vector<std::optional<Arg>> args = {in(random(x, 1)), weight(random(w, 2, -0.5f, 0.5f))};
  if (bias) args.push_back(weight(random({w[0]}, 3)));
  compare(what, op, args, std::move(attrs));
}

}  // namespace

TEST(ConvPlugin, Conv2dBasicShapes) {
  conv2d_case("3x3 pad 1", {2, 8, 10, 10}, {16, 8, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
  conv2d_case("1x1", {3, 32, 7, 7}, {24, 32, 1, 1}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
  conv2d_case("odd sizes", {1, 5, 13, 17}, {7, 5, 3, 5}, conv_attrs({1, 1}, {0, 2}, {1, 1}, 1));
  conv2d_case("defaults only", {2, 3, 9, 11}, {4, 3, 2, 2}, {});
  conv2d_case("single-int lists", {2, 3, 9, 11}, {4, 3, 3, 3},
              {{"stride", integer(2)}, {"padding", integer(1)}, {"dilation", integer(1)}, {"groups", integer(1)}});
  conv2d_case("no bias (left off)", {2, 4, 8, 8}, {6, 4, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), false);
  compare("no bias (absent input)", "aten::conv2d",
          {in(random({2, 4, 8, 8}, 1)), weight(random({6, 4, 3, 3}, 2)), std::nullopt},
          conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
}

TEST(ConvPlugin, Conv2dStridedPaddedDilated) {
  conv2d_case("stride 2 pad 1", {2, 6, 15, 15}, {8, 6, 3, 3}, conv_attrs({2, 2}, {1, 1}, {1, 1}, 1));
  conv2d_case("stride (3, 2) pad (2, 0)", {1, 4, 17, 12}, {5, 4, 5, 3}, conv_attrs({3, 2}, {2, 0}, {1, 1}, 1));
  conv2d_case("dilation 2", {2, 4, 16, 16}, {8, 4, 3, 3}, conv_attrs({1, 1}, {2, 2}, {2, 2}, 1));
  conv2d_case("dilation (3, 1) stride 2", {1, 3, 20, 19}, {6, 3, 3, 3}, conv_attrs({2, 2}, {1, 1}, {3, 1}, 1));
  conv2d_case("kernel larger than stride, no padding", {1, 2, 7, 7}, {3, 2, 7, 7},
              conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
}

TEST(ConvPlugin, Conv2dGroupedAndDepthwise) {
  conv2d_case("groups 4", {2, 8, 9, 9}, {12, 2, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 4));
  conv2d_case("groups 2 strided", {3, 6, 11, 10}, {4, 3, 3, 3}, conv_attrs({2, 2}, {1, 1}, {1, 1}, 2));
  conv2d_case("depthwise 3x3", {2, 16, 14, 14}, {16, 1, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 16));
  conv2d_case("depthwise 5x5 stride 2", {1, 24, 15, 15}, {24, 1, 5, 5}, conv_attrs({2, 2}, {2, 2}, {1, 1}, 24));
  conv2d_case("depthwise multiplier 2", {2, 8, 10, 10}, {16, 1, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 8));
  conv2d_case("depthwise dilated", {1, 12, 13, 13}, {12, 1, 3, 3}, conv_attrs({1, 1}, {2, 2}, {2, 2}, 12));
}

TEST(ConvPlugin, Conv2dZooShapes) {
  // resnet stem, mobilenet's first layer, a vit patch embedding (16x16, stride 16).
  conv2d_case("7x7 stride 2 stem", {1, 3, 64, 64}, {16, 3, 7, 7}, convolution_attrs({2, 2}, {3, 3}, {1, 1}, 1, true),
              true, "aten::_convolution");
  conv2d_case("patch embedding", {2, 3, 64, 64}, {32, 3, 16, 16}, conv_attrs({16, 16}, {0, 0}, {1, 1}, 1));
  compare("_convolution as traced", "aten::_convolution",
          {in(random({2, 16, 12, 12}, 4)), weight(random({32, 16, 3, 3}, 5)), weight(random({32}, 6))},
          convolution_attrs({2, 2}, {1, 1}, {1, 1}, 1, true));
  compare("convolution", "aten::convolution",
          {in(random({2, 16, 12, 12}, 4)), weight(random({16, 1, 3, 3}, 5)), std::nullopt},
          convolution_attrs({1, 1}, {1, 1}, {1, 1}, 16, false));
}

TEST(ConvPlugin, PaddingStrings) {
  conv2d_case("same, odd kernel", {2, 4, 9, 10}, {6, 4, 3, 3}, {{"padding", text("same")}});
  conv2d_case("same, even kernel (extra padding at the end)", {1, 3, 8, 9}, {5, 3, 4, 2}, {{"padding", text("same")}});
  conv2d_case("same, dilated", {1, 3, 12, 11}, {4, 3, 3, 2}, {{"padding", text("same")}, {"dilation", ints({2, 3})}});
  conv2d_case("same, grouped", {2, 6, 7, 7}, {6, 2, 5, 5}, {{"padding", text("same")}, {"groups", integer(3)}});
  conv2d_case("valid", {2, 4, 9, 10}, {6, 4, 3, 4}, {{"padding", text("valid")}, {"stride", ints({2, 1})}});
}

TEST(ConvPlugin, Conv1d) {
  auto c1 = [](const std::string& what, Shape x, Shape w, ir::Attributes attrs) {
    compare(what, "aten::conv1d", {in(random(x, 7)), weight(random(w, 8)), weight(random({w[0]}, 9))},
            std::move(attrs));
  };
  c1("plain", {2, 4, 20}, {6, 4, 3}, {});
  c1("strided padded dilated", {3, 5, 31}, {7, 5, 4}, conv_attrs({2}, {3}, {2}, 1));
  c1("grouped", {2, 6, 17}, {9, 2, 3}, conv_attrs({1}, {1}, {1}, 3));
  c1("depthwise", {1, 8, 16}, {8, 1, 5}, conv_attrs({1}, {2}, {1}, 8));
  c1("same, even kernel", {2, 4, 15}, {4, 4, 4}, {{"padding", text("same")}});
  c1("valid", {2, 4, 15}, {4, 4, 4}, {{"padding", text("valid")}, {"stride", ints({3})}});
  c1("unbatched", {4, 19}, {5, 4, 3}, conv_attrs({1}, {1}, {1}, 1));
  compare("_convolution 1-d", "aten::_convolution",
          {in(random({2, 4, 21}, 1)), weight(random({3, 4, 5}, 2)), weight(random({3}, 3))},
          convolution_attrs({2}, {2}, {1}, 1, true));
}

TEST(ConvPlugin, UnbatchedConv2dAndConv3dThroughConvolution) {
  conv2d_case("unbatched conv2d", {4, 9, 8}, {6, 4, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
  compare("_convolution 3-d", "aten::_convolution",
          {in(random({2, 4, 6, 7, 5}, 1)), weight(random({6, 2, 3, 3, 2}, 2)), weight(random({6}, 3))},
          convolution_attrs({1, 2, 1}, {1, 1, 0}, {1, 1, 2}, 2, true));
}

TEST(ConvPlugin, WeightsAsGraphInputs) {
  // Weights and bias fed at run time: reordered per run, still correct.
  compare("weights and bias as inputs", "aten::conv2d",
          {in(random({2, 8, 10, 9}, 1)), in(random({12, 4, 3, 3}, 2)), in(random({12}, 3))},
          conv_attrs({2, 1}, {1, 0}, {1, 1}, 2));
  compare("weights as input, constant bias", "aten::conv2d",
          {in(random({1, 6, 8, 8}, 1)), in(random({6, 1, 3, 3}, 2)), weight(random({6}, 3))},
          conv_attrs({1, 1}, {1, 1}, {1, 1}, 6));
  compare("transposed weight view as input", "aten::conv2d",
          {in(random({2, 3, 9, 9}, 1)), in(transposed_view({4, 3, 3, 2}, 2)), in(random({4}, 3))}, {});
}

TEST(ConvPlugin, WeightsAsGraphInputsChangeBetweenRuns) {
  // The planning run hands the kernel its run-time weights with their data: they must
  // still be read anew on every later run, never kept as if constant.
  for (const bool pooled : {false, true}) {
    std::vector<Step> steps = {{"aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}, {"aten::relu", {}}};
    if (pooled) steps.push_back({"aten::max_pool2d", pool_attrs({3, 3}, {2, 2}, {1, 1})});
    const std::vector<std::optional<Arg>> args = {in(random({2, 4, 12, 12}, 1)), in(random({8, 4, 3, 3}, 2)),
                                                  in(random({8}, 3))};
    Built b = chain(steps, args), r = chain(steps, args);
    auto model = load_graph(runtime("conv"), std::move(b.graph));
    auto ref = load_graph(runtime("aten"), std::move(r.graph));
    for (const switchyard::PlanEntry& e : model->plan(b.feeds))
      EXPECT_NE(e.op, "aten::conv2d+aten::relu+aten::max_pool2d") << "the fused pool declines run-time weights";
    for (uint32_t seed = 10; seed < 40; seed += 10) {
      const std::vector<Tensor> feeds = {random({2, 4, 12, 12}, seed), random({8, 4, 3, 3}, seed + 1),
                                         random({8}, seed + 2)};
      expect_close(
          model->run(feeds)[0], ref->run(feeds)[0],
          std::string(pooled ? "conv, relu, pool" : "conv, relu") + ", weights from seed " + std::to_string(seed));
    }
  }
}

TEST(ConvPlugin, NonContiguousInputs) {
  compare("H and W swapped in memory", "aten::conv2d",
          {in(transposed_view({2, 4, 9, 7}, 1)), weight(random({5, 4, 3, 3}, 2)), weight(random({5}, 3))},
          conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
  compare("every other channel", "aten::conv2d",
          {in(channel_strided({2, 6, 8, 8}, 1)), weight(random({6, 1, 3, 3}, 2)), weight(random({6}, 3))},
          conv_attrs({2, 2}, {1, 1}, {1, 1}, 6));
  compare("strided bias", "aten::conv1d",
          {in(random({2, 3, 10}, 1)), weight(random({4, 3, 3}, 2)), in(strided_vector(4, 3))}, {});
}

TEST(ConvPlugin, EmptyBatch) {
  Tensor y = run_on("conv", {{"aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}},
                    {in(random({0, 3, 5, 5}, 1)), weight(random({4, 3, 3, 3}, 2)), weight(random({4}, 3))});
  EXPECT_EQ(y.shape(), (Shape{0, 4, 5, 5}));
}

TEST(ConvPlugin, ShapesChangeBetweenRuns) {
  // One model, several input shapes: a primitive per shape, the weights reordered once.
  Built b = chain({{"aten::conv2d", conv_attrs({2, 2}, {1, 1}, {1, 1}, 1)}},
                  {in(random({1, 4, 9, 9}, 1)), weight(random({8, 4, 3, 3}, 2)), weight(random({8}, 3))});
  Built r = chain({{"aten::conv2d", conv_attrs({2, 2}, {1, 1}, {1, 1}, 1)}},
                  {in(random({1, 4, 9, 9}, 1)), weight(random({8, 4, 3, 3}, 2)), weight(random({8}, 3))});
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  auto ref = load_graph(runtime("aten"), std::move(r.graph));
  uint32_t seed = 10;
  for (Shape x : {Shape{1, 4, 9, 9}, Shape{3, 4, 9, 9}, Shape{2, 4, 16, 5}, Shape{1, 4, 9, 9}}) {
    Tensor input = random(x, seed++);
    expect_close(model->run({input})[0], ref->run({input})[0], "input " + switchyard::shape_string(x));
  }
}

TEST(ConvPlugin, LayoutsChangeBetweenRuns) {
  // One shape, different strides from run to run: the kernel's memo of its last call
  // (keyed by shapes, strides and storages) must miss and lay the input out anew.
  Built b = chain({{"aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}},
                  {in(random({2, 6, 8, 7}, 1)), weight(random({5, 6, 3, 3}, 2)), weight(random({5}, 3))});
  Built r = chain({{"aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}},
                  {in(random({2, 6, 8, 7}, 1)), weight(random({5, 6, 3, 3}, 2)), weight(random({5}, 3))});
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  auto ref = load_graph(runtime("aten"), std::move(r.graph));
  const Shape x{2, 6, 8, 7};
  const std::vector<std::pair<std::string, Tensor>> inputs = {{"compact", random(x, 20)},
                                                              {"H and W swapped", transposed_view(x, 21)},
                                                              {"compact again", random(x, 22)},
                                                              {"every other channel", channel_strided(x, 23)},
                                                              {"H and W swapped again", transposed_view(x, 24)}};
  for (const auto& [what, input] : inputs) expect_close(model->run({input})[0], ref->run({input})[0], what);
}

TEST(ConvPlugin, ConcurrentRunsAgree) {
  Built b = chain({{"aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}},
                  {in(random({2, 8, 12, 12}, 1)), weight(random({16, 8, 3, 3}, 2)), weight(random({16}, 3))});
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  std::vector<Tensor> inputs;
  std::vector<std::vector<float>> expected;
  for (uint32_t i = 0; i < 4; ++i) {
    inputs.push_back(random({2, 8, 12, 12}, 100 + i));
    expected.push_back(sytest::values(model->run({inputs.back()})[0]));
  }
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      switchyard::RunContext ctx;
      for (int rep = 0; rep < 5; ++rep) got[t] = sytest::values(model->run({inputs[t]}, ctx)[0]);
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(got[t], expected[t]) << "thread " << t;
}

// ---- fused activations: "<conv>+<activation>" against conv then the activation on aten ----

namespace {

void fused_case(const std::string& producer, const std::string& consumer, ir::Attributes consumer_attrs,
                Shape x = {2, 6, 11, 9}, Shape w = {8, 6, 3, 3},
                ir::Attributes attrs = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)) {
  SCOPED_TRACE(producer + "+" + consumer);
  std::vector<std::optional<Arg>> args = {in(random(x, 1, -2.f, 2.f)), weight(random(w, 2, -0.5f, 0.5f)),
                                          weight(random({w[0]}, 3, -2.f, 2.f))};
  ir::Attributes fused = attrs;
  for (const auto& [name, value] : consumer_attrs) fused.push_back({"post." + name, value});
  Tensor ref = run_on("aten", {{producer, attrs}, {consumer, consumer_attrs}}, args);
  Tensor got = run_on("conv", {{producer + "+" + consumer, fused}}, args);
  expect_close(got, ref, producer + "+" + consumer);
}

}  // namespace

TEST(ConvPlugin, FusedActivations) {
  fused_case("aten::conv2d", "aten::relu", {});
  fused_case("aten::conv2d", "aten::hardswish", {});
  fused_case("aten::conv2d", "aten::hardsigmoid", {});
  fused_case("aten::conv2d", "aten::silu", {});
  fused_case("aten::conv2d", "aten::gelu", {});
  fused_case("aten::conv2d", "aten::gelu", {{"approximate", text("tanh")}});
  fused_case("aten::conv2d", "aten::gelu", {{"approximate", text("none")}});
  fused_case("aten::conv2d", "aten::sigmoid", {});
  fused_case("aten::conv2d", "aten::tanh", {});
  fused_case("aten::conv2d", "aten::relu6", {});
  fused_case("aten::conv2d", "aten::hardtanh", {});
  fused_case("aten::conv2d", "aten::hardtanh", {{"min_val", number(-0.5)}, {"max_val", integer(2)}});
  fused_case("aten::conv2d", "aten::leaky_relu", {});
  fused_case("aten::conv2d", "aten::leaky_relu", {{"negative_slope", number(0.2)}});
}

TEST(ConvPlugin, FusedActivationOnEveryProducer) {
  fused_case("aten::_convolution", "aten::relu", {}, {1, 16, 10, 10}, {16, 1, 3, 3},
             convolution_attrs({2, 2}, {1, 1}, {1, 1}, 16, true));
  fused_case("aten::_convolution", "aten::hardswish", {}, {2, 8, 9, 9}, {16, 8, 1, 1},
             convolution_attrs({1, 1}, {0, 0}, {1, 1}, 1, true));
  fused_case("aten::_convolution", "aten::hardsigmoid", {}, {2, 8, 1, 1}, {4, 8, 1, 1},
             convolution_attrs({1, 1}, {0, 0}, {1, 1}, 1, true));
  fused_case("aten::convolution", "aten::silu", {}, {2, 4, 8, 8}, {4, 2, 3, 3},
             convolution_attrs({1, 1}, {1, 1}, {1, 1}, 2, false));
  fused_case("aten::conv1d", "aten::gelu", {}, {2, 4, 13}, {6, 4, 3}, conv_attrs({2}, {1}, {1}, 1));
  fused_case("aten::conv2d", "aten::relu", {}, {3, 6, 11, 9}, {6, 3, 3, 3},
             {{"padding", text("same")}, {"groups", integer(2)}});
}

TEST(ConvPlugin, FusedActivationsKeepNaNAsAtenDoes) {
  // oneDNN's relu and clip post-ops turn NaN into a number; ATen keeps it, so must we.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = random({2, 3, 7, 6}, 1, -2.f, 2.f);
  x.data<float>()[10] = nan;
  x.data<float>()[100] = inf;
  x.data<float>()[150] = -inf;
  Tensor w = random({4, 3, 3, 3}, 2), b = random({4}, 3);
  Tensor w_inf = random({4, 3, 3, 3}, 2);
  w_inf.data<float>()[5] = inf;
  const ir::Attributes conv = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
  for (const char* act : {"aten::relu", "aten::relu6", "aten::hardtanh", "aten::hardsigmoid", "aten::leaky_relu",
                          "aten::hardswish", "aten::silu", "aten::gelu", "aten::sigmoid", "aten::tanh"}) {
    SCOPED_TRACE(act);
    for (const auto& args : std::vector<std::vector<std::optional<Arg>>>{
             {in(x), weight(w), weight(b)},                            // NaN and infinities in the input
             {in(random({2, 3, 7, 6}, 4)), weight(w_inf), weight(b)},  // an infinite constant weight
             {in(x), in(w), in(b)}}) {                                 // weights fed at run time
      Tensor ref = run_on("aten", {{"aten::conv2d", conv}, {act, {}}}, args);
      Tensor got = run_on("conv", {{std::string("aten::conv2d+") + act, conv}}, args);
      expect_close(got, ref, act);
    }
  }
}

TEST(ConvPlugin, AReluAfterAWideInputKeepsNaNWithoutAScan) {
  // A convolution reading at least twice the bytes it writes runs bare, and relu follows by
  // the plugin's loop (split_epilogue.cpp), which keeps NaN: 1x1 convolutions to a quarter
  // of the channels (one large enough to run in two batch chunks) and a stride-2
  // depthwise one; a NaN anywhere, or none.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Variant {
    std::string what;
    Shape x, w;
    ir::Attributes attrs;
  };
  const std::vector<Variant> variants = {
      {"1x1, 32 -> 8 channels", {3, 32, 20, 21}, {8, 32, 1, 1}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1)},
      {"depthwise 3x3, stride 2", {2, 16, 30, 30}, {16, 1, 3, 3}, conv_attrs({2, 2}, {1, 1}, {1, 1}, 16)},
      {"1x1, 128 -> 32 channels, batch 6 (4.9 MB out: two chunks of 3)",
       {6, 128, 80, 80},
       {32, 128, 1, 1},
       conv_attrs({1, 1}, {0, 0}, {1, 1}, 1)}};
  for (const Variant& v : variants) {
    int64_t numel = 1;
    for (int64_t d : v.x) numel *= d;
    for (int64_t at : {int64_t{-1}, int64_t{0}, numel / 2 + 7, numel - 1}) {
      Tensor x = random(v.x, 4, -2.f, 2.f);
      if (at >= 0) x.data<float>()[at] = nan;
      const std::vector<std::optional<Arg>> args = {in(x), weight(random(v.w, 5)), weight(random({v.w[0]}, 6))};
      Tensor ref = run_on("aten", {{"aten::conv2d", v.attrs}, {"aten::relu", {}}}, args);
      size_t nans = 0;
      for (float r : sytest::values(ref)) nans += std::isnan(r) ? 1 : 0;
      const std::string what = v.what + ", NaN at " + std::to_string(at);
      EXPECT_EQ(nans > 0, at >= 0) << what;
      Built b = chain({{"aten::conv2d+aten::relu", v.attrs}}, args);
      auto model = load_graph(runtime("conv"), std::move(b.graph));
      expect_runs_close(*model, b.feeds, ref, what);
    }
  }
}

TEST(ConvPlugin, ANaNOrAnOverflowPassesThroughABottleneckAsInAten) {
  // A bottleneck: a 1x1 convolution to a quarter of the channels runs bare with relu by
  // the plugin's loop; the 3x3 convolution with relu after it scans that value (in the
  // plugin's storage from the second run) before oneDNN's relu could turn NaN into 0. A
  // NaN, or an infinity from overflow, must reach ATen's result through both, every run.
  const ir::Attributes reduce = conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), conv3 = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
  Tensor w1 = random({8, 32, 1, 1}, 2), b1 = random({8}, 3), w2 = random({8, 8, 3, 3}, 4), b2 = random({8}, 5);
  for (const std::string& where : {"none", "NaN", "overflow"}) {
    Tensor x = random({2, 32, 14, 15}, 1, -2.f, 2.f);
    if (where == "NaN") x.data<float>()[777] = std::numeric_limits<float>::quiet_NaN();
    if (where == "overflow")  // one pixel, every channel: its sums overflow to infinity
      for (int64_t c = 0; c < 32; ++c) x.data<float>()[c * 14 * 15 + 15 * 3 + 4] = 3e38f;
    auto graph = [&](bool fused) {
      ir::Graph g;
      const ir::ValueId in = g.add_input("x", sytest::kF32);
      g.add_node("reduce", fused ? "aten::conv2d+aten::relu" : "aten::conv2d",
                 {in, g.add_constant("w1", w1), g.add_constant("b1", b1)}, {"r"}, reduce);
      ir::ValueId h = g.find_value("r");
      if (!fused) {
        g.add_node("relu1", "aten::relu", {h}, {"r1"});
        h = g.find_value("r1");
      }
      g.add_node("conv", fused ? "aten::conv2d+aten::relu" : "aten::conv2d",
                 {h, g.add_constant("w2", w2), g.add_constant("b2", b2)}, {"c"}, conv3);
      h = g.find_value("c");
      if (!fused) {
        g.add_node("relu2", "aten::relu", {h}, {"y"});
        h = g.find_value("y");
      }
      g.outputs = {h};
      return g;
    };
    Tensor ref = load_graph(runtime("aten"), graph(false))->run({x})[0];
    size_t odd = 0;
    for (float v : sytest::values(ref)) odd += std::isfinite(v) ? 0 : 1;
    EXPECT_EQ(odd > 0, where != "none") << where << ": the reference carries it";
    auto model = load_graph(runtime("conv"), graph(true));
    for (int run = 0; run < 3; ++run) expect_close(model->run({x})[0], ref, where + ", run " + std::to_string(run));
  }
}

TEST(ConvPlugin, OnlyAnInputThatReachesEveryOutputIsVouchedFor) {
  // A relu loop that saw its convolution's output finite vouches for the input too when
  // every input element reaches the output (1x1, stride 1): the input's next guarded reader
  // then skips its NaN scan (finite_memo.hpp). A stride-2 1x1 convolution skips every
  // other pixel, so a NaN there must still be found by the 3x3 convolution reading the
  // same value. A NaN at a pixel both read is found either way.
  const ir::Attributes one = conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), three = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
  for (const bool strided : {true, false})
    for (const int64_t pixel : {int64_t{1 * 14 + 1}, int64_t{2 * 14 + 2}}) {  // skipped by stride 2, or not
      Tensor input = random({2, 32, 14, 14}, 1, -2.f, 2.f);
      for (int64_t c = 0; c < 32; ++c)
        input.data<float>()[c * 14 * 14 + pixel] = std::numeric_limits<float>::quiet_NaN();
      auto graph = [&](bool fused) {
        ir::Graph g;
        uint32_t seed = 40;
        auto constant = [&](Shape shape) {
          return g.add_constant("k" + std::to_string(seed), random(shape, seed++, -0.3f, 0.3f));
        };
        const ir::ValueId in = g.add_input("input", sytest::kF32);
        // x: a 1x1 convolution's output, in the plugin's storage, NaN at the same pixel.
        g.add_node("mix", "aten::conv2d", {in, constant({32, 32, 1, 1}), constant({32})}, {"x"}, one);
        const ir::ValueId x = g.find_value("x");
        ir::Attributes reduce = conv_attrs({strided ? 2 : 1, strided ? 2 : 1}, {0, 0}, {1, 1}, 1);
        auto conv_relu = [&](const std::string& name, ir::ValueId from, Shape w, const ir::Attributes& attrs) {
          g.add_node(name, fused ? "aten::conv2d+aten::relu" : "aten::conv2d", {from, constant(w), constant({w[0]})},
                     {name}, attrs);
          if (fused) return g.find_value(name);
          g.add_node(name + ".relu", "aten::relu", {g.find_value(name)}, {name + ".r"});
          return g.find_value(name + ".r");
        };
        const ir::ValueId a = conv_relu("reduce", x, {8, 32, 1, 1}, reduce);   // runs first: bare, then the relu loop
        const ir::ValueId b = conv_relu("guarded", x, {32, 32, 3, 3}, three);  // as many channels out as in: guarded
        g.outputs = {a, b};
        return g;
      };
      const std::vector<Tensor> ref = load_graph(runtime("aten"), graph(false))->run({input});
      auto model = load_graph(runtime("conv"), graph(true));
      const std::string what =
          std::string(strided ? "stride 2" : "stride 1") + ", NaN at pixel " + std::to_string(pixel);
      for (int run = 0; run < 3; ++run) {
        const std::vector<Tensor> got = model->run({input});
        expect_close(got[0], ref[0], what + ", the reduce, run " + std::to_string(run));
        expect_close(got[1], ref[1], what + ", the guarded 3x3, run " + std::to_string(run));
      }
    }
}

TEST(ConvPlugin, ANaNInALargeInputIsFoundWhereverItLies) {
  // Inputs of 2^17 floats and more are scanned for NaN in chunks across threads: a NaN in
  // the first chunk, in the last (shorter) chunk, or in none must each give ATen's result.
  // As many channels out as in: the guarded path (a wider input runs split, below).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Shape shape{1, 8, 130, 131};  // 136240 floats: two full chunks of 65536 and a part
  const int64_t n = 8 * 130 * 131;
  const ir::Attributes conv = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
  Tensor w = random({8, 8, 3, 3}, 2), b = random({8}, 3);
  for (int64_t at : {int64_t{-1}, int64_t{17}, int64_t{65536 + 5}, n - 3}) {
    Tensor x = random(shape, 1, -2.f, 2.f);
    if (at >= 0) x.data<float>()[at] = nan;
    const std::vector<std::optional<Arg>> args = {in(x), weight(w), weight(b)};
    Tensor ref = run_on("aten", {{"aten::conv2d", conv}, {"aten::relu", {}}}, args);
    Tensor got = run_on("conv", {{"aten::conv2d+aten::relu", conv}}, args);
    size_t nans = 0;
    for (float v : sytest::values(ref)) nans += std::isnan(v) ? 1 : 0;
    EXPECT_EQ(nans > 0, at >= 0) << "NaN at " << at;
    expect_close(got, ref, "NaN at " + std::to_string(at));
  }
}
