// The public embedding API as an embedder (or the CLI) sees it, compiled against the public
// headers only: graphs built, checked, saved and read back with switchyard::Graph and run
// on the example plugin; the resolved config (Runtime::config, read_config); the log level.
#include <switchyard/sdk.h>
#include <switchyard/graph.hpp>
#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace switchyard;
namespace fs = std::filesystem;

namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};

// Every file a test writes goes in this process's own folder, removed at the end.
class TempDir : public ::testing::Environment {
 public:
  static fs::path path() { return fs::temp_directory_path() / ("sy_public_api_" + std::to_string(::getpid())); }
  void SetUp() override { fs::create_directories(path()); }
  void TearDown() override { fs::remove_all(path()); }
};
::testing::Environment* const kTempDir = ::testing::AddGlobalTestEnvironment(new TempDir);

std::string temp_path(const std::string& name) { return (TempDir::path() / name).string(); }

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

const char* kExampleOnly = "[plugins]\nload = [\"example\"]\n[selection]\ndefault = [\"example\"]\nstrict = true\n";

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

// y = relu(x + 2 * w), w a constant: one int attribute, a module path, two nodes.
Graph add_relu(Tensor w) {
  Graph g;
  const Graph::ValueId x = g.add_input("x", kF32, {-1, 3});
  const Graph::ValueId wv = g.add_constant("w", std::move(w));
  const Graph::ValueId sum = g.add_node("add", "aten::add", {x, wv}, {"sum"}, {{"alpha", 2}}, "block")[0];
  g.add_output(g.add_node("act", "aten::relu", {sum}, {"y"}, {}, "block.act")[0]);
  return g;
}

TEST(PublicApi, AGraphBuiltInMemoryRuns) {
  Runtime rt(Options{write_file("example.toml", kExampleOnly)});
  auto model = rt.load(add_relu(floats({3}, {1, -1, 0.5f})));
  EXPECT_EQ(model->input_names(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(model->input_shapes(), (std::vector<std::vector<int64_t>>{{-1, 3}}));
  const std::vector<Tensor> out = model->run({floats({2, 3}, {0, 0, 0, -5, 3, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values_of(out[0]), (std::vector<float>{2, 0, 1, 0, 1, 2}));
  const std::vector<PlanEntry> plan = model->plan({floats({2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].module_path, "block");
  EXPECT_EQ(plan[1].backend, "example");
}

TEST(PublicApi, AttributesKeepTheirKinds) {
  const Attribute one = 1, half = 0.5, name = "mean", dims = std::vector<int64_t>{0, 1};
  EXPECT_TRUE(std::holds_alternative<int64_t>(one));
  EXPECT_TRUE(std::holds_alternative<double>(half));
  EXPECT_TRUE(std::holds_alternative<std::string>(name));
  EXPECT_TRUE(std::holds_alternative<std::vector<int64_t>>(dims));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(Attribute{}));
}

TEST(PublicApi, ABadGraphIsRefusedNamingTheValue) {
  Graph g;
  const Graph::ValueId x = g.add_input("x", kF32, {3});
  g.add_node("act", "aten::relu", {x, 7}, {"y"});
  g.add_output(g.find_value("y"));
  try {
    g.validate();
    ADD_FAILURE() << "a node reading value 7 of a 2-value graph was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Graph);
    EXPECT_NE(std::string(e.what()).find("act"), std::string::npos) << e.what();
  }
  Runtime rt(Options{write_file("example.toml", kExampleOnly)});
  EXPECT_THROW(rt.load(std::move(g)), Error);
}

TEST(PublicApi, SavedGraphsReadBackTheSame) {
  const std::string json = temp_path("add_relu.json");
  add_relu(floats({3}, {1, -1, 0.5f})).save(json);
  EXPECT_TRUE(fs::exists(Graph::weights_path_for(json)));
  const Graph back = Graph::read(json);
  ASSERT_EQ(back.inputs().size(), 1u);
  EXPECT_EQ(back.inputs()[0].name, "x");
  EXPECT_EQ(back.inputs()[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(back.output_names(), (std::vector<std::string>{"y"}));
  EXPECT_EQ(back.node_ops(), (std::vector<std::string>{"aten::add", "aten::relu"}));
  EXPECT_EQ(back.num_nodes(), 2u);
  EXPECT_EQ(back.num_constants(), 1u);
  Runtime rt(Options{write_file("example.toml", kExampleOnly)});
  EXPECT_EQ(values_of(rt.load(back)->run({floats({1, 3}, {0, 0, 0})})[0]), (std::vector<float>{2, 0, 1}));
  EXPECT_THROW(Graph::read(temp_path("missing.json")), Error);
  EXPECT_THROW(Graph::read(temp_path("model.onnx")), Error);  // no reader for the extension
}

TEST(PublicApi, RuntimeShowsTheConfigWithOptionsApplied) {
  const std::string path =
      write_file("resolved.toml", std::string(kExampleOnly) +
                                      "[[rules]]\nop = \"aten::relu\"\nbackends = [\"example\"]\n"
                                      "[runtime]\nnode_io = \"outputs\"\nintra_op_threads = 1\ninter_op_threads = 2\n");
  Options options{path};
  options.capture = "all";
  options.log_level = "warn";
  Runtime rt(options);
  const RuntimeConfig& c = rt.config();
  EXPECT_EQ(c.source, path);
  EXPECT_EQ(c.capture, "all") << "Options::capture overrides the file's node_io";
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_TRUE(c.strict);
  EXPECT_TRUE(c.fuse);
  EXPECT_EQ(c.intra_op_threads, 1);
  EXPECT_EQ(c.inter_op_threads, 2);
  EXPECT_EQ(c.load, (std::vector<std::string>{"example"}));
  EXPECT_EQ(c.default_backends, (std::vector<std::string>{"example"}));
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(c.rules[0].op, "aten::relu");
  EXPECT_EQ(c.rules[0].backends, (std::vector<std::string>{"example"}));
  EXPECT_EQ(c.rules[0].where, path + ":6:1");
  EXPECT_TRUE(set_log_level("info"));
}

TEST(PublicApi, ReadConfigParsesWithoutLoadingOrLogging) {
  const std::string path = write_file("typo.toml", "[runtime]\nnode_io = \"stream\"\nnode_i = 1\n");
  const RuntimeConfig c = read_config(path);
  EXPECT_EQ(c.capture, "stream");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("unknown key 'node_i'"), std::string::npos) << c.warnings[0];
  EXPECT_EQ(read_config(write_file("empty.toml", "")).capture, "none");
  try {
    read_config(write_file("bad.toml", "[runtime]\nnode_io = \"sometimes\"\n"));
    ADD_FAILURE() << "an unknown node_io mode was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    EXPECT_NE(std::string(e.what()).find("bad.toml:2:"), std::string::npos) << e.what();
  }
}

TEST(PublicApi, LogLevelsByName) {
  EXPECT_FALSE(set_log_level("loud"));
  EXPECT_TRUE(set_log_level("error"));
  EXPECT_TRUE(set_log_level("info"));
}

}  // namespace
