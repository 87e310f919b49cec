// The TOML config loader: a full round trip, every error with its exact position,
// unknown-key warnings, path resolution, backend checks and glob matching.
#include "config/config.hpp"

#include <switchyard/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace cfgns = switchyard::config;
using switchyard::Error;
using switchyard::ErrorKind;

namespace {

// The message of the Config error that parsing `text` throws ("" if none is thrown).
std::string parse_error(const std::string& text, const std::string& source = "x.toml") {
  try {
    cfgns::parse_config(text, source);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    return e.what();
  }
  ADD_FAILURE() << "no error thrown for:\n" << text;
  return "";
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

#define EXPECT_STARTS_WITH(text, prefix) \
  EXPECT_TRUE(starts_with(text, prefix)) << "message: " << (text) << "\nexpected prefix: " << (prefix)

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE((text).find(part), std::string::npos) << "message: " << (text) << "\nmissing: " << (part)

const char* kFullConfig = R"([plugins]
paths = ["../build/plugins", "/opt/sy/plugins"]
load = ["example", "aten", "./vendor/libfast.so"]

[selection]
default = ["example", "aten"]
strict = true

[[rules]]
op = "aten::linear"
backends = ["linalg", "aten"]

[[rules]]
node = "encoder.*"
module = "layer1.*"
family = "attention"
backends = ["attention"]

[runtime]
intra_op_threads = 4
inter_op_threads = 2
node_io = "outputs"
log_level = "debug"
)";

}  // namespace

TEST(Config, FullRoundTrip) {
  cfgns::Config cfg = cfgns::parse_config(kFullConfig, "/srv/sy/configs/full.toml");
  EXPECT_EQ(cfg.source, "/srv/sy/configs/full.toml");
  EXPECT_EQ(cfg.plugin_paths, (std::vector<std::string>{"/srv/sy/build/plugins", "/opt/sy/plugins"}));
  EXPECT_EQ(cfg.load, (std::vector<std::string>{"example", "aten", "/srv/sy/configs/vendor/libfast.so"}));
  EXPECT_EQ(cfg.default_backends, (std::vector<std::string>{"example", "aten"}));
  ASSERT_EQ(cfg.default_backends_pos.size(), 2u);
  EXPECT_EQ(cfg.default_backends_pos[1].str(), "/srv/sy/configs/full.toml:6:23");
  EXPECT_TRUE(cfg.strict);

  ASSERT_EQ(cfg.rules.size(), 2u);
  EXPECT_EQ(cfg.rules[0].op, "aten::linear");
  EXPECT_EQ(cfg.rules[0].backends, (std::vector<std::string>{"linalg", "aten"}));
  EXPECT_EQ(cfg.rules[0].pos.line, 9);
  EXPECT_EQ(cfg.rules[0].pos.column, 1);
  ASSERT_EQ(cfg.rules[0].backend_pos.size(), 2u);
  EXPECT_EQ(cfg.rules[0].backend_pos[0].line, 11);
  EXPECT_EQ(cfg.rules[0].backend_pos[0].column, 13);
  EXPECT_EQ(cfg.rules[0].backend_pos[1].column, 23);
  EXPECT_EQ(cfg.rules[1].node, "encoder.*");
  EXPECT_EQ(cfg.rules[1].module, "layer1.*");
  EXPECT_EQ(cfg.rules[1].family, "attention");
  EXPECT_TRUE(cfg.rules[1].op.empty());
  EXPECT_EQ(cfg.rules[1].pos.str(), "/srv/sy/configs/full.toml:13:1");

  EXPECT_EQ(cfg.intra_op_threads, 4);
  EXPECT_EQ(cfg.inter_op_threads, 2);
  EXPECT_EQ(cfg.capture, cfgns::CaptureMode::Outputs);
  EXPECT_EQ(cfg.log_level, "debug");
  EXPECT_TRUE(cfg.warnings.empty());
}

