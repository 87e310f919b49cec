// Every zoo model (tools/zoo/export_zoo.py), at every exported batch size, through switchyard
// on the given configs, against the outputs PyTorch itself computed at export time.
// Criterion: max |switchyard - pytorch| <= 1e-4 * max(1, max |pytorch|), per output.
#include "import_model.hpp"
#include "ir/graph.hpp"
#include "ir/graph_file.hpp"

#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>

using namespace switchyard;

namespace {

struct Case {
  std::string stem, module, inputs, expected;
  int batch = 0;
  std::string name() const { return stem + "_b" + std::to_string(batch); }
};

std::string zoo_dir() {
  const char* dir = std::getenv("SWITCHYARD_ZOO_DIR");
  return dir != nullptr ? dir : "";
}

std::vector<Case> zoo_cases() {
  std::vector<Case> cases;
  std::ifstream in(zoo_dir() + "/zoo.json");
  if (!in) return cases;
  nlohmann::json zoo = nlohmann::json::parse(in);
  for (const auto& m : zoo["models"])
    for (const auto& b : m["batches"])
      cases.push_back(Case{m["stem"], b["module"], b["inputs"], b["expected"], b["batch"].get<int>()});
  return cases;
}

// max |a - b| and max |b| over every element, in double.
std::pair<double, double> diff_and_scale(const Tensor& got, const Tensor& want) {
  Tensor a = got.contiguous(), b = want.contiguous();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    double x = a.data<float>()[i], y = b.data<float>()[i];
    diff = std::max(diff, std::abs(x - y));
    if (std::isnan(x) != std::isnan(y)) diff = INFINITY;
    scale = std::max(scale, std::abs(y));
  }
  return {diff, scale};
}

// The zoo's case for `stem` at `batch` (empty stem if the zoo lacks it).
Case zoo_case(const std::string& stem, int batch) {
  for (const Case& k : zoo_cases())
    if (k.stem == stem && k.batch == batch) return k;
  return Case{};
}

std::string config_path(const char* name) {
  return std::string(std::getenv("SWITCHYARD_SOURCE_DIR")) + "/configs/" + name;
}

}  // namespace

class ZooParity : public ::testing::TestWithParam<Case> {};

TEST_P(ZooParity, MatchesPyTorch) {
  const Case& c = GetParam();
  torchscript::register_loader();
  const std::string dir = zoo_dir() + "/";
  std::vector<Tensor> inputs = torchscript::load_tensors(dir + c.inputs);
  std::vector<Tensor> expected = torchscript::load_tensors(dir + c.expected);
  auto compare = [&](const std::vector<Tensor>& out, const char* label) {
    ASSERT_EQ(out.size(), expected.size()) << c.name() << " on " << label;
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].shape(), expected[i].shape()) << c.name() << " output " << i;
      auto [diff, scale] = diff_and_scale(out[i], expected[i]);
      double bound = 1e-4 * std::max(1.0, scale);
      std::printf("  %-22s %-20s output %zu: max|diff| %.3g, max|ref| %.3g, bound %.3g\n", c.name().c_str(), label, i,
                  diff, scale, bound);
      EXPECT_LE(diff, bound) << c.name() << " on " << label << ", output " << i;
      EXPECT_GT(scale, 1e-3) << c.name() << ": the reference output has no signal to compare";
    }
  };
  for (const char* config : {"reference.toml", "default.toml"}) {
    Runtime rt(Options{config_path(config)});
    auto model = rt.load(dir + c.module);
    compare(model->run(inputs), config);  // the first run plans
    if (std::string(config) != "default.toml") continue;

    // Later runs use the memory plan's arena. The second may still make one-time kernel
    // state (the conv plugin builds its variant for the layouts the plan chose), which is
    // not activation memory: the third measures the peak.
    compare(model->run(inputs), "default.toml, arena");
    RunContext ctx;
    ctx.set_memory_measurement(true);
    compare(model->run(inputs, ctx), "default.toml, arena");
    const MemoryReport plan = model->memory_plan(inputs);
    const double measured = static_cast<double>(ctx.last_stats().measured_peak_bytes);
    const double estimated = static_cast<double>(plan.estimated_peak_bytes);
    std::printf("  %-22s peak activation memory: measured %.0f B, planned %.0f B (arena %zu B), ratio %.3f\n",
                c.name().c_str(), measured, estimated, plan.arena_bytes, measured / estimated);
    EXPECT_TRUE(plan.arena_enabled) << c.name();
    EXPECT_EQ(ctx.last_stats().arena_bytes, plan.arena_bytes) << c.name() << ": the second run uses the arena";
    EXPECT_NEAR(measured, estimated, 0.1 * estimated) << c.name() << ": `plan --memory` and the measured peak disagree";
  }
}

