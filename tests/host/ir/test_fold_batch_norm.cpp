// ir::fold_batch_norm: an inference batch norm after a convolution becomes the
// convolution's weight and bias; anything it cannot prove safe is left alone.
#include "ir/fold_batch_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace switchyard;
using namespace switchyard::ir;

namespace {

Tensor filled(std::vector<int64_t> shape, float start, float step) {
  Tensor t = Tensor::empty(DLDataType{kDLFloat, 32, 1}, std::move(shape));
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = start + step * static_cast<float>(k);
  return t;
}

// x -> conv (2 output channels, bias) -> batch_norm -> relu; `extra_reader` also reads the
// convolution's output.
Graph conv_bn_graph(bool extra_reader = false, int64_t training = 0) {
  Graph g;
  const ValueId x = g.add_input("x", DLDataType{kDLFloat, 32, 1}, {1, 1, 3, 3});
  const ValueId w = g.add_constant("conv.weight", filled({2, 1, 1, 1}, 1.0f, 1.0f));
  const ValueId b = g.add_constant("conv.bias", filled({2}, 0.5f, 0.5f));
  const int32_t conv = g.add_node("conv", "aten::conv2d", {x, w, b}, {"conv_out"});
  const ValueId gamma = g.add_constant("bn.weight", filled({2}, 2.0f, 1.0f));
  const ValueId beta = g.add_constant("bn.bias", filled({2}, 0.1f, 0.1f));
  const ValueId mean = g.add_constant("bn.running_mean", filled({2}, 0.25f, 0.5f));
  const ValueId var = g.add_constant("bn.running_var", filled({2}, 3.0f, 1.0f));
  const ValueId mid = g.nodes[static_cast<size_t>(conv)].outputs[0];
  const int32_t bn = g.add_node("bn", "aten::batch_norm", {mid, gamma, beta, mean, var}, {"bn_out"},
                                {{"training", Attribute::of_int(training)}, {"eps", Attribute::of_float(1.0)}});
  const int32_t relu = g.add_node("relu", "aten::relu", {g.nodes[static_cast<size_t>(bn)].outputs[0]}, {"y"});
  g.outputs.push_back(g.nodes[static_cast<size_t>(relu)].outputs[0]);
  if (extra_reader) {
    const int32_t neg = g.add_node("neg", "aten::neg", {mid}, {"z"});
    g.outputs.push_back(g.nodes[static_cast<size_t>(neg)].outputs[0]);
  }
  validate(g);
  return g;
}

TEST(FoldBatchNorm, FoldsStatisticsIntoWeightAndBias) {
  Graph g = conv_bn_graph();
  ASSERT_EQ(fold_batch_norm(g), 1u);
  validate(g);
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.op, "aten::conv2d");
  EXPECT_EQ(g.values[static_cast<size_t>(conv.outputs[0])].name, "bn_out");  // the relu still reads it
  EXPECT_EQ(g.nodes[1].inputs[0], conv.outputs[0]);
  const Tensor w = g.values[static_cast<size_t>(conv.inputs[1])].constant;
  const Tensor b = g.values[static_cast<size_t>(conv.inputs[2])].constant;
  for (int c = 0; c < 2; ++c) {
    const double gamma = 2.0 + c, beta = 0.1 + 0.1 * c, mean = 0.25 + 0.5 * c, var = 3.0 + c, eps = 1.0;
    const double s = gamma / std::sqrt(var + eps);
    EXPECT_NEAR(w.data<float>()[c], (1.0 + c) * s, 1e-6);
    EXPECT_NEAR(b.data<float>()[c], ((0.5 + 0.5 * c) - mean) * s + beta, 1e-6);
  }
}

TEST(FoldBatchNorm, LeavesWhatItCannotProveSafe) {
  Graph shared = conv_bn_graph(/*extra_reader=*/true);  // the raw conv output is read elsewhere
  EXPECT_EQ(fold_batch_norm(shared), 0u);
  Graph training = conv_bn_graph(false, /*training=*/1);
  EXPECT_EQ(fold_batch_norm(training), 0u);
  Graph input_stats = conv_bn_graph();
  input_stats.nodes[1].inputs[3] = input_stats.inputs[0];  // statistics that are not constants
  EXPECT_EQ(fold_batch_norm(input_stats), 0u);
}

}  // namespace
