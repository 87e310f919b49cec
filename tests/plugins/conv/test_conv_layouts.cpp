// The conv plugin's oneDNN-format storages ("nChw16c", "nhwc"; SDK 1.1 storages): values
// passed from one convolution straight to another stay in oneDNN's layout, results equal
// the aten plugin's all-NCHW chain, the config option layout = "plain" turns it off, and
// residual block tails fuse, in place where the layouts agree.
#include "conv_test_util.hpp"

#include <limits>
#include <map>
#include <set>

using namespace convtest;
using switchyard::StoredValue;

namespace {

struct LayoutCase {
  std::vector<Step> steps;
  std::vector<std::optional<Arg>> args;  // x, then each conv's weight and bias
};

// x [2, C0, 13, 11] through convolutions of (out channels, groups, stride), the first
// fused with a relu; every weight and bias a constant.
LayoutCase conv_chain(int64_t c0, const std::vector<std::array<int64_t, 3>>& layers) {
  LayoutCase c;
  c.args.push_back(in(random({2, c0, 13, 11}, 1)));
  int64_t channels = c0;
  uint32_t seed = 10;
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto [oc, groups, stride] = layers[i];
    std::string op = i == 0 ? "aten::conv2d+aten::relu" : "aten::conv2d";
    c.steps.push_back({op, conv_attrs({stride, stride}, {1, 1}, {1, 1}, groups)});
    c.args.push_back(weight(random({oc, channels / groups, 3, 3}, seed++, -0.3f, 0.3f)));
    c.args.push_back(weight(random({oc}, seed++)));
    channels = oc;
  }
  return c;
}

// The chain as a graph: each convolution takes the previous output, then its own weight
// and bias; an aten::relu step takes the previous output alone.
Built build(const LayoutCase& c) {
  Built b;
  b.graph.add_input("x", sytest::kF32);
  b.feeds.push_back(c.args[0]->t);
  ir::ValueId prev = b.graph.find_value("x");
  size_t conv = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    std::vector<ir::ValueId> ins = {prev};
    if (c.steps[i].op != "aten::relu") {
      ins.push_back(b.graph.add_constant("w" + std::to_string(conv), c.args[1 + 2 * conv]->t));
      ins.push_back(b.graph.add_constant("b" + std::to_string(conv), c.args[2 + 2 * conv]->t));
      ++conv;
    }
    const std::string out = "y" + std::to_string(i);
    b.graph.add_node("n" + std::to_string(i), c.steps[i].op, ins, {out}, c.steps[i].attrs);
    prev = b.graph.find_value(out);
  }
  b.graph.outputs = {prev};
  return b;
}

// A conv-only, strict config whose rule gives the conv family the option `layout`.
std::string layout_config(const std::string& layout) {
  return sytest::write_config("conv_layout_" + layout,
                              "[plugins]\nload = [\"conv\"]\n[selection]\ndefault = [\"conv\"]\nstrict = true\n"
                              "[[rules]]\nfamily = \"conv\"\nbackends = [\"conv\"]\noptions = { layout = \"" +
                                  layout + "\" }\n");
}

std::vector<StoredValue> stored(switchyard::Runtime& rt, const LayoutCase& c, Tensor* out) {
  Built b = build(c);
  auto model = load_graph(rt, std::move(b.graph));
  std::vector<StoredValue> kept = model->stored_values(b.feeds);
  *out = model->run(b.feeds)[0];
  return kept;
}

}  // namespace

TEST(ConvLayouts, ChainsStayInOneDnnLayoutsAndMatchAten) {
  // Plain, strided, grouped and depthwise layers, channel counts not a multiple of 16.
  const std::vector<std::pair<int64_t, std::vector<std::array<int64_t, 3>>>> chains = {
      {8, {{24, 1, 1}, {24, 24, 1}, {40, 1, 2}, {40, 2, 1}}},
      {3, {{64, 1, 2}, {64, 1, 1}, {64, 64, 1}}},
  };
  for (const auto& [c0, layers] : chains) {
    LayoutCase c = conv_chain(c0, layers);
    // Reference: the relu as its own aten node after the first convolution.
    LayoutCase ref_case = c;
    ref_case.steps[0].op = "aten::conv2d";
    ref_case.steps.insert(ref_case.steps.begin() + 1, Step{"aten::relu", {}});
    Built rb = build(ref_case);
    Tensor ref = load_graph(runtime("aten"), std::move(rb.graph))->run(rb.feeds)[0];

    Tensor got;
    std::vector<StoredValue> kept = stored(runtime("conv"), c, &got);
    expect_close(got, ref, "chain from " + std::to_string(c0) + " channels");
    // Every convolution's output but the graph output is read by the next one alone.
    EXPECT_EQ(kept.size(), layers.size() - 1) << "values kept in oneDNN layouts";
    for (const StoredValue& v : kept)
      EXPECT_TRUE(v.storage == "conv/nhwc" || v.storage == "conv/nChw16c") << v.value << " in " << v.storage;
  }
}