// The planner's reuse on a real network: resnet50 at batch 8 (the batch-4 inputs twice)
// needs under half the bytes its activations would take with no reuse at all.
TEST(Zoo, MemoryPlanReusesActivations) {
  torchscript::register_loader();
  const Case c = zoo_case("resnet50", 4);
  ASSERT_FALSE(c.stem.empty()) << "resnet50 at batch 4 is missing from " << zoo_dir();
  Tensor b4 = torchscript::load_tensors(zoo_dir() + "/" + c.inputs).at(0).contiguous();
  std::vector<int64_t> shape = b4.shape();
  shape[0] *= 2;
  Tensor b8 = Tensor::uninitialized(b4.dtype(), shape);
  std::memcpy(b8.raw_data(), b4.raw_data(), b4.nbytes());
  std::memcpy(static_cast<char*>(b8.raw_data()) + b4.nbytes(), b4.raw_data(), b4.nbytes());

  Runtime rt(Options{config_path("default.toml")});
  auto model = rt.load(zoo_dir() + "/" + c.module);
  const MemoryReport plan = model->memory_plan({b8});
  std::printf(
      "resnet50 b8: activations %zu B summed; arena %zu B (holding %zu B); heap peak %zu B; peak %zu B (%.1f%%)\n",
      plan.total_activation_bytes, plan.arena_bytes, plan.arena_values_bytes, plan.heap_peak_bytes,
      plan.estimated_peak_bytes, 100.0 * plan.estimated_peak_bytes / plan.total_activation_bytes);
  EXPECT_LT(plan.estimated_peak_bytes, plan.total_activation_bytes / 2);
  EXPECT_LT(plan.arena_bytes, plan.arena_values_bytes / 2);

  std::vector<Tensor> out = model->run({b8});  // in the arena; both halves are PyTorch's batch 4
  Tensor expected = torchscript::load_tensors(zoo_dir() + "/" + c.expected).at(0).contiguous();
  EXPECT_EQ(model->last_stats().arena_bytes, plan.arena_bytes);
  ASSERT_EQ(out.at(0).numel(), 2 * expected.numel());
  const Tensor got = out[0].contiguous();
  for (int half = 0; half < 2; ++half) {
    Tensor part = Tensor::from_blob(got.data<float>() + half * expected.numel(), expected.dtype(), expected.shape());
    auto [diff, scale] = diff_and_scale(part, expected);
    EXPECT_LE(diff, 1e-4 * std::max(1.0, scale)) << "half " << half;
  }
}

namespace {
// default.toml with one more [[rules]] entry (before [runtime]), routing `op` through the
// attention plugin with min_scores_mib = 0; written to the test's temporary folder.
std::string config_fusing_scores(const std::string& op, const std::string& name) {
  std::ifstream defaults(config_path("default.toml"));
  std::string toml((std::istreambuf_iterator<char>(defaults)), std::istreambuf_iterator<char>());
  const size_t runtime = toml.find("[runtime]");
  if (runtime == std::string::npos) throw std::runtime_error("default.toml has no [runtime] table");
  toml.insert(runtime, "[[rules]]\nop = \"" + op +
                           "\"\nbackends = [\"linalg\", \"attention\", \"aten\"]\n"
                           "options = { min_scores_mib = 0 }\n\n");
  const std::string config = testing::TempDir() + "/" + name + ".toml";
  std::ofstream(config) << toml;
  return config;
}

// `model` on case `c`'s inputs: `count` nodes run as the fused `op` on the attention
// plugin (`what` names them), and its output is PyTorch's.
void expect_fused_and_close(Model& model, const Case& c, const std::vector<Tensor>& inputs, const std::string& op,
                            int count, const char* what) {
  const std::vector<Tensor> expected = torchscript::load_tensors(zoo_dir() + "/" + c.expected);
  int chains = 0;
  for (const PlanEntry& e : model.plan(inputs)) chains += e.op == op && e.backend == "attention";
  EXPECT_EQ(chains, count) << what;
  const std::vector<Tensor> out = model.run(inputs);
  ASSERT_EQ(out.size(), expected.size());
  auto [diff, scale] = diff_and_scale(out[0], expected[0]);
  EXPECT_LE(diff, 1e-4 * std::max(1.0, scale));
}
}  // namespace

