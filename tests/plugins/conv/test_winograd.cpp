// The conv plugin's Winograd path (plugins/conv/winograd.hpp): 3x3 convolutions at 14x14
// and up, at batch 1 and in batch chunks, match the aten plugin with the config option
// winograd at its default ("2x2"), "4x4" and false; the option changes what runs; an
// unknown value is an error; a value another kernel vouched for as finite still goes to
// Winograd. Inputs Winograd may not take (NaN, infinities, values past 2^64) are
// conformance cases (host/conformance/cases_conv.cpp), run by check_plugin_conv.
#include "conv_test_util.hpp"

using namespace convtest;

namespace {

// A conv-only, strict config whose rule gives the conv family `winograd = <value>`.
std::string winograd_config(const std::string& name, const std::string& value) {
  return sytest::write_config("conv_winograd_" + name,
                              "[plugins]\nload = [\"conv\"]\n[selection]\ndefault = [\"conv\"]\nstrict = true\n"
                              "[[rules]]\nfamily = \"conv\"\nbackends = [\"conv\"]\noptions = { winograd = " +
                                  value + " }\n");
}

// x [n, c, side, side] -> 3x3 conv (c -> c, padded, constant weights) -> relu, fused as the
// conv plugin takes it, or as two nodes for the reference.
Built conv_relu(int64_t n, int64_t c, int64_t side, bool fused) {
  const float w = 1.f / std::sqrt(9.f * static_cast<float>(c));  // outputs of order 1
  std::vector<Step> steps = {
      {fused ? "aten::conv2d+aten::relu" : "aten::conv2d", conv_attrs({1, 1}, {1, 1}, {1, 1}, 1)}};
  if (!fused) steps.push_back({"aten::relu", {}});
  return chain(steps,
               {in(random({n, c, side, side}, 7)), weight(random({c, c, 3, 3}, 8, -w, w)), weight(random({c}, 9))});
}

Tensor run_twice(switchyard::Runtime& rt, Built b) {
  auto model = load_graph(rt, std::move(b.graph));
  model->run(b.feeds);  // the planning run
  return model->run(b.feeds)[0];
}

// oneDNN 2.6 has Winograd kernels for AVX-512 (avx512_core) only.
bool cpu_has_winograd() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

}  // namespace

TEST(ConvWinograd, ThreeByThreeLayersMatchAtenWithEveryWinogradOption) {
  switchyard::Runtime direct(switchyard::Options{winograd_config("off", "false")});
  switchyard::Runtime large_tiles(switchyard::Options{winograd_config("4x4", "\"4x4\"")});
  struct Shape4 {
    int64_t n, c, side;
  };
  // Batch 4 at 56x56: oneDNN would take F(4x4,3x3) for the whole batch, so the default
  // runs F(2x2,3x3) on chunks of it. 128 channels at 28x28: on a part of the output
  // channels per call (one image each at batch 2).
  for (const Shape4 s : {Shape4{1, 64, 56}, Shape4{2, 32, 14}, Shape4{4, 64, 56}, Shape4{1, 48, 28}, Shape4{1, 128, 28},
                         Shape4{2, 128, 28}}) {
    const std::string what = "[" + std::to_string(s.n) + ", " + std::to_string(s.c) + ", " + std::to_string(s.side) +
                             ", " + std::to_string(s.side) + "]";
    Tensor ref = run_twice(runtime("aten"), conv_relu(s.n, s.c, s.side, false));
    Tensor fast = run_twice(runtime("conv"), conv_relu(s.n, s.c, s.side, true));
    Tensor slow = run_twice(direct, conv_relu(s.n, s.c, s.side, true));
    expect_close(run_twice(large_tiles, conv_relu(s.n, s.c, s.side, true)), ref, what + ", winograd = \"4x4\"");
    expect_close(fast, ref, what + ", Winograd allowed");
    expect_close(slow, ref, what + ", winograd = false");
    if (!cpu_has_winograd()) continue;
    // Winograd rounds differently from the direct sum: some element differs.
    std::vector<float> a = sytest::values(fast), b = sytest::values(slow);
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    EXPECT_GT(differ, 0u) << what << ": winograd = false changed nothing";
  }
}

TEST(ConvWinograd, AnUnknownWinogradOptionIsAnError) {
  switchyard::Runtime rt(switchyard::Options{winograd_config("bad", "\"yes\"")});
  Built b = conv_relu(1, 16, 14, true);
  try {
    auto model = load_graph(rt, std::move(b.graph));
    model->run(b.feeds);
    FAIL() << "winograd = \"yes\" was accepted";
  } catch (const switchyard::Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("option winograd is not \"2x2\", \"4x4\" or \"off\" (or true / false): got \"yes\""),
        std::string::npos)
        << e.what();
  }
}

// A value read first by a 1x1 convolution with a split relu, which vouches for its input as
// finite without knowing how large it is (finite_memo.hpp), then by a 3x3 convolution:
// Winograd needs the magnitude, so it scans instead of leaving the 3x3 to the direct path.
TEST(ConvWinograd, AValueVouchedForAsFiniteStillGoesToWinograd) {
  if (!cpu_has_winograd()) GTEST_SKIP() << "missing resource: an AVX-512 CPU (oneDNN's Winograd kernels)";
  auto graph = [] {
    ir::Graph g;
    const ir::ValueId x = g.add_input("x", sytest::kF32);
    const ir::ValueId w0 = g.add_constant("w0", random({32, 16, 1, 1}, 31, -0.2f, 0.2f));
    const ir::ValueId w1 = g.add_constant("w1", random({8, 32, 1, 1}, 32, -0.3f, 0.3f));
    const ir::ValueId w2 = g.add_constant("w2", random({32, 32, 3, 3}, 33, -0.1f, 0.1f));
    const ir::ValueId b = g.add_constant("b", random({32}, 34));
    // a 1x1, the same in both runtimes: the outputs differ only where "three" differs
    g.add_node("first", "aten::conv2d", {x, w0, b}, {"h"}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
    const ir::ValueId h = g.find_value("h");
    // 32 -> 8 channels: it reads four times what it writes, so its relu runs by a loop
    g.add_node("reduce", "aten::conv2d+aten::relu", {h, w1}, {"r"}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1));
    g.add_node("three", "aten::conv2d", {h, w2, b}, {"y"}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
    g.outputs = {g.find_value("r"), g.find_value("y")};
    return g;
  };
  const Tensor x = random({1, 16, 28, 28}, 35);
  switchyard::Runtime direct(switchyard::Options{winograd_config("off_vouched", "false")});
  auto fast = load_graph(runtime("conv"), graph());
  auto slow = load_graph(direct, graph());
  for (int run = 0; run < 3; ++run) {  // the planning run, then runs in the planned storages
    const std::vector<Tensor> a = fast->run({x}), b = slow->run({x});
    std::vector<float> ya = sytest::values(a[1]), yb = sytest::values(b[1]);
    expect_close(a[1], b[1], "run " + std::to_string(run));
    size_t differ = 0;
    for (size_t i = 0; i < ya.size(); ++i) differ += ya[i] != yb[i];
    EXPECT_GT(differ, 0u) << "run " << run << ": the 3x3 convolution ran direct";
  }
}
