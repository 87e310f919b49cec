// The plain zoo (tools/zoo/export_plain_zoo.py): traces saved as users save them, with no
// switchyard_inputs.json and no extra files, loaded with no hints and run only at shapes
// other than the traced one (other batch sizes; sequence models also at other lengths),
// on reference.toml and default.toml, against PyTorch's eager outputs.
// Criterion: max |switchyard - pytorch| <= 1e-4 * max(1, max |pytorch|), per output.
// The half-precision variants (<stem>_bf16, <stem>_fp16) also run on default.toml with
// [precision] compute = "as-is": nodes keep the model's dtype where a kernel takes it and
// run as float32 islands elsewhere, rounding their outputs to the dtype. Their bound is
// 16 unit roundoffs of the dtype (2^-8 for bfloat16, 2^-11 for float16) times
// max(1, max |pytorch|): each node rounds once, some twenty deep; measured 1-6.3 units,
// and PyTorch's own bfloat16 run of resnet18_bf16 and vit_b_16_bf16 is as far (2.4%, 1.1%).
// At the end a summary lists each model, config and shape as ok or with its first error line.
#include <switchyard/half.hpp>
#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

using namespace switchyard;

namespace {

struct InputSet {
  std::string label, inputs, expected;
};

struct Case {
  std::string stem, family, module, traced_at;
  std::vector<InputSet> sets;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.stem; }  // not gtest's byte dump

std::string zoo_dir() {
  const char* dir = std::getenv("SWITCHYARD_PLAIN_ZOO_DIR");
  return dir != nullptr ? dir : "";
}

std::vector<Case> zoo_cases() {
  std::vector<Case> cases;
  std::ifstream in(zoo_dir() + "/zoo.json");
  if (!in) return cases;
  nlohmann::json zoo = nlohmann::json::parse(in);
  for (const auto& m : zoo["models"]) {
    Case c{m["stem"], m["family"], m["module"], m["traced_at"]["shape"].dump(), {}};
    for (const auto& s : m["sets"]) c.sets.push_back(InputSet{s["label"], s["inputs"], s["expected"]});
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string config_path(const char* name) {
  return std::string(std::getenv("SWITCHYARD_SOURCE_DIR")) + "/configs/" + name;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// max |a - b| and max |b| over every element, in double; a NaN on one side only is infinite.
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

// One line per model, config and shape, printed after the last test: the importer's to-do list.
class Summary : public ::testing::Environment {
 public:
  static void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.push_back(line);
  }
  void TearDown() override {
    size_t ok = 0;
    for (const auto& l : lines_) ok += l.find(" ok ") != std::string::npos;
    std::printf("\nplain zoo summary: %zu of %zu model/config/shape runs match PyTorch\n", ok, lines_.size());
    for (const auto& l : lines_) std::printf("  %s\n", l.c_str());
  }

 private:
  static inline std::mutex mutex_;
  static inline std::vector<std::string> lines_;
};
[[maybe_unused]] auto* const summary = ::testing::AddGlobalTestEnvironment(new Summary);

void record(const Case& c, const char* config, const std::string& label, const std::string& verdict) {
  char head[160];
  std::snprintf(head, sizeof head, "%-20s %-15s %-7s", c.stem.c_str(), config, label.c_str());
  Summary::add(head + (" " + verdict));
}

std::string describe(const Tensor& t) {
  std::string text = dtype_name(t.dtype()) + "[";
  for (size_t d = 0; d < t.shape().size(); ++d) text += (d ? "," : "") + std::to_string(t.shape()[d]);
  return text + "]";
}

// A float32 copy of a bfloat16 or float16 output (exact).
Tensor as_float32(const Tensor& t) {
  const Tensor c = t.contiguous();
  Tensor out = Tensor::empty(DLDataType{kDLFloat, 32, 1}, c.shape());
  for (int64_t i = 0; i < c.numel(); ++i) {
    const uint16_t v = c.data<uint16_t>()[i];
    out.data<float>()[i] = c.dtype().code == kDLBfloat ? bfloat16_to_float(v) : half_to_float(v);
  }
  return out;
}

// How a run is judged: float32 outputs within 1e-4, or (as-is runs of a half-precision
// model) outputs in `half` within `tolerance`.
struct Criterion {
  double tolerance = 1e-4;
  std::string half;  // "bfloat16" or "float16": the dtype the outputs keep; "" for float32
};

// Compares one run's outputs; returns "" when all are within the bound, else the first failure.
std::string compare(const std::vector<Tensor>& out, const std::vector<Tensor>& expected, const Criterion& criterion,
                    double* worst) {
  if (out.size() != expected.size())
    return std::to_string(out.size()) + " outputs, PyTorch gives " + std::to_string(expected.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype_name(expected[i].dtype()) != "float32")
      return "output " + std::to_string(i) + " is " + dtype_name(expected[i].dtype()) + "; this test compares float32";
    const bool half = !criterion.half.empty();
    if (half && dtype_name(out[i].dtype()) != criterion.half)
      return "output " + std::to_string(i) + " is " + describe(out[i]) + "; as-is keeps " + criterion.half;
    const Tensor got = half ? as_float32(out[i]) : out[i];
    if (describe(got) != describe(expected[i]))
      return "output " + std::to_string(i) + " is " + describe(out[i]) + ", PyTorch gives " + describe(expected[i]);
    auto [diff, scale] = diff_and_scale(got, expected[i]);
    const double bound = criterion.tolerance * std::max(1.0, scale);
    *worst = std::max(*worst, diff / bound);
    if (!(diff <= bound)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "output %zu: max|diff| %.3g > bound %.3g (max|ref| %.3g)", i, diff, bound, scale);
      return msg;
    }
  }
  return "";
}

}  // namespace