// ViT-B/16's decomposed attention without its scores (the attention plugin's fused
// bmm -> softmax -> bmm, which default.toml takes only where the scores reach 8 MiB: batch
// 8, too slow for this suite), forced down to batch 4 with the rule option: every layer
// fused, PyTorch's outputs, and a lower planned peak than with the scores.
TEST(Zoo, ViTAttentionWithoutScoresMatchesPyTorch) {
  torchscript::register_loader();
  const Case c = zoo_case("vit_b_16", 4);
  ASSERT_FALSE(c.stem.empty()) << "vit_b_16 at batch 4 is missing from " << zoo_dir();
  const std::string config = config_fusing_scores("aten::bmm", "vit_attention_without_scores");

  const std::vector<Tensor> inputs = torchscript::load_tensors(zoo_dir() + "/" + c.inputs);
  Runtime fused_rt(Options{config}), plain_rt(Options{config_path("default.toml")});
  auto fused = fused_rt.load(zoo_dir() + "/" + c.module);
  auto plain = plain_rt.load(zoo_dir() + "/" + c.module);
  expect_fused_and_close(*fused, c, inputs, "aten::bmm+aten::softmax+aten::bmm", 12,
                         "one fused attention per encoder layer");
  if (HasFatalFailure()) return;
  const size_t with = plain->memory_plan(inputs).estimated_peak_bytes,
               without = fused->memory_plan(inputs).estimated_peak_bytes;
  std::printf("vit_b_16 b4: planned peak %zu B with the scores, %zu B without\n", with, without);
  EXPECT_LT(without, with);
}

// The GPT-like decoder's masked attention (baddbmm(causal mask, q, k^T) -> softmax -> bmm)
// on the same fused kernel, forced at batch 4 by the rule option: PyTorch's outputs.
TEST(Zoo, GptMaskedAttentionWithoutScoresMatchesPyTorch) {
  torchscript::register_loader();
  const Case c = zoo_case("gpt_decomposed", 4);
  ASSERT_FALSE(c.stem.empty()) << "gpt_decomposed at batch 4 is missing from " << zoo_dir();
  const std::string config = config_fusing_scores("aten::baddbmm", "gpt_attention_without_scores");

  const std::vector<Tensor> inputs = torchscript::load_tensors(zoo_dir() + "/" + c.inputs);
  Runtime rt(Options{config});
  auto model = rt.load(zoo_dir() + "/" + c.module);
  expect_fused_and_close(*model, c, inputs, "aten::baddbmm+aten::softmax+aten::bmm", 2,
                         "one fused attention per decoder block");
}

