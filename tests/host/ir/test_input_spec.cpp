// Input specs: what each graph input's consumers fix about its shape, the symbolic shape
// shown to users, and the exact text when a run's input does not fit.
#include "ir/input_spec.hpp"
#include "ir_test_util.hpp"

using namespace switchyard;
using namespace switchyard::ir;
using namespace switchyard::ir::test;

namespace {

Tensor weight(std::vector<int64_t> shape) { return iota_tensor(std::move(shape), 0.0f); }

ValueId out(const Graph& g, int32_t node) { return g.nodes[static_cast<size_t>(node)].outputs[0]; }

// x -> conv (weight [8, 3, 3, 3]), as a trace records it (aten::_convolution: batched only)
Graph conv_net(int64_t groups = 1, std::vector<int64_t> w = {8, 3, 3, 3}, const char* op = "aten::_convolution") {
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  ValueId cw = g.add_constant("conv1.weight", weight(std::move(w)));
  g.add_node("conv1", op, {x, cw, kNoValue}, {"c"}, {{"groups", Attribute::of_int(groups)}});
  return g;
}

}  // namespace

TEST(InputSpec, ConvolutionFixesRankAndChannels) {
  Graph g = conv_net();
  derive_input_specs(g);
  const Value& x = g.values[static_cast<size_t>(g.inputs[0])];
  EXPECT_EQ(x.shape, (std::vector<int64_t>{-1, 3, -1, -1}));
  EXPECT_TRUE(x.rank_known);
  EXPECT_EQ(x.dim_names, (std::vector<std::string>{"B", "C", "H", "W"}));
  EXPECT_EQ(expected_shape(g, 0), "[B, 3, H, W]");
  EXPECT_EQ(check_input_shape(g, 0, {2, 3, 224, 224}), "");
  EXPECT_EQ(check_input_shape(g, 0, {1, 3, 7, 9}), "");
  EXPECT_EQ(check_input_shape(g, 0, {2, 4, 224, 224}),
            "input 'x' expects [B, 3, H, W] (dim 1 is fixed to 3 by conv1.weight), got [2, 4, 224, 224]");
  EXPECT_EQ(check_input_shape(g, 0, {3, 224, 224}),
            "input 'x' expects [B, 3, H, W] (4 dimensions, fixed by conv1.weight), got [3, 224, 224]");
}

TEST(InputSpec, GroupedAndTransposedConvolutions) {
  Graph grouped = conv_net(4, {8, 2, 3, 3});  // 4 groups of 2 input channels
  EXPECT_EQ(expected_shape(grouped, 0), "[B, 8, H, W]");
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  ValueId w = g.add_constant("up.weight", weight({16, 4, 2}));  // [C_in, C_out, k]
  g.add_node("up", "aten::_convolution", {x, w}, {"y"}, {{"transposed", Attribute::of_int(1)}});
  EXPECT_EQ(expected_shape(g, 0), "[B, 16, L]");
}

TEST(InputSpec, ConvNdAlsoTakesAnUnbatchedInput) {  // as torch.nn.functional.conv2d does
  Graph g = conv_net(1, {8, 3, 3, 3}, "aten::conv2d");
  EXPECT_EQ(check_input_shape(g, 0, {2, 3, 9, 9}), "");
  EXPECT_EQ(check_input_shape(g, 0, {3, 9, 9}), "");
  EXPECT_NE(check_input_shape(g, 0, {2, 4, 9, 9}).find("is fixed to 3 by conv1.weight"), std::string::npos);
  Graph t;
  ValueId x = t.add_input("x", kFloat32);
  ValueId w = t.add_constant("up.weight", weight({16, 4, 2}));
  t.add_node("up", "aten::conv_transpose1d", {x, w}, {"y"});
  EXPECT_EQ(check_input_shape(t, 0, {16, 5}), "");
  EXPECT_NE(check_input_shape(t, 0, {2, 15, 5}).find("is fixed to 16 by up.weight"), std::string::npos);
}

TEST(InputSpec, ThroughShapeKeepingOpsToALinearLayer) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  int32_t scaled = g.add_node("scale", "aten::mul", {x}, {"s"}, {{"other", Attribute::of_float(0.5)}});
  int32_t act = g.add_node("act", "aten::gelu", {out(g, scaled)}, {"a"});
  ValueId w = g.add_constant("fc.weight", weight({4, 768}));
  g.add_node("fc", "aten::linear", {out(g, act), w, kNoValue}, {"y"});
  derive_input_specs(g);
  EXPECT_TRUE(g.values[static_cast<size_t>(x)].shape.empty());  // any rank
  EXPECT_FALSE(g.values[static_cast<size_t>(x)].rank_known);
  EXPECT_EQ(expected_shape(g, 0), "[..., 768]");
  EXPECT_EQ(check_input_shape(g, 0, {2, 17, 768}), "");
  EXPECT_EQ(check_input_shape(g, 0, {768}), "");
  EXPECT_EQ(check_input_shape(g, 0, {2, 17, 512}),
            "input 'x' expects [..., 768] (dim 2 is fixed to 768 by fc.weight), got [2, 17, 512]");
  EXPECT_EQ(check_input_shape(g, 0, {}),
            "input 'x' expects [..., 768] (at least 1 dimension, since dim -1 is fixed to 768 by fc.weight), got []");
}

