// ir::recognise_patterns: a trace's decomposed RMSNorm becomes one switchyard::rms_norm node
// where a plugin offers it; anything it cannot prove the same is left alone.
#include "ir/patterns.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace switchyard;
using namespace switchyard::ir;

namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};

Tensor filled(std::vector<int64_t> shape, float value) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = value;
  return t;
}

struct Variant {
  int64_t exponent = 2;
  std::vector<int64_t> dim{-1};
  bool extra_reader = false;  // the rsqrt's output is also a graph output
  bool weight_first = true;   // weight * normed, as LlamaRMSNorm writes it
};

// x -> pow -> mean -> add(eps) -> rsqrt -> mul(x, .) -> mul(weight, .) -> y
Graph rms_norm_graph(const Variant& v = {}) {
  Graph g;
  const ValueId x = g.add_input("x", kF32, {-1, 8});
  const ValueId eps = g.add_constant("norm.eps", filled({}, 1e-6f));
  const ValueId w = g.add_constant("norm.weight", filled({8}, 0.5f));
  auto out = [&](int32_t node) { return g.nodes[static_cast<size_t>(node)].outputs[0]; };
  const ValueId p =
      out(g.add_node("norm.pow", "aten::pow", {x}, {"p"}, {{"exponent", Attribute::of_int(v.exponent)}}, "norm"));
  const ValueId m = out(g.add_node("norm.mean", "aten::mean", {p}, {"m"},
                                   {{"dim", Attribute::of_ints(v.dim)}, {"keepdim", Attribute::of_int(1)}}, "norm"));
  const ValueId a =
      out(g.add_node("norm.add", "aten::add", {m, eps}, {"a"}, {{"alpha", Attribute::of_int(1)}}, "norm"));
  const ValueId r = out(g.add_node("norm.rsqrt", "aten::rsqrt", {a}, {"r"}, {}, "norm"));
  const ValueId s = out(g.add_node("norm.mul", "aten::mul", {x, r}, {"s"}, {}, "norm"));
  const std::vector<ValueId> last = v.weight_first ? std::vector<ValueId>{w, s} : std::vector<ValueId>{s, w};
  g.outputs.push_back(out(g.add_node("norm.mul_1", "aten::mul", last, {"y"}, {}, "norm")));
  if (v.extra_reader) g.outputs.push_back(r);
  validate(g);
  return g;
}

bool offered(const Node&) { return true; }

}  // namespace

TEST(Patterns, RmsNormBecomesOneNode) {
  for (bool weight_first : {true, false}) {
    Graph g = rms_norm_graph({2, {-1}, false, weight_first});
    EXPECT_EQ(recognise_patterns(g, offered), 1u);
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node& n = g.nodes[0];
    EXPECT_EQ(n.op, kRmsNormOp);
    EXPECT_EQ(n.name, "norm.mul_1");
    EXPECT_EQ(n.module_path, "norm");
    ASSERT_EQ(n.inputs.size(), 2u);
    EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "x");
    EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[1])].name, "norm.weight");
    ASSERT_EQ(n.attrs.size(), 1u);
    EXPECT_EQ(n.attrs[0].first, "eps");
    EXPECT_FLOAT_EQ(static_cast<float>(n.attrs[0].second.f), 1e-6f);
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].producer, 0) << "the node makes y";
    validate(g);
  }
}

TEST(Patterns, LeavesWhatItCannotProve) {
  Graph cube = rms_norm_graph({3});  // pow(x, 3): not a mean square
  EXPECT_EQ(recognise_patterns(cube, offered), 0u);
  EXPECT_EQ(cube.nodes.size(), 6u);
  Graph first_dim = rms_norm_graph({2, {0}});  // the mean over another dim
  EXPECT_EQ(recognise_patterns(first_dim, offered), 0u);
  Graph read_elsewhere = rms_norm_graph({2, {-1}, true});  // rsqrt's output is also an output
  EXPECT_EQ(recognise_patterns(read_elsewhere, offered), 0u);
  EXPECT_EQ(read_elsewhere.nodes.size(), 6u);
  Graph nobody = rms_norm_graph();  // no plugin has the op: the graph stays as traced
  EXPECT_EQ(recognise_patterns(nobody, [](const Node&) { return false; }), 0u);
  EXPECT_EQ(nobody.nodes.size(), 6u);
}