// The GPT-like decoder's LM head may write the logits over a buffer ending with its input
// (SDK 1.2 output_inplace_tail): the planned peak is the logits alone, every activation
// living in their buffer before they are written, and an output kept by the caller stays
// PyTorch's while later runs take other buffers.
TEST(Zoo, DecoderActivationsLiveInTheLogitsBuffer) {
  torchscript::register_loader();
  const Case c = zoo_case("gpt_decomposed", 4);
  ASSERT_FALSE(c.stem.empty()) << "gpt_decomposed at batch 4 is missing from " << zoo_dir();
  const std::vector<Tensor> inputs = torchscript::load_tensors(zoo_dir() + "/" + c.inputs);
  const Tensor expected = torchscript::load_tensors(zoo_dir() + "/" + c.expected).at(0);
  Runtime rt(Options{config_path("default.toml")});
  auto model = rt.load(zoo_dir() + "/" + c.module);
  const MemoryReport plan = model->memory_plan(inputs);
  const size_t logits = expected.nbytes();
  int at_end = 0, in_arena = 0;
  for (const MemoryValue& v : plan.values) {
    at_end += v.placement.rfind("arena, at the end of ", 0) == 0;
    in_arena += v.placement == "output, in the arena" && v.bytes == logits;
  }
  EXPECT_EQ(at_end, 1) << "the LM head's input at the end of the logits";
  EXPECT_EQ(in_arena, 1) << "the logits in the arena";
  EXPECT_EQ(plan.arena_bytes, logits);
  EXPECT_LE(plan.heap_peak_bytes, 64u) << "beside the arena: a scalar or so, kernel-produced";
  std::vector<Tensor> kept;
  for (int run = 0; run < 3; ++run) kept.push_back(model->run(inputs).at(0));
  for (size_t run = 0; run < kept.size(); ++run) {
    auto [diff, scale] = diff_and_scale(kept[run], expected);
    EXPECT_LE(diff, 1e-4 * std::max(1.0, scale)) << "run " << run << ", read after the last";
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooParity, ::testing::ValuesIn(zoo_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name(); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ZooParity);

TEST(Zoo, EveryModelIsPresent) {
  // The zoo_export fixture runs first; an empty zoo would make the parity suite vacuous.
  std::map<std::string, int> batches;
  for (const Case& c : zoo_cases()) batches[c.stem]++;
  for (const char* stem : {"resnet18", "resnet50", "mobilenet_v3_small", "vit_b_16", "vit_b_16_fast", "bert_fast",
                           "bert_decomposed", "gpt_fast", "gpt_decomposed"})
    EXPECT_EQ(batches[stem], 2) << stem << " should be exported at batch 1 and 4 in " << zoo_dir();
}

TEST(Zoo, PlanNamesNodesByModulePath) {
  torchscript::register_loader();
  std::map<std::string, Case> by_stem;
  for (const Case& c : zoo_cases()) by_stem[c.stem] = c;
  struct Want {
    const char* stem;
    const char* node_prefix;
  };
  for (const Want w : {Want{"resnet50", "layer1.0.conv1"}, Want{"vit_b_16", "encoder.layers.encoder_layer_0"}}) {
    ASSERT_TRUE(by_stem.count(w.stem)) << w.stem;
    const Case& c = by_stem[w.stem];
    Runtime rt(Options{config_path("reference.toml")});
    auto model = rt.load(zoo_dir() + "/" + c.module);
    auto plan = model->plan(torchscript::load_tensors(zoo_dir() + "/" + c.inputs));
    bool found = false;
    for (const auto& e : plan) found |= e.node.rfind(w.node_prefix, 0) == 0 && !e.module_path.empty();
    EXPECT_TRUE(found) << w.stem << ": no node named " << w.node_prefix << "...";
  }
}

// `switchyard convert`: the portable graph written from a zoo .pt gives PyTorch's outputs.
TEST(Zoo, ConvertedModelsMatchPyTorch) {
  std::map<std::string, Case> b4;
  for (const Case& c : zoo_cases())
    if (c.batch == 4) b4[c.stem] = c;
  for (const char* stem : {"resnet18", "mobilenet_v3_small", "bert_fast", "gpt_decomposed"}) {
    ASSERT_TRUE(b4.count(stem)) << stem;
    const Case& c = b4[stem];
    ir::Graph graph;
    torchscript::import_model(zoo_dir() + "/" + c.module, graph);
    const std::string json = testing::TempDir() + "/" + stem + ".json";
    ir::write_graph_file(graph, json);
    Runtime rt(Options{config_path("reference.toml")});
    auto model = rt.load(json);
    std::vector<Tensor> out = model->run(torchscript::load_tensors(zoo_dir() + "/" + c.inputs));
    std::vector<Tensor> expected = torchscript::load_tensors(zoo_dir() + "/" + c.expected);
    ASSERT_EQ(out.size(), expected.size()) << stem;
    for (size_t i = 0; i < out.size(); ++i) {
      auto [diff, scale] = diff_and_scale(out[i], expected[i]);
      EXPECT_LE(diff, 1e-4 * std::max(1.0, scale)) << stem << " converted, output " << i;
    }
  }
}