// MobileNetV3's start: a 16-channel stem writes nChw16c, which with exactly 16 channels is
// nhwc byte for byte, so the depthwise convolution after it reads it as nhwc, unreordered.
TEST(ConvLayouts, SixteenChannelsPassBetweenTheTwoLayoutsUnreordered) {
  LayoutCase c = conv_chain(3, {{16, 1, 2}, {16, 16, 2}, {16, 1, 1}, {24, 1, 1}});
  LayoutCase ref_case = c;
  ref_case.steps[0].op = "aten::conv2d";
  ref_case.steps.insert(ref_case.steps.begin() + 1, Step{"aten::relu", {}});
  Built rb = build(ref_case);
  Tensor ref = load_graph(runtime("aten"), std::move(rb.graph))->run(rb.feeds)[0];

  Built b = build(c);
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  expect_runs_close(*model, b.feeds, ref, "16-channel chain");
  std::map<std::string, std::string> kept;
  for (const StoredValue& v : model->stored_values(b.feeds)) kept[v.value] = v.storage;
  EXPECT_EQ(kept["y0"], "conv/nChw16c") << "the stem's output";
  EXPECT_EQ(kept["y1"], "conv/nhwc") << "the depthwise convolution's output";
}

// Under [precision] compute = "bf16", a value passed between two convolutions that both
// compute in bfloat16 stays in a ".bf16" storage: the producer writes it rounded, as the
// reader would round it. So later runs give what the planning run gave, where every value
// is plain float32 and each convolution rounds its own input. A value another reader
// takes (here, a graph output) stays whole.
TEST(ConvLayouts, Bf16ConvolutionsPassValuesInBf16Storages) {
  switchyard::Runtime rt(switchyard::Options{
      sytest::write_config("conv_bf16_storage",
                           "[plugins]\nload = [\"conv\"]\n[selection]\ndefault = [\"conv\"]\nstrict = true\n"
                           "[precision]\ncompute = \"bf16\"\n")});
  for (const switchyard::PluginInfo& p : rt.plugins())  // SY_EXTENSION_STORAGE_ELEMENTS, as the host read it
    if (p.name == "conv") EXPECT_EQ(p.storage_elements, (std::vector<std::string>{"bfloat16", "bfloat16", "", ""}));
  const LayoutCase c = conv_chain(8, {{24, 1, 1}, {32, 1, 1}, {40, 1, 1}});
  for (bool y1_out : {false, true}) {
    Built b = build(c);
    if (y1_out) b.graph.outputs.push_back(b.graph.find_value("y1"));
    auto model = load_graph(rt, std::move(b.graph));
    const std::vector<switchyard::PlanEntry> plan = model->plan(b.feeds);
    if (plan[0].compute != "bfloat16")
      GTEST_SKIP() << "missing resource: a CPU with bfloat16 dot products (" << plan[0].compute_note << ")";
    const Tensor planning = model->run(b.feeds)[0];
    std::map<std::string, std::string> kept;
    for (const StoredValue& v : model->stored_values(b.feeds)) kept[v.value] = v.storage;
    EXPECT_TRUE(kept["y0"] == "conv/nhwc.bf16" || kept["y0"] == "conv/nChw16c.bf16") << kept["y0"];
    if (y1_out)
      EXPECT_EQ(kept.count("y1"), 0u) << "a graph output: " << kept["y1"];
    else
      EXPECT_TRUE(kept["y1"] == "conv/nhwc.bf16" || kept["y1"] == "conv/nChw16c.bf16") << kept["y1"];
    expect_close(model->run(b.feeds)[0], planning, y1_out ? "y1 also an output" : "a chain of three");
  }
}

