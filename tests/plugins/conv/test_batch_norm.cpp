// The conv plugin's inference batch norm (aten::batch_norm, and + aten::relu) against the
// aten reference plugin; what it declines, with the reasons it gives; and that a batch norm
// with a relu between a plain producer and a convolution hands the convolution nhwc
// (DenseNet's norm1 + relu1 after a concat), or reads a convolution's own layout.
#include "conv_test_util.hpp"

#include <limits>
#include <map>

using namespace convtest;
using switchyard::StoredValue;

namespace {

ir::Attributes bn_attrs(int64_t training = 0, double eps = 1e-5) {
  return {
      {"training", integer(training)}, {"momentum", number(0.1)}, {"eps", number(eps)}, {"cudnn_enabled", integer(1)}};
}

// input, weight, bias, running mean, running variance; `constant`: the four after the input.
std::vector<std::optional<Arg>> bn_args(Tensor x, bool weight_and_bias, bool constant, uint32_t seed) {
  const int64_t c = x.shape()[1];
  auto arg = [&](Tensor t) { return constant ? convtest::weight(std::move(t)) : in(std::move(t)); };
  std::vector<std::optional<Arg>> args = {in(std::move(x))};
  args.push_back(weight_and_bias ? std::optional<Arg>(arg(random({c}, seed, -1.5f, 1.5f))) : std::nullopt);
  args.push_back(weight_and_bias ? std::optional<Arg>(arg(random({c}, seed + 1))) : std::nullopt);
  args.push_back(arg(random({c}, seed + 2)));
  args.push_back(arg(random({c}, seed + 3, 0.1f, 2.f)));
  return args;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not mention '" << part << "'";
}

}  // namespace

TEST(ConvPluginBatchNorm, MatchesAten) {
  for (const std::string op : {"aten::batch_norm", "aten::batch_norm+aten::relu"}) {
    // The fused op on aten runs as its two nodes.
    auto check = [&](const std::string& what, std::vector<std::optional<Arg>> args, ir::Attributes attrs) {
      SCOPED_TRACE(op + ": " + what);
      std::vector<Step> ref_steps = {{"aten::batch_norm", attrs}};
      if (op != "aten::batch_norm") ref_steps.push_back({"aten::relu", {}});
      Tensor ref = run_on("aten", ref_steps, args);
      Tensor got = run_on("conv", {{op, attrs}}, args);
      expect_close(got, ref, op + ": " + what);
    };
    check("constant statistics", bn_args(random({2, 24, 9, 7}, 1, -3.f, 3.f), true, true, 10), bn_attrs());
    check("run-time statistics", bn_args(random({2, 24, 9, 7}, 2, -3.f, 3.f), true, false, 20), bn_attrs());
    check("no weight or bias, eps 0.1", bn_args(random({3, 5, 4, 6}, 3, -3.f, 3.f), false, true, 30), bn_attrs(0, 0.1));
    check("[N, C]", bn_args(random({6, 40}, 4, -3.f, 3.f), true, true, 40), bn_attrs());
    check("[N, C, L]", bn_args(random({2, 7, 19}, 5, -3.f, 3.f), true, false, 50), bn_attrs());
    check("channels strided", bn_args(channel_strided({2, 6, 5, 5}, 6), true, true, 60), bn_attrs());
    Tensor x = random({2, 16, 6, 6}, 7, -3.f, 3.f);
    x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[77] = -std::numeric_limits<float>::infinity();
    check("NaN and -inf", bn_args(x, true, true, 70), bn_attrs());
  }
}

TEST(ConvPluginRejects, BatchNormDeclines) {
  Tensor x = random({2, 4, 5, 5}, 1);
  EXPECT_TRUE(contains(rejection("aten::batch_norm", bn_args(x, true, true, 1), bn_attrs(1)), "training=True"));
  Tensor x64 = Tensor::uninitialized(DLDataType{kDLFloat, 64, 1}, {2, 4, 5, 5});
  for (int64_t i = 0; i < x64.numel(); ++i) x64.data<double>()[i] = 0.25 * static_cast<double>(i % 7);
  std::vector<std::optional<Arg>> args = bn_args(x, true, true, 1);
  args[0] = in(x64);
  EXPECT_TRUE(contains(rejection("aten::batch_norm", args, bn_attrs()), "float32"));
  args = bn_args(x, true, true, 1);
  args[3] = std::nullopt;
  args[4] = std::nullopt;
  EXPECT_TRUE(contains(rejection("aten::batch_norm", args, bn_attrs()), "running statistics"));
  args = bn_args(x, true, true, 1);
  args[4] = weight(random({3}, 2, 0.1f, 1.f));
  EXPECT_TRUE(contains(rejection("aten::batch_norm", args, bn_attrs()), "does not match"));
}

