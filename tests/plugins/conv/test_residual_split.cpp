// A residual tail whose output outgrows the cache (16 MiB and up, 6 MiB and up for a 1x1
// tail like these) runs split: the bare convolution a batch chunk at a time into scratch,
// then relu(conv + alpha * residual) by the plugin's own loop (plugins/conv/split_epilogue.cpp). Results equal the aten plugin
// running conv, add and relu apart, NaN included, whether the residual is another
// convolution's output in the plugin's nhwc storage (written over in place) or a plain
// host tensor from aten.
#include "conv_test_util.hpp"

#include <limits>

using namespace convtest;

namespace {

// y = [relu](conv1x1(x) + alpha * r) over [batch, 64 -> 256, 56, 56] (25.7 MB at batch 8),
// then a 1x1 convolution to 32 channels. The residual r is conv1x1(x2) (the conv plugin's
// storage) or relu(x2) (aten, plain).
ir::Graph tail(bool residual_from_conv, bool relu, double alpha) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", sytest::kF32), x2 = g.add_input("x2", sytest::kF32);
  const ir::ValueId w = g.add_constant("w", random({256, 64, 1, 1}, 51, -0.2f, 0.2f));
  const ir::ValueId b = g.add_constant("b", random({256}, 52));
  if (residual_from_conv) {
    const ir::ValueId wr = g.add_constant("wr", random({256, 64, 1, 1}, 53, -0.2f, 0.2f));
    g.add_node("residual", "aten::conv2d", {x2, wr, b}, {"r"}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
  } else {
    g.add_node("residual", "aten::relu", {x2}, {"r"});
  }
  g.add_node("conv", "aten::conv2d", {x, w, b}, {"c"}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
  g.add_node("add", "aten::add", {g.find_value("c"), g.find_value("r")}, {relu ? "sum" : "y"},
             {{"alpha", ir::Attribute::of_float(alpha)}});
  if (relu) g.add_node("relu", "aten::relu", {g.find_value("sum")}, {"y"});
  g.outputs = {g.find_value("y")};
  if (!residual_from_conv) return g;
  // A convolution reads the tail, as the next block would: y stays in the conv storage.
  const ir::ValueId wh = g.add_constant("wh", random({32, 256, 1, 1}, 56, -0.2f, 0.2f));
  g.add_node("head", "aten::conv2d", {g.find_value("y"), wh, ir::kNoValue}, {"out"},
             conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
  g.outputs = {g.find_value("out")};
  return g;
}

void expect_split_tail_matches_aten(bool residual_from_conv, bool relu, double alpha, int64_t batch, bool nan) {
  const std::string what = std::string(residual_from_conv ? "conv" : "plain") + " residual, " +
                           (relu ? "relu, " : "no relu, ") + "alpha " + std::to_string(alpha) + ", batch " +
                           std::to_string(batch) + (nan ? ", NaN and inf inputs" : "");
  Tensor x = random({batch, 64, 56, 56}, 54);
  Tensor x2 = random({batch, residual_from_conv ? 64 : 256, 56, 56}, 55);
  if (nan) {  // one pixel of x (every output channel there), one element of x2, one infinity
    x.data<float>()[56 * 56 * 64 * (batch - 1) + 77] = std::numeric_limits<float>::quiet_NaN();
    x2.data<float>()[1234] = std::numeric_limits<float>::quiet_NaN();
    x2.data<float>()[4321] = std::numeric_limits<float>::infinity();
  }
  Tensor ref = load_graph(runtime("aten"), tail(residual_from_conv, relu, alpha))->run({x, x2})[0];
  auto model = load_graph(runtime("both"), tail(residual_from_conv, relu, alpha));
  size_t tails = 0;
  const std::string fused = relu ? "aten::conv2d+aten::add+aten::relu" : "aten::conv2d+aten::add";
  for (const switchyard::PlanEntry& e : model->plan({x, x2})) tails += e.op == fused && e.backend == "conv";
  EXPECT_EQ(tails, 1u) << what;
  // The tail writes over its residual: in the conv plugin's nhwc storage, or plain.
  std::string placement = "(not in the memory plan)";
  for (const switchyard::MemoryValue& v : model->memory_plan({x, x2}).values)
    if (v.value == "y") placement = v.placement;
  EXPECT_EQ(placement, residual_from_conv ? "view of r (conv/nhwc)" : "view of r") << what;
  expect_runs_close(*model, {x, x2}, ref, what);
  if (nan) {
    size_t nans = 0;
    for (float v : sytest::values(ref)) nans += std::isnan(v) ? 1 : 0;
    EXPECT_GE(nans, residual_from_conv ? 32u : 256u) << what << ": the NaN pixel reaches every channel";
  }
}

}  // namespace

TEST(ResidualSplit, ConvResidualInStorageMatchesAten) {
  expect_split_tail_matches_aten(true, true, 1.0, 8, false);
  expect_split_tail_matches_aten(true, true, 1.0, 8, true);
}

TEST(ResidualSplit, PlainResidualAlphaAndBatchOfSixMatchAten) {
  expect_split_tail_matches_aten(false, true, 0.5, 6, true);  // 18.4 MiB: six one-image chunks
  expect_split_tail_matches_aten(false, false, 1.0, 8, true);
}

TEST(ResidualSplit, AThinTailFromSixMiBRunsSplitAndMatchesAten) {
  expect_split_tail_matches_aten(true, true, 1.0, 2, true);  // 6.4 MB: two one-image chunks
}

TEST(ResidualSplit, ASmallTailStaysFusedAndMatchesAten) {
  expect_split_tail_matches_aten(true, true, 1.0, 1, true);  // 3.2 MB: oneDNN's sum post-op
}