// A relu after a bfloat16 convolution that reads at least twice the bytes it writes runs by
// the plugin's loop, here over a .bf16 storage (split_epilogue.cpp): NaN stays NaN, as in
// ATen, where oneDNN's relu would make it 0.
TEST(ConvLayouts, ABf16ReluLoopKeepsNaN) {
  switchyard::Runtime rt(switchyard::Options{
      sytest::write_config("conv_bf16_nan",
                           "[plugins]\nload = [\"conv\"]\n[selection]\ndefault = [\"conv\"]\nstrict = true\n"
                           "[precision]\ncompute = \"bf16\"\n")});
  LayoutCase c = conv_chain(64, {{16, 1, 1}, {24, 1, 1}});
  c.args[0]->t.data<float>()[5 * 11 + 4] = std::numeric_limits<float>::quiet_NaN();  // image 0, channel 0
  LayoutCase ref_case = c;
  ref_case.steps[0].op = "aten::conv2d";
  ref_case.steps.insert(ref_case.steps.begin() + 1, Step{"aten::relu", {}});
  Built rb = build(ref_case);
  const std::vector<float> ref = sytest::values(load_graph(runtime("aten"), std::move(rb.graph))->run(rb.feeds)[0]);
  Built b = build(c);
  auto model = load_graph(rt, std::move(b.graph));
  if (model->plan(b.feeds)[0].compute != "bfloat16")
    GTEST_SKIP() << "missing resource: a CPU with bfloat16 dot products";
  for (const char* run : {"planning run", "planned run"}) {
    const std::vector<float> got = sytest::values(model->run(b.feeds)[0]);
    size_t nans = 0, differ = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      nans += std::isnan(ref[i]);
      differ += std::isnan(ref[i]) != std::isnan(got[i]);
    }
    EXPECT_GT(nans, 0u) << run;
    EXPECT_EQ(differ, 0u) << run << ": NaN where ATen has none, or none where it has";
  }
  for (const StoredValue& v : model->stored_values(b.feeds))
    if (v.value == "y0") EXPECT_EQ(v.storage.substr(v.storage.size() - 5), ".bf16") << v.storage;
}

TEST(ConvLayouts, PlainOptionKeepsEveryValueNchw) {
  switchyard::Runtime plain_rt(switchyard::Options{layout_config("plain")});
  LayoutCase c = conv_chain(8, {{24, 1, 1}, {24, 24, 1}, {40, 1, 2}});
  Tensor with_layouts, plain;
  EXPECT_FALSE(stored(runtime("conv"), c, &with_layouts).empty());
  EXPECT_TRUE(stored(plain_rt, c, &plain).empty());
  expect_close(with_layouts, plain, "oneDNN layouts against plain NCHW");
}

TEST(ConvLayouts, UnknownLayoutOptionIsAnError) {
  switchyard::Runtime rt(switchyard::Options{layout_config("nhwc")});
  LayoutCase c = conv_chain(8, {{24, 1, 1}, {24, 1, 1}});
  Built b = build(c);
  auto model = load_graph(rt, std::move(b.graph));
  try {
    model->run(b.feeds);
    FAIL() << "layout = \"nhwc\" was accepted";
  } catch (const switchyard::Error& e) {
    EXPECT_NE(std::string(e.what()).find("option layout = \"nhwc\" is not \"onednn\" or \"plain\""), std::string::npos)
        << e.what();
  }
}

// [runtime] prefer_storage (what check-plugin uses): every value a conv kernel can read or
// write in the named storage goes there, graph input and output included, each converted
// once; results do not change. A name no plugin declares is a config error listing them.
TEST(ConvLayouts, PreferStorageKeepsEveryValueThereAndNamesUnknownStorages) {
  LayoutCase c = conv_chain(8, {{24, 1, 1}, {24, 24, 1}});
  Tensor plain;
  stored(runtime("conv"), c, &plain);
  for (const std::string storage : {"conv/nhwc", "conv/nChw16c"}) {
    switchyard::Runtime rt(switchyard::Options{sytest::write_config(
        "conv_prefer", "[plugins]\nload = [\"conv\"]\n[runtime]\nprefer_storage = \"" + storage + "\"\n")});
    Built b = build(c);
    auto model = load_graph(rt, std::move(b.graph));
    // Both convolutions read their input in `storage`: x converted into it, y0 kept there
    // (nhwc, which the kernels write) or converted into it for n1 (nChw16c, which they do not).
    std::set<std::string> read_there;
    for (const switchyard::StorageCopy& copy : model->storage_copies(b.feeds)) {
      if (copy.to == storage) read_there.insert(copy.value);
      if (copy.from != "host") EXPECT_EQ(copy.to, "host") << copy.value << ": conversions go through the host";
    }
    for (const StoredValue& v : model->stored_values(b.feeds))
      if (v.storage == storage) read_there.insert(v.value);
    EXPECT_EQ(read_there, (std::set<std::string>{"x", "y0", storage == "conv/nhwc" ? "y1" : "y0"})) << storage;
    expect_runs_close(*model, b.feeds, plain, "prefer_storage = " + storage);
  }
  const std::string bad = sytest::write_config(
      "conv_prefer_bad", "[plugins]\nload = [\"conv\"]\n[runtime]\nprefer_storage = \"conv/nchw8c\"\n");
  switchyard::Runtime rt(switchyard::Options{bad});
  Built b = build(c);
  try {
    load_graph(rt, std::move(b.graph))->run(b.feeds);
    FAIL() << "an unknown storage was accepted";
  } catch (const switchyard::Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(":4:18: [runtime] prefer_storage: no loaded plugin declares 'conv/nchw8c' "
                                   "(storages: host, conv/nChw16c.bf16, conv/nhwc.bf16, conv/nChw16c, conv/nhwc)"),
        std::string::npos)
        << e.what();
  }
}