TEST(Config, EmptyFileGivesDefaults) {
  cfgns::Config cfg = cfgns::parse_config("", "empty.toml");
  EXPECT_TRUE(cfg.plugin_paths.empty());
  EXPECT_TRUE(cfg.load.empty());
  EXPECT_TRUE(cfg.default_backends.empty());
  EXPECT_FALSE(cfg.strict);
  EXPECT_TRUE(cfg.rules.empty());
  EXPECT_EQ(cfg.intra_op_threads, 0);
  EXPECT_EQ(cfg.inter_op_threads, 1);
  EXPECT_EQ(cfg.capture, cfgns::CaptureMode::None);
  EXPECT_EQ(cfg.log_level, "info");
  EXPECT_NO_THROW(cfgns::parse_config("rules = []\n", "x.toml"));
}

TEST(Config, NodeIoValues) {
  EXPECT_EQ(cfgns::parse_config("[runtime]\nnode_io = \"all\"\n", "x").capture, cfgns::CaptureMode::All);
  EXPECT_EQ(cfgns::parse_config("[runtime]\nnode_io = \"none\"\n", "x").capture, cfgns::CaptureMode::None);
  EXPECT_EQ(cfgns::parse_config("[runtime]\nnode_io = \"stream\"\n", "x").capture, cfgns::CaptureMode::Stream);
  EXPECT_STREQ(cfgns::capture_mode_name(cfgns::CaptureMode::None), "none");
  EXPECT_STREQ(cfgns::capture_mode_name(cfgns::CaptureMode::Outputs), "outputs");
  EXPECT_STREQ(cfgns::capture_mode_name(cfgns::CaptureMode::All), "all");
  EXPECT_STREQ(cfgns::capture_mode_name(cfgns::CaptureMode::Stream), "stream");
}

TEST(Config, SourcePosStr) {
  EXPECT_EQ((cfgns::SourcePos{"a/b.toml", 3, 7}).str(), "a/b.toml:3:7");
  EXPECT_EQ((cfgns::SourcePos{}).str(), "<config>:0:0");
}

// ---- errors, each with its exact position -----------------------------------------

TEST(ConfigErrors, SyntaxError) {
  std::string msg = parse_error("[runtime]\nnode_io = \"all\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:15: ");
  msg = parse_error("[selection\n");
  EXPECT_STARTS_WITH(msg, "x.toml:1:11: ");
  msg = parse_error("[runtime]\nlog_level = \"info\"\nlog_level = \"warn\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:3:13: ");  // TOML++ points past the redefined value
  EXPECT_CONTAINS(msg, "log_level");
}

TEST(ConfigErrors, PathsNotAnArray) {
  std::string msg = parse_error("[plugins]\npaths = \"../build/plugins\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:9: ");
  EXPECT_CONTAINS(msg, "[plugins] paths: expected an array of strings, got a string");
}

TEST(ConfigErrors, ArrayEntryNotAString) {
  std::string msg = parse_error("[plugins]\nload = [\"aten\", 3]\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:17: ");
  EXPECT_CONTAINS(msg, "expected an array of strings, but this entry is an integer");
}

TEST(ConfigErrors, SectionNotATable) {
  std::string msg = parse_error("selection = [\"aten\"]\n");
  EXPECT_STARTS_WITH(msg, "x.toml:1:13: ");
  EXPECT_CONTAINS(msg, "[selection]: expected a table, got an array");
}

TEST(ConfigErrors, RulesAsPlainTable) {
  std::string msg = parse_error("[rules]\nop = \"aten::add\"\nbackends = [\"aten\"]\n");
  EXPECT_STARTS_WITH(msg, "x.toml:1:1: ");
  EXPECT_CONTAINS(msg, "expected [[rules]] tables");
}

TEST(ConfigErrors, StrictNotABoolean) {
  std::string msg = parse_error("[selection]\nstrict = \"yes\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:10: ");
  EXPECT_CONTAINS(msg, "expected a boolean, got a string");
}

TEST(ConfigErrors, MatcherNotAString) {
  std::string msg = parse_error("[[rules]]\nop = 1\nbackends = [\"aten\"]\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:6: ");
  EXPECT_CONTAINS(msg, "[[rules]] #1 op: expected a string, got an integer");
}