namespace {

// x -> linear(Wg) -> silu -> mul(., linear(x, Wu)) -> y; `up_bias` gives the up projection a
// bias (then it is no plain product), `up_reads` another input than x.
Graph swiglu_graph(bool up_bias = false, bool up_reads_other = false) {
  Graph g;
  const ValueId x = g.add_input("x", kF32, {-1, 4});
  const ValueId other = g.add_input("other", kF32, {-1, 4});
  const ValueId wg = g.add_constant("mlp.gate.weight", filled({6, 4}, 0.25f));
  const ValueId wu = g.add_constant("mlp.up.weight", filled({6, 4}, 0.5f));
  const ValueId bu = g.add_constant("mlp.up.bias", filled({6}, 1.0f));
  auto out = [&](int32_t node) { return g.nodes[static_cast<size_t>(node)].outputs[0]; };
  const ValueId gate = out(g.add_node("mlp.gate", "aten::linear", {x, wg, kNoValue}, {"gate"}, {}, "mlp.gate"));
  const ValueId act = out(g.add_node("mlp.silu", "aten::silu", {gate}, {"act"}, {}, "mlp"));
  const ValueId up = out(g.add_node("mlp.up", "aten::linear", {up_reads_other ? other : x, wu, up_bias ? bu : kNoValue},
                                    {"up"}, {}, "mlp.up"));
  g.outputs.push_back(out(g.add_node("mlp.mul", "aten::mul", {act, up}, {"y"}, {}, "mlp")));
  validate(g);
  return g;
}

}  // namespace

TEST(Patterns, SwigluBecomesOneNode) {
  Graph g = swiglu_graph();
  EXPECT_EQ(recognise_patterns(g, offered), 1u);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.op, kSwigluOp);
  EXPECT_EQ(n.name, "mlp.mul");
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "x");
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[1])].name, "mlp.gate.weight");
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[2])].name, "mlp.up.weight");
  validate(g);
  Graph biased = swiglu_graph(true);
  EXPECT_EQ(recognise_patterns(biased, offered), 0u) << "a bias on the up projection";
  Graph two_inputs = swiglu_graph(false, true);
  EXPECT_EQ(recognise_patterns(two_inputs, offered), 0u) << "gate and up read different inputs";
  Graph only_norm = swiglu_graph();
  EXPECT_EQ(recognise_patterns(only_norm, [](const Node& n) { return n.op == kRmsNormOp; }), 0u);
}

namespace {

// q -> slice(q, 3, 0, h1), slice(q, 3, h2, end) -> neg -> cat(-1) -> mul(sin); mul(q, cos);
// add. h1 == h2 is rotate_half.
Graph rotary_graph(int64_t h1 = 8, int64_t h2 = 8) {
  Graph g;
  const ValueId q = g.add_input("q", kF32, {-1, 4, -1, 16});
  const ValueId cos = g.add_input("cos", kF32, {1, 1, -1, 16});
  const ValueId sin = g.add_input("sin", kF32, {1, 1, -1, 16});
  auto out = [&](int32_t node) { return g.nodes[static_cast<size_t>(node)].outputs[0]; };
  auto slice = [&](const char* name, int64_t start, int64_t end) {
    return out(g.add_node(name, "aten::slice", {q}, {name},
                          {{"dim", Attribute::of_int(3)},
                           {"start", Attribute::of_int(start)},
                           {"end", Attribute::of_int(end)},
                           {"step", Attribute::of_int(1)}},
                          "attn"));
  };
  const ValueId plain = out(g.add_node("attn.mul", "aten::mul", {q, cos}, {"plain"}, {}, "attn"));
  const ValueId first = slice("attn.slice", 0, h1);
  const ValueId second = slice("attn.slice_1", h2, INT64_MAX);
  const ValueId neg = out(g.add_node("attn.neg", "aten::neg", {second}, {"neg"}, {}, "attn"));
  const ValueId cat =
      out(g.add_node("attn.cat", "aten::cat", {neg, first}, {"cat"}, {{"dim", Attribute::of_int(-1)}}, "attn"));
  const ValueId rotated = out(g.add_node("attn.mul_1", "aten::mul", {cat, sin}, {"rotated"}, {}, "attn"));
  g.outputs.push_back(
      out(g.add_node("attn.add", "aten::add", {plain, rotated}, {"y"}, {{"alpha", Attribute::of_int(1)}}, "attn")));
  validate(g);
  return g;
}

}  // namespace

TEST(Patterns, RotaryBecomesOneNode) {
  Graph g = rotary_graph();
  EXPECT_EQ(recognise_patterns(g, offered), 1u);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.op, kRotaryOp);
  EXPECT_EQ(n.name, "attn.add");
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "q");
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[1])].name, "cos");
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[2])].name, "sin");
  ASSERT_EQ(n.attrs.size(), 3u);
  EXPECT_EQ(n.attrs[0].second.i, 3);   // dim
  EXPECT_EQ(n.attrs[1].second.i, -1);  // cat_dim
  EXPECT_EQ(n.attrs[2].second.i, 8);   // half
  validate(g);
  Graph uneven = rotary_graph(8, 7);  // the halves do not meet: not rotate_half
  EXPECT_EQ(recognise_patterns(uneven, offered), 0u);
  EXPECT_EQ(uneven.nodes.size(), 7u);
}