class PlainZoo : public ::testing::TestWithParam<Case> {};

namespace {

// The half-precision dtype a zoo variant is saved in ("<stem>_bf16", "<stem>_fp16"), or "".
std::string half_of(const std::string& stem) {
  auto ends = [&](const std::string& tail) {
    return stem.size() > tail.size() && stem.compare(stem.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends("_bf16") ? "bfloat16" : ends("_fp16") ? "float16" : "";
}

// default.toml with [precision] compute = "as-is", written once per process.
std::string as_is_config() {
  static const std::string path = [] {
    std::ifstream in(config_path("default.toml"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string out = (std::filesystem::temp_directory_path() /
                             ("switchyard_plain_zoo_as_is_" + std::to_string(::getpid()) + ".toml"))
                                .string();
    std::ofstream(out) << text << "\n[precision]\ncompute = \"as-is\"\n";
    return out;
  }();
  return path;
}

struct ZooConfig {
  const char* label;
  std::string path;
  Criterion criterion;
};

std::vector<ZooConfig> configs_for(const Case& c) {
  std::vector<ZooConfig> configs{{"reference.toml", config_path("reference.toml"), {}},
                                 {"default.toml", config_path("default.toml"), {}}};
  const std::string half = half_of(c.stem);
  if (!half.empty()) {
    const double unit_roundoff = half == "bfloat16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    configs.push_back({"as-is", as_is_config(), {16 * unit_roundoff, half}});
  }
  return configs;
}

}  // namespace

TEST_P(PlainZoo, MatchesPyTorchAtOtherShapes) {
  const Case& c = GetParam();
  torchscript::register_loader();
  const std::string dir = zoo_dir() + "/";
  for (const ZooConfig& zc : configs_for(c)) {
    const char* config = zc.label;
    const auto t0 = std::chrono::steady_clock::now();
    Runtime rt(Options{zc.path});
    std::unique_ptr<Model> model;
    try {
      model = rt.load(dir + c.module);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.stem << " (traced at " << c.traced_at << ") does not load on " << config << ": " << e.what();
      record(c, config, "load", "FAIL " + first_line(e.what()));
      continue;
    }
    for (const InputSet& s : c.sets) {
      const std::vector<Tensor> inputs = torchscript::load_tensors(dir + s.inputs);
      const std::vector<Tensor> expected = torchscript::load_tensors(dir + s.expected);
      std::string failure;
      double worst = 0;  // max|diff| / bound over the outputs
      try {
        failure = compare(model->run(inputs), expected, zc.criterion, &worst);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!failure.empty()) {
        ADD_FAILURE() << c.stem << " at " << s.label << " on " << config << ": " << failure;
        record(c, config, s.label, "FAIL " + first_line(failure));
      } else {
        char verdict[64];
        std::snprintf(verdict, sizeof verdict, " ok (max|diff| at %.3g of the bound)", worst);
        record(c, config, s.label, verdict);
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  %-20s %-15s load and %zu runs: %.2f s\n", c.stem.c_str(), config, c.sets.size(), seconds);
  }
}

INSTANTIATE_TEST_SUITE_P(Plain, PlainZoo, ::testing::ValuesIn(zoo_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.stem; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PlainZoo);

// The zoo_plain_export fixture runs first; a short zoo would make the suite vacuous.
TEST(PlainZooFiles, EveryModelIsPresent) {
  std::set<std::string> stems;
  for (const Case& c : zoo_cases()) {
    stems.insert(c.stem);
    EXPECT_FALSE(c.sets.empty()) << c.stem << " has no input sets";
  }
  EXPECT_GE(stems.size(), 20u) << "in " << zoo_dir();
  for (const char* stem : {"resnet18",        "resnext50_32x4d",
                           "wide_resnet50_2", "densenet121",
                           "googlenet",       "inception_v3",
                           "mobilenet_v2",    "mobilenet_v3_small",
                           "mnasnet0_5",      "shufflenet_v2_x0_5",
                           "squeezenet1_1",   "efficientnet_b0",
                           "regnet_y_400mf",  "convnext_tiny",
                           "vit_b_16",        "swin_t",
                           "maxvit_t",        "alexnet",
                           "vgg11",           "transformer_seq2seq",
                           "lstm_bidir",      "gru_stateful",
                           "bert_hf",         "llama_like",
                           "distilbert_mask", "mean_pool_mask",
                           "clip_vision"})
    EXPECT_TRUE(stems.count(stem)) << stem << " is missing from " << zoo_dir();
}

// The traces are plain: the archive's central directory (its last bytes) names no extra
// files, switchyard_inputs.json or other.
TEST(PlainZooFiles, TracesCarryNoHints) {
  for (const Case& c : zoo_cases()) {
    std::ifstream in(zoo_dir() + "/" + c.module, std::ios::binary | std::ios::ate);
    ASSERT_TRUE(in) << c.module;
    const std::streamoff size = in.tellg(), tail = std::min<std::streamoff>(size, 4 << 20);
    std::string bytes(static_cast<size_t>(tail), '\0');
    in.seekg(size - tail);
    in.read(bytes.data(), tail);
    ASSERT_NE(bytes.find(c.stem + "/data.pkl"), std::string::npos) << c.module << ": no TorchScript archive directory";
    EXPECT_EQ(bytes.find("switchyard_inputs.json"), std::string::npos) << c.module;
    EXPECT_EQ(bytes.find(c.stem + "/extra/"), std::string::npos) << c.module << " has extra files";
  }
}

namespace {

using OpCounts = std::map<std::string, std::pair<int, std::string>>;  // op -> count, a backend

// The ops that zoo model `stem` runs on `config` at its first input set; sets `found`.
OpCounts planned_ops(const std::string& stem, bool* found, const std::string& config = config_path("default.toml")) {
  torchscript::register_loader();
  OpCounts ops;
  *found = false;
  for (const Case& c : zoo_cases()) {
    if (c.stem != stem) continue;
    Runtime rt(Options{config});
    auto model = rt.load(zoo_dir() + "/" + c.module);
    for (const PlanEntry& e : model->plan(torchscript::load_tensors(zoo_dir() + "/" + c.sets[0].inputs)))
      ops[e.op] = {ops[e.op].first + 1, e.backend};
    *found = true;
  }
  return ops;
}

}  // namespace

// The host's pattern pass on a real trace: llama_like's RMSNorms, SwiGLUs, rotary embeddings
// and grouped-query attentions each run as one node on default.toml (parity: above).
TEST(PlainZooPatterns, LlamaLikeLayersRunAsOneNodeEach) {
  bool found = false;
  OpCounts ops = planned_ops("llama_like", &found);
  ASSERT_TRUE(found) << "llama_like is not in " << zoo_dir();
  EXPECT_EQ(ops["switchyard::rms_norm"], std::make_pair(5, std::string("elementwise")));  // 2 layers x 2, and the last
  EXPECT_EQ(ops["switchyard::swiglu"], std::make_pair(2, std::string("linalg")));
  EXPECT_EQ(ops["switchyard::rotary"], std::make_pair(4, std::string("elementwise")));  // q and k per layer
  EXPECT_EQ(ops["aten::scaled_dot_product_attention"], std::make_pair(2, std::string("attention")));
  EXPECT_EQ(ops.count("aten::pow"), 0u);
  EXPECT_EQ(ops["aten::expand"].first, 1) << "the mask's; no key or value is repeated";
}

// ShuffleNet's blocks end in cat + channel shuffle (view, transpose, contiguous, view): each
// runs as one switchyard::channel_shuffle on the conv plugin, which reads the branches'
// nhwc outputs where they are (parity: above).
TEST(PlainZooPatterns, ShuffleNetChannelShufflesRunAsOneNodeEach) {
  bool found = false;
  OpCounts ops = planned_ops("shufflenet_v2_x0_5", &found);
  ASSERT_TRUE(found) << "shufflenet_v2_x0_5 is not in " << zoo_dir();
  EXPECT_EQ(ops["switchyard::channel_shuffle"], std::make_pair(16, std::string("conv")));  // 13 blocks, 3 downsampling
  EXPECT_EQ(ops.count("aten::cat"), 0u);
  EXPECT_EQ(ops.count("aten::transpose"), 0u);
}

// DenseNet concatenates every earlier feature map before each norm1 + relu1 (and before
// each transition's norm and norm5): each cat runs with its norm as one conv-plugin node
// that normalises the parts where they lie, at any batch (parity: above).
TEST(PlainZooPatterns, DenseNetConcatenationsRunWithTheirNorms) {
  bool found = false;
  OpCounts ops = planned_ops("densenet121", &found);
  ASSERT_TRUE(found) << "densenet121 is not in " << zoo_dir();
  EXPECT_EQ(ops["aten::cat+aten::batch_norm+aten::relu"],
            std::make_pair(62, std::string("conv")));  // 58 layers, 4 ends
  EXPECT_EQ(ops.count("aten::cat"), 0u);
}

// RegNet's residual is x + f(x): the block's last convolution feeds the add's second input,
// and the add (commutative) fuses with it and the relu after as conv + add + relu, written
// over x in place (parity: above).
TEST(PlainZooPatterns, RegNetResidualsFuseIntoTheirLastConvolution) {
  bool found = false;
  OpCounts ops = planned_ops("regnet_y_400mf", &found);
  ASSERT_TRUE(found) << "regnet_y_400mf is not in " << zoo_dir();
  EXPECT_EQ(ops["aten::_convolution+aten::add+aten::relu"], std::make_pair(16, std::string("conv")));
  EXPECT_EQ(ops["aten::add"].second, "conv") << "each add is folded into its convolution";
}

// A rule that routes the shuffle's last view to a plugin without channel_shuffle keeps the
// trace's views there: the pattern pass asks the node's own routing, not every plugin.
TEST(PlainZooPatterns, ARuleThatCannotReachTheShuffleKeepsTheTrace) {
  const std::string config =
      (std::filesystem::temp_directory_path() / ("switchyard_views_" + std::to_string(::getpid()) + ".toml")).string();
  std::ofstream(config) << "[[rules]]\nnode = \"*view*\"\nbackends = [\"shape\"]\n";
  bool found = false;
  OpCounts ops = planned_ops("shufflenet_v2_x0_5", &found, config);
  std::filesystem::remove(config);
  ASSERT_TRUE(found) << "shufflenet_v2_x0_5 is not in " << zoo_dir();
  EXPECT_EQ(ops.count("switchyard::channel_shuffle"), 0u);
  EXPECT_EQ(ops["aten::transpose"].first, 16);
  EXPECT_EQ(ops["aten::view"].second, "shape");
}