TEST(ConfigErrors, RuleWithoutMatcher) {
  std::string msg =
      parse_error("[[rules]]\nop = \"aten::add\"\nbackends = [\"aten\"]\n\n[[rules]]\nbackends = [\"aten\"]\n");
  EXPECT_STARTS_WITH(msg, "x.toml:5:1: ");
  EXPECT_CONTAINS(msg, "[[rules]] #2: no matcher");
}

TEST(ConfigErrors, RuleWithoutBackends) {
  std::string msg = parse_error("\n[[rules]]\nnode = \"fc*\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:1: ");
  EXPECT_CONTAINS(msg, "missing required key 'backends'");
}

TEST(ConfigErrors, RuleWithEmptyBackends) {
  std::string msg = parse_error("[[rules]]\nfamily = \"conv\"\nbackends = []\n");
  EXPECT_STARTS_WITH(msg, "x.toml:3:12: ");
  EXPECT_CONTAINS(msg, "[[rules]] #1 backends: must not be empty");
}

TEST(ConfigErrors, InvalidNodeIo) {
  std::string msg = parse_error("[runtime]\nnode_io = \"inputs\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:11: ");
  EXPECT_CONTAINS(msg, "invalid value 'inputs' (expected one of: none, outputs, all, stream)");
}

TEST(ConfigErrors, InvalidLogLevel) {
  std::string msg = parse_error("[runtime]\nintra_op_threads = 1\nlog_level = \"verbose\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:3:13: ");
  EXPECT_CONTAINS(msg, "invalid value 'verbose'");
}

TEST(ConfigErrors, NegativeThreads) {
  std::string msg = parse_error("[runtime]\nintra_op_threads = -2\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:20: ");
  EXPECT_CONTAINS(msg, "[runtime] intra_op_threads: must be >= 0, got -2");
  msg = parse_error("[runtime]\ninter_op_threads = -1\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:20: ");
}

TEST(ConfigErrors, ThreadsNotAnInteger) {
  std::string msg = parse_error("[runtime]\ninter_op_threads = 1.5\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:20: ");
  EXPECT_CONTAINS(msg, "expected an integer, got a float");
}