namespace {

struct Shuffle {
  bool with_cat = true;
  int64_t dim1 = 2;            // transpose(1, dim1): 2 shuffles, 3 would not
  bool image_first = false;    // view to [N, g, H, C / g, W]: another permutation
  bool cat_is_output = false;  // the concatenation also leaves the graph
};

// ShuffleNet's block end, as a trace writes it: c = cat([a, b], 1) (or c = a);
// view(contiguous(transpose(view(c, [N, 2, C / 2, H, W]), 1, 2)), [N, -1, H, W]).
Graph shuffle_graph(const Shuffle& v = {}) {
  Graph g;
  const ValueId a = g.add_input("a", kF32, {-1, 4, -1, -1});
  const ValueId b = g.add_input("b", kF32, {-1, 4, -1, -1});
  auto out = [&](int32_t node) { return g.nodes[static_cast<size_t>(node)].outputs[0]; };
  const ValueId c =
      v.with_cat ? out(g.add_node("blk.cat", "aten::cat", {a, b}, {"c"}, {{"dim", Attribute::of_int(1)}})) : a;
  auto size = [&](int64_t d) {
    return g.add_sym("size" + std::to_string(d), "sym::size", {c}, {{"dim", Attribute::of_int(d)}});
  };
  const ValueId n = size(0), channels = size(1), h = size(2), w = size(3);
  const ValueId two = g.add_sym("two", "sym::const", {}, {{"value", Attribute::of_int(2)}});
  const ValueId free = g.add_sym("free", "sym::const", {}, {{"value", Attribute::of_int(-1)}});
  const ValueId per_group = g.add_sym("per_group", "sym::floordiv", {channels, two});
  const ValueId split = v.image_first ? g.add_sym("split", "sym::list", {n, two, h, per_group, w})
                                      : g.add_sym("split", "sym::list", {n, two, per_group, h, w});
  const ValueId merged = g.add_sym("merged", "sym::list", {n, free, h, w});
  const ValueId s =
      out(g.add_node("blk.view", "aten::view", {c}, {"s"}, {{"size", Attribute::of_ref(split, AttrKind::Ints)}}));
  const ValueId t = out(g.add_node("blk.transpose", "aten::transpose", {s}, {"t"},
                                   {{"dim0", Attribute::of_int(1)}, {"dim1", Attribute::of_int(v.dim1)}}));
  const ValueId k =
      out(g.add_node("blk.contiguous", "aten::contiguous", {t}, {"k"}, {{"memory_format", Attribute::of_int(0)}}));
  g.outputs.push_back(
      out(g.add_node("blk.view_1", "aten::view", {k}, {"y"}, {{"size", Attribute::of_ref(merged, AttrKind::Ints)}})));
  if (v.cat_is_output) g.outputs.push_back(c);
  validate(g);
  return g;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

}  // namespace

TEST(Patterns, ChannelShuffleOfACatBecomesOneNode) {
  Graph g = shuffle_graph();
  EXPECT_EQ(recognise_patterns(g, offered), 1u);
  EXPECT_EQ(count_op(g, "aten::cat") + count_op(g, "aten::view") + count_op(g, "aten::transpose"), 0u);
  ASSERT_EQ(count_op(g, kChannelShuffleOp), 1u);
  const Node& n =
      *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& x) { return x.op == kChannelShuffleOp; });
  EXPECT_EQ(n.name, "blk.view_1");
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "a");
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[1])].name, "b");
  ASSERT_EQ(n.attrs.size(), 1u);
  EXPECT_EQ(n.attrs[0].second.i, 2);  // groups
  // The sizes the trace took of the concatenation now read the node's output, same shape.
  for (const Node& node : g.nodes)
    if (node.op == "sym::size") EXPECT_EQ(g.values[static_cast<size_t>(node.inputs[0])].name, "y");
  validate(g);  // the node comes before the sizes that read it
}

TEST(Patterns, ChannelShuffleAloneKeepsItsInput) {
  Graph g = shuffle_graph({false});
  EXPECT_EQ(recognise_patterns(g, offered), 1u);
  ASSERT_EQ(count_op(g, kChannelShuffleOp), 1u);
  const Node& n =
      *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& x) { return x.op == kChannelShuffleOp; });
  ASSERT_EQ(n.inputs.size(), 1u);
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "a");
  validate(g);
}

TEST(Patterns, ChannelShuffleLeavesOtherPermutations) {
  for (const Shuffle& v : {Shuffle{true, 3}, Shuffle{true, 2, true}}) {
    Graph g = shuffle_graph(v);
    EXPECT_EQ(recognise_patterns(g, offered), 0u);
    EXPECT_EQ(count_op(g, "aten::cat"), 1u);
  }
  // A concatenation that something else reads stays; the shuffle alone is still one node.
  Graph g = shuffle_graph({true, 2, false, true});
  EXPECT_EQ(recognise_patterns(g, offered), 1u);
  EXPECT_EQ(count_op(g, "aten::cat"), 1u);
  const Node& n =
      *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& x) { return x.op == kChannelShuffleOp; });
  EXPECT_EQ(g.values[static_cast<size_t>(n.inputs[0])].name, "c");
  validate(g);
}