TEST(InputSpec, BroadcastingOpsStopTheWalk) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  ValueId bias = g.add_constant("bias", weight({5, 768}));
  int32_t add = g.add_node("add", "aten::add", {x, bias}, {"s"});  // x may broadcast against bias
  ValueId w = g.add_constant("fc.weight", weight({4, 768}));
  g.add_node("fc", "aten::linear", {out(g, add), w}, {"y"});
  EXPECT_EQ(expected_shape(g, 0), "[...]");
  EXPECT_EQ(check_input_shape(g, 0, {1}), "");
}

TEST(InputSpec, NormsFixTheirDims) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  ValueId lw = g.add_constant("norm.weight", weight({4, 6}));
  g.add_node("norm", "aten::layer_norm", {x, lw, kNoValue}, {"y"}, {{"normalized_shape", Attribute::of_ints({4, 6})}});
  ValueId m = g.add_input("m", kFloat32);
  ValueId mean = g.add_constant("bn.running_mean", weight({10}));
  g.add_node("bn", "aten::batch_norm", {m, kNoValue, kNoValue, mean, mean}, {"z"});
  EXPECT_EQ(expected_shape(g, 0), "[..., 4, 6]");
  EXPECT_EQ(check_input_shape(g, 0, {2, 9, 4, 6}), "");
  EXPECT_EQ(check_input_shape(g, 0, {2, 9, 6, 4}),
            "input 'x' expects [..., 4, 6] (dim 2 is fixed to 4 by norm.weight), got [2, 9, 6, 4]");
  EXPECT_EQ(check_input_shape(g, 1, {3, 10, 7}), "");
  EXPECT_EQ(check_input_shape(g, 1, {3, 9, 7}),
            "input 'm' expects [B, 10, ...] (dim 1 is fixed to 10 by bn.running_mean), got [3, 9, 7]");
  EXPECT_EQ(
      check_input_shape(g, 1, {3}),
      "input 'm' expects [B, 10, ...] (at least 2 dimensions, since dim 1 is fixed to 10 by bn.running_mean), got [3]");
}

TEST(InputSpec, RecurrentLayersFixRankFeaturesAndState) {
  Graph g;
  ValueId x = g.add_input("x", kFloat32);
  ValueId h0 = g.add_input("h0", kFloat32);
  ValueId w_ih = g.add_constant("gru.weight_ih_l0", weight({120, 24}));
  ValueId w_hh = g.add_constant("gru.weight_hh_l0", weight({120, 40}));
  g.add_node("gru", "aten::gru", {x, h0, w_ih, w_hh}, {"y", "h"},
             {{"has_biases", Attribute::of_int(0)},
              {"num_layers", Attribute::of_int(1)},
              {"bidirectional", Attribute::of_int(1)},
              {"batch_first", Attribute::of_int(0)}});
  derive_input_specs(g);
  EXPECT_EQ(expected_shape(g, 0), "[S, B, 24]");
  EXPECT_EQ(expected_shape(g, 1), "[2, B, 40]");
  EXPECT_EQ(check_input_shape(g, 1, {1, 3, 40}),
            "input 'h0' expects [2, B, 40] (dim 0 is fixed to 2 by gru), got [1, 3, 40]");
}

TEST(InputSpec, DeclaredShapesAreKept) {
  Graph g = conv_net();
  Value& x = g.values[static_cast<size_t>(g.inputs[0])];
  x.shape = {1, 3, 224, 224};  // a graph file that allows one shape only
  x.rank_known = true;
  derive_input_specs(g);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(expected_shape(g, 0), "[1, 3, 224, 224]");
  EXPECT_EQ(
      check_input_shape(g, 0, {2, 3, 224, 224}),
      "input 'x' expects [1, 3, 224, 224] (dim 0 is fixed to 1 by the model's declared shape), got [2, 3, 224, 224]");

  Graph ids;
  ValueId t = ids.add_input("ids", DLDataType{kDLInt, 64, 1});
  ids.values[static_cast<size_t>(t)].shape = {-1, -1};  // the importer saw `b, s = ids.shape`
  ids.values[static_cast<size_t>(t)].rank_known = true;
  derive_input_specs(ids);
  EXPECT_EQ(expected_shape(ids, 0), "[B, S]");
  EXPECT_EQ(check_input_shape(ids, 0, {2, 3, 4}),
            "input 'ids' expects [B, S] (2 dimensions as the model declares), got [2, 3, 4]");
  EXPECT_EQ(ids.values[static_cast<size_t>(t)].dim_names, (std::vector<std::string>{"B", "S"}));
}

TEST(InputSpec, ScalarInputAndUnusedInput) {
  Graph g;
  ValueId s = g.add_input("s", kFloat32);
  g.values[static_cast<size_t>(s)].rank_known = true;  // 0-D
  g.add_input("unused", kFloat32);
  EXPECT_EQ(expected_shape(g, 0), "[]");
  EXPECT_EQ(check_input_shape(g, 0, {}), "");
  EXPECT_EQ(check_input_shape(g, 0, {1}), "input 's' expects [] (0 dimensions as the model declares), got [1]");
  EXPECT_EQ(expected_shape(g, 1), "[...]");
  EXPECT_EQ(check_input_shape(g, 1, {5, 5}), "");
}