TEST(ConfigRules, OptionsOfEveryKind) {
  cfgns::Config c = cfgns::parse_config(
      "[[rules]]\nfamily = \"conv\"\nbackends = [\"conv\"]\n"
      "options = { layout = \"plain\", tiles = 4, scale = 0.5, fast = true }\n",
      "x.toml");
  ASSERT_EQ(c.rules.size(), 1u);
  const std::vector<cfgns::RuleOption>& o = c.rules[0].options;
  ASSERT_EQ(o.size(), 4u);
  auto find = [&](const std::string& key) -> const cfgns::RuleOption& {
    for (const cfgns::RuleOption& x : o)
      if (x.key == key) return x;
    ADD_FAILURE() << "no option " << key;
    return o[0];
  };
  EXPECT_EQ(find("layout").kind, cfgns::RuleOption::Kind::String);
  EXPECT_EQ(find("layout").s, "plain");
  EXPECT_EQ(find("tiles").kind, cfgns::RuleOption::Kind::Int);
  EXPECT_EQ(find("tiles").i, 4);
  EXPECT_EQ(find("scale").kind, cfgns::RuleOption::Kind::Float);
  EXPECT_DOUBLE_EQ(find("scale").f, 0.5);
  EXPECT_EQ(find("fast").kind, cfgns::RuleOption::Kind::Int);
  EXPECT_EQ(find("fast").i, 1);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(ConfigRules, OptionsMustBeATableOfScalars) {
  std::string msg = parse_error("[[rules]]\nop = \"aten::relu\"\nbackends = [\"aten\"]\noptions = \"fast\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:4:11: ");
  EXPECT_CONTAINS(msg, "[[rules]] #1 options: expected a table");
  msg = parse_error("[[rules]]\nop = \"aten::relu\"\nbackends = [\"aten\"]\noptions = { tiles = [1, 2] }\n");
  EXPECT_STARTS_WITH(msg, "x.toml:4:21: ");
  EXPECT_CONTAINS(msg, "[[rules]] #1 options tiles: expected a string, number or boolean, got an array");
}

TEST(ConfigErrors, MissingFile) {
  try {
    cfgns::load_config("/nonexistent/switchyard.toml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    EXPECT_STARTS_WITH(std::string(e.what()), "/nonexistent/switchyard.toml:");
  }
}

// ---- unknown keys are warnings -----------------------------------------------------

TEST(ConfigWarnings, NearMissInRule) {
  cfgns::Config cfg =
      cfgns::parse_config("[[rules]]\nop = \"aten::add\"\nbackend = [\"example\"]\nbackends = [\"aten\"]\n", "w.toml");
  ASSERT_EQ(cfg.warnings.size(), 1u);
  EXPECT_STARTS_WITH(cfg.warnings[0], "w.toml:3:1: unknown key 'backend' in [[rules]] #1");
  EXPECT_CONTAINS(cfg.warnings[0], "did you mean 'backends'?");
  EXPECT_EQ(cfg.rules.at(0).backends, std::vector<std::string>{"aten"});
}

TEST(ConfigWarnings, EverywhereAndOnlyCloseSuggestions) {
  cfgns::Config cfg = cfgns::parse_config(
      "colour = 1\n[runtim]\nx = 1\n[plugins]\npath = []\n[selection]\ndefualt = []\n"
      "[runtime]\nintra_threads = 2\n",
      "w.toml");
  ASSERT_EQ(cfg.warnings.size(), 5u);
  // Top-level keys come back in TOML++'s (sorted) table order.
  EXPECT_EQ(cfg.warnings[0], "w.toml:1:1: unknown key 'colour' in the top level (ignored)");
  EXPECT_EQ(cfg.warnings[1], "w.toml:2:2: unknown key 'runtim' in the top level (ignored); did you mean 'runtime'?");
  EXPECT_EQ(cfg.warnings[2], "w.toml:5:1: unknown key 'path' in [plugins] (ignored); did you mean 'paths'?");
  EXPECT_EQ(cfg.warnings[3], "w.toml:7:1: unknown key 'defualt' in [selection] (ignored); did you mean 'default'?");
  EXPECT_EQ(cfg.warnings[4],
            "w.toml:9:1: unknown key 'intra_threads' in [runtime] (ignored); did you mean "
            "'intra_op_threads'?");
}

// ---- paths ---------------------------------------------------------------------------

TEST(ConfigPaths, RelativeToConfigDirectory) {
  cfgns::Config cfg = cfgns::parse_config(
      "[plugins]\npaths = [\"../build/plugins\", \"/abs/plugins\", \"local\"]\n"
      "load = [\"aten\", \"libs/libx.so\"]\n",
      "configs/dev.toml");
  EXPECT_EQ(cfg.plugin_paths, (std::vector<std::string>{"build/plugins", "/abs/plugins", "configs/local"}));
  EXPECT_EQ(cfg.load, (std::vector<std::string>{"aten", "configs/libs/libx.so"}));
  // A bare file name: paths stay relative to the working directory.
  cfg = cfgns::parse_config("[plugins]\npaths = [\"p\"]\n", "dev.toml");
  EXPECT_EQ(cfg.plugin_paths, std::vector<std::string>{"p"});
}

TEST(ConfigPaths, LoadConfigFromFile) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() /
                 ("sy_cfg_test_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::create_directories(dir / "configs");
  fs::path file = dir / "configs" / "run.toml";
  std::ofstream(file) << "[plugins]\npaths = [\"../plugins\"]\n[runtime]\nnode_io = \"all\"\n";
  cfgns::Config cfg = cfgns::load_config(file.string());
  EXPECT_EQ(cfg.source, file.string());
  EXPECT_EQ(cfg.plugin_paths, std::vector<std::string>{(dir / "plugins").string()});
  EXPECT_EQ(cfg.capture, cfgns::CaptureMode::All);
  fs::remove_all(dir);
}

// ---- backends against loaded plugins -------------------------------------------------

TEST(ConfigBackends, UnknownBackendInRule) {
  cfgns::Config cfg = cfgns::parse_config(
      "[selection]\ndefault = [\"aten\"]\n[[rules]]\nop = \"aten::linear\"\n"
      "backends = [\"aten\", \"linalgg\"]\n",
      "b.toml");
  EXPECT_NO_THROW(cfgns::check_backends(cfg, {"aten", "linalgg"}));
  try {
    cfgns::check_backends(cfg, {"example", "aten", "linalg"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    EXPECT_EQ(std::string(e.what()),
              "b.toml:5:21: unknown backend 'linalgg' in [[rules]] #1 backends (loaded plugins: "
              "example, aten, linalg); did you mean 'linalg'?");
  }
}

TEST(ConfigBackends, UnknownBackendInDefaultList) {
  cfgns::Config cfg = cfgns::parse_config("[selection]\ndefault = [\"example\", \"cuda\"]\n", "b.toml");
  try {
    cfgns::check_backends(cfg, {"example", "aten"});
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_STARTS_WITH(msg, "b.toml:2:23: unknown backend 'cuda' in [selection] default");
    EXPECT_EQ(msg.find("did you mean"), std::string::npos);
  }
}

TEST(ConfigBackends, ProgrammaticConfigWithoutPositions) {
  cfgns::Config cfg;
  cfg.default_backends = {"nope"};
  EXPECT_THROW(cfgns::check_backends(cfg, {}), Error);
}

// ---- glob ----------------------------------------------------------------------------

TEST(Glob, Cases) {
  using cfgns::glob_match;
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "encoder.layers.0"));
  EXPECT_TRUE(glob_match("aten::linear", "aten::linear"));
  EXPECT_FALSE(glob_match("aten::linear", "aten::linear_"));
  EXPECT_TRUE(glob_match("encoder.*", "encoder.layers.0.attn"));
  EXPECT_FALSE(glob_match("encoder.*", "decoder.layers.0"));
  EXPECT_FALSE(glob_match("encoder.*", "encoder"));
  EXPECT_TRUE(glob_match("layer?.conv1", "layer1.conv1"));
  EXPECT_FALSE(glob_match("layer?.conv1", "layer10.conv1"));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("*.conv*", "layer3.0.conv2"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(glob_match("**a", "bba"));
  EXPECT_TRUE(glob_match("layer*.?.downsample.*", "layer3.0.downsample.0"));
}

TEST(Glob, PathologicalPatternIsFast) {
  std::string text(20000, 'a');
  std::string pattern;
  for (int i = 0; i < 20; ++i) pattern += "a*";
  pattern += "b";
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(cfgns::glob_match(pattern, text));
  EXPECT_TRUE(cfgns::glob_match(pattern.substr(0, pattern.size() - 1), text));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 2000);
}

// ---- the configs shipped in configs/ ------------------------------------------------------

TEST(ShippedConfigs, DefaultAndReferenceParseCleanly) {
  const std::string dir = std::string(SWITCHYARD_SOURCE_DIR) + "/configs/";
  cfgns::Config def = cfgns::load_config(dir + "default.toml");
  EXPECT_TRUE(def.warnings.empty());
  EXPECT_EQ(def.default_backends,
            (std::vector<std::string>{"linalg", "conv", "attention", "elementwise", "shape", "aten"}));
  EXPECT_TRUE(def.fuse);
  EXPECT_EQ(def.intra_op_threads, 2);
  EXPECT_EQ(def.capture, cfgns::CaptureMode::None);
  EXPECT_TRUE(def.plugin_paths.empty());
  EXPECT_NO_THROW(cfgns::check_backends(def, {"linalg", "conv", "attention", "elementwise", "shape", "aten"}));

  cfgns::Config example = cfgns::load_config(dir + "example.toml");
  EXPECT_TRUE(example.warnings.empty());
  EXPECT_EQ(example.default_backends, (std::vector<std::string>{"example", "aten"}));

  cfgns::Config routed = cfgns::load_config(dir + "encoder-attention.toml");
  EXPECT_TRUE(routed.warnings.empty());
  ASSERT_EQ(routed.rules.size(), 1u);
  EXPECT_EQ(routed.rules[0].module, "encoder.layers.*");
  EXPECT_EQ(routed.rules[0].backends, (std::vector<std::string>{"attention", "aten"}));

  cfgns::Config ref = cfgns::load_config(dir + "reference.toml");
  EXPECT_TRUE(ref.warnings.empty());
  EXPECT_EQ(ref.default_backends, std::vector<std::string>{"aten"});
  EXPECT_EQ(ref.load, std::vector<std::string>{"aten"});
  EXPECT_TRUE(ref.rules.empty());
}

// ---- [precision] ------------------------------------------------------------------------

TEST(Config, PrecisionCompute) {
  EXPECT_FALSE(cfgns::parse_config("", "x.toml").compute.has_value()) << "unset: decided per model";
  const cfgns::Config fp32 = cfgns::parse_config("[precision]\ncompute = \"fp32\"\n", "x.toml");
  ASSERT_TRUE(fp32.compute.has_value());
  EXPECT_EQ(*fp32.compute, cfgns::Compute::Float32);
  EXPECT_EQ(fp32.compute_pos.str(), "x.toml:2:11");
  EXPECT_EQ(*cfgns::parse_config("[precision]\ncompute = \"as-is\"\n", "x.toml").compute, cfgns::Compute::AsIs);
  EXPECT_EQ(*cfgns::parse_config("[precision]\ncompute = \"bf16\"\n", "x.toml").compute, cfgns::Compute::BFloat16);
}

TEST(Config, SelectionPatterns) {
  EXPECT_TRUE(cfgns::parse_config("", "x.toml").patterns);
  EXPECT_FALSE(cfgns::parse_config("[selection]\npatterns = false\n", "x.toml").patterns);
  EXPECT_CONTAINS(parse_error("[selection]\npatterns = 1\n"), "[selection] patterns");
}

TEST(Config, PrecisionRules) {
  const cfgns::Config cfg = cfgns::parse_config(
      "[precision]\ncompute = \"bf16\"\n\n[[precision.rules]]\nmodule = \"head.*\"\ncompute = \"fp32\"\n\n"
      "[[precision.rules]]\nop = \"aten::conv2d\"\nfamily = \"conv\"\ncompute = \"bf16\"\n",
      "x.toml");
  ASSERT_EQ(cfg.precision_rules.size(), 2u);
  EXPECT_EQ(cfg.precision_rules[0].module, "head.*");
  EXPECT_EQ(cfg.precision_rules[0].compute, cfgns::Compute::Float32);
  EXPECT_EQ(cfg.precision_rules[0].pos.str(), "x.toml:4:1");
  EXPECT_EQ(cfg.precision_rules[1].op, "aten::conv2d");
  EXPECT_EQ(cfg.precision_rules[1].family, "conv");
  EXPECT_EQ(cfg.precision_rules[1].compute, cfgns::Compute::BFloat16);
  EXPECT_TRUE(cfg.warnings.empty());
}

TEST(ConfigErrors, PrecisionComputeNames) {
  std::string msg = parse_error("[precision]\ncompute = \"half\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:2:11: ");
  EXPECT_CONTAINS(msg, "[precision] compute: invalid value 'half' (expected one of: as-is, fp32, bf16)");
}

TEST(ConfigErrors, PrecisionRules) {
  std::string msg = parse_error("[precision]\n[[precision.rules]]\nop = \"aten::linear\"\ncompute = \"as-is\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:4:11: ");
  EXPECT_CONTAINS(msg, "[[precision.rules]] #1 compute = \"as-is\": a rule chooses \"fp32\" or \"bf16\" per node");
  msg = parse_error("[[precision.rules]]\nop = \"aten::linear\"\ncompute = \"int8\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:3:11: ");
  EXPECT_CONTAINS(msg, "invalid value 'int8' (expected one of: as-is, fp32, bf16)");
  msg = parse_error("[[precision.rules]]\nop = \"aten::linear\"\n");
  EXPECT_STARTS_WITH(msg, "x.toml:1:1: ");
  EXPECT_CONTAINS(msg, "missing required key 'compute'");
  msg = parse_error("[[precision.rules]]\ncompute = \"bf16\"\n");
  EXPECT_CONTAINS(msg, "no matcher; give at least one of op, node, module, family");
}