// A ResNet stem: conv+relu -> max pool -> conv. The pool reads the first convolution's
// layout and writes nhwc, so neither value crosses to NCHW; a window holding NaN is NaN
// there too (oneDNN's pooling in these layouts keeps it; the kernel mends it otherwise).
// Besides ResNet's window, an uneven one: dilated rows, a window clipped by ceil_mode.
// Two stems: a 3x3 one reads the plain image, ResNet's 7x7 one (784 multiply-adds per
// input element) reads it reordered to nhwc and writes nhwc.
TEST(ConvLayouts, AStemsPoolReadsAndWritesTheStorages) {
  struct PoolCase {
    std::string name;
    std::vector<int64_t> kernel, stride, padding, dilation;
    int64_t ceil_mode;
  };
  const std::vector<PoolCase> pools = {
      {"3x3 s2 p1", {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
      {"3x2 s(2,3) p(1,0) dilation 2 ceil_mode", {3, 2}, {2, 3}, {1, 0}, {2, 2}, 1},
  };
  struct StemCase {
    std::string name;
    int64_t channels, kernel;
    std::string storage;  // where the stem's output stays
  };
  const std::vector<StemCase> stems = {
      {"3x3 stem to 40 channels", 40, 3, "conv/nChw16c"},  // 40: three blocks of 16, the last one short
      {"7x7 stem to 64 channels", 64, 7, "conv/nhwc"},
  };
  auto graph = [](bool fused, const PoolCase& pc, const StemCase& sc) {
    ir::Graph g;
    ir::ValueId h = g.add_input("x", sytest::kF32);
    const ir::ValueId w0 = g.add_constant("w0", random({sc.channels, 3, sc.kernel, sc.kernel}, 21, -0.3f, 0.3f));
    const ir::ValueId b0 = g.add_constant("b0", random({sc.channels}, 22));
    const ir::ValueId w1 = g.add_constant("w1", random({16, sc.channels, 3, 3}, 23, -0.2f, 0.2f));
    const ir::ValueId b1 = g.add_constant("b1", random({16}, 24));
    g.add_node("stem", fused ? "aten::conv2d+aten::relu" : "aten::conv2d", {h, w0, b0}, {"stem"},
               conv_attrs({2, 2}, {sc.kernel / 2, sc.kernel / 2}, {1, 1}, 1));
    h = g.find_value("stem");
    if (!fused) {
      g.add_node("relu", "aten::relu", {h}, {"relu"});
      h = g.find_value("relu");
    }
    g.add_node("pool", "aten::max_pool2d", {h}, {"pool"},
               {{"kernel_size", ints(pc.kernel)},
                {"stride", ints(pc.stride)},
                {"padding", ints(pc.padding)},
                {"dilation", ints(pc.dilation)},
                {"ceil_mode", integer(pc.ceil_mode)}});
    g.add_node("conv", "aten::conv2d", {g.find_value("pool"), w1, b1}, {"out"}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
    g.outputs = {g.find_value("out")};
    return g;
  };
  Tensor x = random({2, 3, 20, 18}, 25), with_nan = random({2, 3, 20, 18}, 25);
  with_nan.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  for (const StemCase& sc : stems)
    for (const PoolCase& pc : pools)
      for (const Tensor& feed : {x, with_nan}) {
        const std::string what =
            sc.name + ", pool " + pc.name + (feed.data<float>()[5] != feed.data<float>()[5] ? ", NaN inputs" : "");
        Tensor ref = load_graph(runtime("aten"), graph(false, pc, sc))->run({feed})[0];
        auto model = load_graph(runtime("conv"), graph(true, pc, sc));
        expect_runs_close(*model, {feed}, ref, what);
        if (&feed == &with_nan) {  // one NaN pixel: a pool that dropped it would leave none
          size_t nans = 0;
          for (float v : sytest::values(ref)) nans += std::isnan(v) ? 1 : 0;
          EXPECT_GT(nans, 0u) << what;
        }
        std::map<std::string, std::string> kept;
        for (const StoredValue& v : model->stored_values({feed})) kept[v.value] = v.storage;
        EXPECT_EQ(kept.size(), 2u) << what << ": the stem's output and the pool's";
        EXPECT_EQ(kept["pool"], "conv/nhwc") << what;
        EXPECT_EQ(kept["stem"], sc.storage) << what;
      }
}

TEST(ConvLayouts, ASqueezeExcitationBlockStaysInTheStorages) {
  // conv -> (avg pool -> fc1 + relu -> fc2 + hardsigmoid) -> scale * activation -> conv,
  // as MobileNetV3 writes it (the scale first): every value stays in the conv storages.
  auto graph = [](bool fused) {
    ir::Graph g;
    uint32_t seed = 30;
    auto constant = [&](const std::string& name, Shape shape, float bound) {
      return g.add_constant(name, random(shape, seed++, -bound, bound));
    };
    auto conv = [&](const std::string& name, const std::string& op, ir::ValueId x, int64_t oc, int64_t ic, int64_t k) {
      g.add_node(name, op, {x, constant(name + ".w", {oc, ic, k, k}, 0.3f), constant(name + ".b", {oc}, 0.5f)}, {name},
                 conv_attrs({1, 1}, {k / 2, k / 2}, {1, 1}, 1));
      return g.find_value(name);
    };
    auto act = [&](const std::string& name, const std::string& op, ir::ValueId x) {
      g.add_node(name, op, {x}, {name});
      return g.find_value(name);
    };
    ir::ValueId x = g.add_input("x", sytest::kF32);
    ir::ValueId h = conv("expand", "aten::conv2d", x, 32, 16, 3);
    g.add_node("squeeze", "aten::adaptive_avg_pool2d", {h}, {"squeeze"}, {{"output_size", ints({1, 1})}});
    ir::ValueId s = g.find_value("squeeze");
    s = fused ? conv("fc1", "aten::conv2d+aten::relu", s, 8, 32, 1)
              : act("r", "aten::relu", conv("fc1", "aten::conv2d", s, 8, 32, 1));
    s = fused ? conv("fc2", "aten::conv2d+aten::hardsigmoid", s, 32, 8, 1)
              : act("hs", "aten::hardsigmoid", conv("fc2", "aten::conv2d", s, 32, 8, 1));
    g.add_node("scale", "aten::mul", {s, h}, {"scaled"});
    g.outputs = {conv("project", "aten::conv2d", g.find_value("scaled"), 24, 32, 1)};
    return g;
  };
  Tensor x = random({2, 16, 14, 14}, 40), with_nan = random({2, 16, 14, 14}, 40);
  with_nan.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  for (const Tensor& feed : {x, with_nan}) {
    const std::string what = feed.data<float>()[7] != feed.data<float>()[7] ? "SE block with a NaN input" : "SE block";
    Tensor ref = load_graph(runtime("aten"), graph(false))->run({feed})[0];
    auto model = load_graph(runtime("conv"), graph(true));
    expect_runs_close(*model, {feed}, ref, what);
    std::map<std::string, std::string> kept;
    for (const StoredValue& v : model->stored_values({feed})) kept[v.value] = v.storage;
    EXPECT_TRUE(kept["expand"] == "conv/nhwc" || kept["expand"] == "conv/nChw16c")
        << what << ": the activation the pool and the scale read is in '" << kept["expand"] << "'";
    EXPECT_EQ(kept["scaled"], "conv/nhwc") << what << ": the scaled activation the projection reads";
  }
}

namespace {
// A stem (conv + relu, cin -> 16 channels) and two residual blocks: conv, relu, conv, add, relu.
ir::Graph residual_blocks(int64_t cin) {
  ir::Graph g;
  g.add_input("x", sytest::kF32);
  uint32_t seed = 40;
  auto conv = [&](const std::string& name, ir::ValueId in, int64_t c_in, int64_t c_out) {
    ir::ValueId w = g.add_constant(name + ".w", random({c_out, c_in, 3, 3}, seed++, -0.2f, 0.2f));
    ir::ValueId b = g.add_constant(name + ".b", random({c_out}, seed++));
    g.add_node(name, "aten::conv2d", {in, w, b}, {name}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
    return g.find_value(name);
  };
  auto relu = [&](const std::string& name, ir::ValueId in) {
    g.add_node(name, "aten::relu", {in}, {name});
    return g.find_value(name);
  };
  ir::ValueId h = relu("stem.relu", conv("stem", g.find_value("x"), cin, 16));
  for (const std::string block : {"b1", "b2"}) {
    ir::ValueId r = conv(block + ".conv2", relu(block + ".relu1", conv(block + ".conv1", h, 16, 16)), 16, 16);
    g.add_node(block + ".add", "aten::add", {r, h}, {block + ".add"}, {{"alpha", ir::Attribute::of_int(1)}});
    h = relu(block + ".out", g.find_value(block + ".add"));
  }
  g.outputs = {h};
  return g;
}
}  // namespace

// Two ResNet basic blocks after a stem: conv -> relu -> conv -> add(., block input) -> relu.
// On conv + aten, each block's tail runs as one "aten::conv2d+aten::add+aten::relu" kernel
// and the result equals the aten plugin running every node apart. With a 16-channel input
// every value takes the same oneDNN layout and the first tail writes over its block input
// (its last reader in a sequential plan); with a 3-channel input the stem's output takes
// another layout, and the tail reorders the residual into its own output instead.
TEST(ConvLayouts, ResidualBlockTailsFuseInPlaceAndMatchAten) {
  auto graph = residual_blocks;
  for (const int64_t cin : {16, 3}) {
    const std::string what = "two residual blocks, " + std::to_string(cin) + " input channels";
    const std::vector<Tensor> feeds = {random({2, cin, 12, 10}, 7)};
    Tensor ref = load_graph(runtime("aten"), graph(cin))->run(feeds)[0];
    auto model = load_graph(runtime("both"), graph(cin));
    expect_runs_close(*model, feeds, ref, what);
    size_t tails = 0;
    for (const switchyard::PlanEntry& e : model->plan(feeds)) tails += e.op == "aten::conv2d+aten::add+aten::relu";
    EXPECT_EQ(tails, 2u) << what;
    std::string placement = "(not in the memory plan)";
    for (const switchyard::MemoryValue& v : model->memory_plan(feeds).values)
      if (v.value == "b1.out") placement = v.placement;
    if (cin == 16)
      EXPECT_EQ(placement.rfind("view of stem.relu", 0), 0u) << what << ": the tail owns nothing; " << placement;
    else
      EXPECT_EQ(placement.rfind("arena", 0), 0u) << what << ": " << placement;
    // With a node callback tensors leave the run: no in-place then, the same result.
    switchyard::RunContext context;
    size_t events = 0;
    context.set_node_callback([&](const switchyard::NodeEvent&) { ++events; });
    expect_close(model->run(feeds, context)[0], ref, what + ", with a callback");
    EXPECT_GT(events, 0u);
  }
}

// A block's input is scanned for NaN once, by conv1, and its tail reuses that finding for
// the residual (finite_memo.hpp). After finite runs, a run whose input holds a NaN must
// still find it: every write into the storages forgets the scan of what they held.
TEST(ConvLayouts, ANaNAfterFiniteRunsIsFoundInTheResidual) {
  Tensor x = random({2, 16, 12, 10}, 7), with_nan = random({2, 16, 12, 10}, 7);
  with_nan.data<float>()[123] = std::numeric_limits<float>::quiet_NaN();
  auto model = load_graph(runtime("both"), residual_blocks(16));
  auto reference = load_graph(runtime("aten"), residual_blocks(16));
  for (const Tensor* feed : {&x, &x, &with_nan, &x, &with_nan}) {
    const bool nan = feed == &with_nan;
    const std::string what = nan ? "a NaN input after finite runs" : "a finite input";
    Tensor ref = reference->run({*feed})[0];
    size_t nans = 0;
    for (float v : sytest::values(ref)) nans += std::isnan(v) ? 1 : 0;
    EXPECT_EQ(nans > 0, nan) << what;
    expect_close(model->run({*feed})[0], ref, what);
  }
}