namespace {
// x -> batch_norm + relu (constant statistics) -> conv2d 1x1 -> conv2d 3x3, as a DenseNet
// layer after its concat; with `conv_first`, a convolution before the batch norm too, and
// the norm's statistics graph inputs (so the host does not fold it into the convolution).
struct DenseLayer {
  ir::Graph graph;
  std::vector<Tensor> feeds;
};
DenseLayer dense_layer(bool fused, bool conv_first) {
  DenseLayer d;
  ir::Graph& g = d.graph;
  uint32_t seed = 50;
  const int64_t c = 40;
  ir::ValueId x = g.add_input("x", sytest::kF32);
  d.feeds.push_back(random({2, c, 12, 12}, 1, -2.f, 2.f));
  auto conv = [&](const std::string& name, ir::ValueId in, int64_t oc, int64_t ic, int64_t k) {
    g.add_node(name, "aten::conv2d",
               {in, g.add_constant(name + ".w", random({oc, ic, k, k}, seed++, -0.3f, 0.3f)),
                g.add_constant(name + ".b", random({oc}, seed++))},
               {name}, conv_attrs({1, 1}, {k / 2, k / 2}, {1, 1}, 1));
    return g.find_value(name);
  };
  if (conv_first) x = conv("conv0", x, c, c, 3);
  std::vector<ir::ValueId> stats;
  for (const char* name : {"weight", "bias", "mean", "var"}) {
    Tensor t = std::string(name) == "var" ? random({c}, seed++, 0.1f, 2.f) : random({c}, seed++);
    if (conv_first) {
      stats.push_back(g.add_input(std::string("norm.") + name, sytest::kF32));
      d.feeds.push_back(t);
    } else {
      stats.push_back(g.add_constant(std::string("norm.") + name, t));
    }
  }
  const std::vector<ir::ValueId> bn_in = {x, stats[0], stats[1], stats[2], stats[3]};
  if (fused) {
    g.add_node("norm", "aten::batch_norm+aten::relu", bn_in, {"norm"}, bn_attrs());
  } else {
    g.add_node("norm_only", "aten::batch_norm", bn_in, {"norm_only"}, bn_attrs());
    g.add_node("norm", "aten::relu", {g.find_value("norm_only")}, {"norm"});
  }
  g.outputs = {conv("conv2", conv("conv1", g.find_value("norm"), 32, c, 1), 16, 32, 3)};
  return d;
}
}  // namespace

TEST(ConvLayouts, BatchNormWithReluHandsTheConvolutionItsLayout) {
  for (const bool conv_first : {false, true}) {
    const std::string what = conv_first ? "conv -> norm + relu -> convs" : "input -> norm + relu -> convs";
    DenseLayer ref_graph = dense_layer(false, conv_first);
    Tensor ref = load_graph(runtime("aten"), std::move(ref_graph.graph))->run(ref_graph.feeds)[0];
    DenseLayer d = dense_layer(true, conv_first);
    std::vector<Tensor> feeds = d.feeds;
    auto model = load_graph(runtime("conv"), std::move(d.graph));
    expect_runs_close(*model, feeds, ref, what);
    std::map<std::string, std::string> kept;
    for (const StoredValue& v : model->stored_values(feeds)) kept[v.value] = v.storage;
    EXPECT_EQ(kept["norm"], "conv/nhwc") << what << ": the normalised activation conv1 reads";
    if (conv_first)
      EXPECT_TRUE(kept["conv0"] == "conv/nhwc" || kept["conv0"] == "conv/nChw16c")
          << what << ": the activation the norm reads is in '" << kept["conv0"] << "'";
  }
}
