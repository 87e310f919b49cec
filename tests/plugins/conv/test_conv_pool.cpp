// A stem as TorchScript records it, conv -> relu -> max pool, which the host fuses into the
// conv plugin's "<conv>+aten::relu+aten::max_pool2d" (plugins/conv/conv_pool.hpp), against
// the aten plugin running the three apart. At ResNet's size each image is cut into bands of
// rows, each band recomputing the convolution row it shares with the next; batches share
// images out to the threads evenly or not; NaN and infinities come through as ATen lets
// them; the pooled output stays in the plugin's nhwc storage for a convolution that reads
// it, or is returned plain.
#include "conv_test_util.hpp"

#include <cmath>
#include <limits>
#include <map>

using namespace convtest;

namespace {

constexpr const char* kFused = "aten::conv2d+aten::relu+aten::max_pool2d";

// x -> conv kxk s2 (7x7 p3: ResNet's; 3x3 p1: ShuffleNet's) -> relu -> max pool 3x3 s2 p1,
// then (head) a 3x3 convolution.
ir::Graph stem(int64_t channels, bool head, int64_t kernel = 7) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", sytest::kF32);
  const ir::ValueId w = g.add_constant("w", random({channels, 3, kernel, kernel}, 61, -0.2f, 0.2f));
  const ir::ValueId b = g.add_constant("b", random({channels}, 62));
  g.add_node("conv1", "aten::conv2d", {x, w, b}, {"c"}, conv_attrs({2, 2}, {kernel / 2, kernel / 2}, {1, 1}, 1));
  g.add_node("relu", "aten::relu", {g.find_value("c")}, {"r"});
  g.add_node("maxpool", "aten::max_pool2d", {g.find_value("r")}, {"p"}, pool_attrs({3, 3}, {2, 2}, {1, 1}));
  g.outputs = {g.find_value("p")};
  if (!head) return g;
  const ir::ValueId wh = g.add_constant("wh", random({16, channels, 3, 3}, 63, -0.1f, 0.1f));
  g.add_node("head", "aten::conv2d", {g.find_value("p"), wh, ir::kNoValue}, {"out"},
             conv_attrs({1, 1}, {1, 1}, {1, 1}, 1));
  g.outputs = {g.find_value("out")};
  return g;
}

struct StemCase {
  int64_t batch, size, channels;
  bool head, non_finite;
};

void expect_fused_stem_matches_aten(const StemCase& c) {
  const std::string what = "batch " + std::to_string(c.batch) + ", " + std::to_string(c.size) + "x" +
                           std::to_string(c.size) + ", " + std::to_string(c.channels) + " channels" +
                           (c.head ? ", read by a convolution" : ", returned") + (c.non_finite ? ", NaN and inf" : "");
  Tensor x = random({c.batch, 3, c.size, c.size}, 64);
  if (c.non_finite) {  // in the first band's rows, on a band boundary, and in the last image
    float* p = x.data<float>();
    p[5 * c.size + 9] = std::numeric_limits<float>::quiet_NaN();
    p[(c.size / 2) * c.size + 40] = std::numeric_limits<float>::quiet_NaN();
    p[x.numel() - 2 * c.size - 7] = std::numeric_limits<float>::infinity();
  }
  Tensor ref = load_graph(runtime("aten"), stem(c.channels, c.head))->run({x})[0];
  auto model = load_graph(runtime("conv"), stem(c.channels, c.head));
  size_t fused = 0;
  for (const switchyard::PlanEntry& e : model->plan({x})) fused += e.op == kFused && e.backend == "conv";
  EXPECT_EQ(fused, 1u) << what << ": conv, relu and max pool as one kernel";
  expect_runs_close(*model, {x}, ref, what);
  if (c.non_finite) {
    size_t nans = 0;
    for (float v : sytest::values(ref)) nans += std::isnan(v) ? 1 : 0;
    EXPECT_GT(nans, 0u) << what << ": the reference keeps NaN, so the comparison checks it";
  }
  std::map<std::string, std::string> kept;
  for (const switchyard::StoredValue& v : model->stored_values({x})) kept[v.value] = v.storage;
  EXPECT_EQ(kept.count("c") + kept.count("r"), 0u) << what << ": the convolution's output is never made";
  if (c.head) EXPECT_EQ(kept["p"], "conv/nhwc") << what;
}

}  // namespace

TEST(ConvPool, ResNetsStemRunsFusedInBandsAndMatchesAten) {
  // 224 x 224: a 3.2 MB convolution output per image, three or four bands; 64 channels take
  // the AVX-512 loop, 28 the careful one (and 16 + 12 lanes).
  for (const StemCase& c : std::vector<StemCase>{{1, 224, 64, true, false},
                                                 {3, 224, 64, false, false},
                                                 {2, 224, 64, true, true},
                                                 {8, 64, 64, true, false},
                                                 {1, 96, 28, true, true},
                                                 {3, 50, 28, false, false}})
    expect_fused_stem_matches_aten(c);
}

// A 3x3 stem does too little work per input element for the bands' nhwc convolution to pay
// for reordering its input: the plugin declines the fused kernel, and runs the convolution
// (with its relu) on plain input and the pool apart, still matching aten.
TEST(ConvPool, AThreeByThreeStemRunsUnfusedOnTheConvPlugin) {
  Tensor x = random({4, 3, 64, 64}, 65);
  Tensor ref = load_graph(runtime("aten"), stem(24, false, 3))->run({x})[0];
  auto model = load_graph(runtime("conv"), stem(24, false, 3));
  std::map<std::string, std::string> ran;
  for (const switchyard::PlanEntry& e : model->plan({x})) ran[e.op] = e.backend;
  EXPECT_EQ(ran.count(kFused), 0u);
  EXPECT_EQ(ran["aten::conv2d+aten::relu"], "conv");
  EXPECT_EQ(ran["aten::max_pool2d"], "conv");
  expect_runs_close(*model, {x}, ref, "3x3 stem, batch 4, 64x64, 24 channels");
}
