// The graph file reader on broken files: clear errors naming the file, the position or
// the node/value at fault, and never a crash.
#include "graph_file_fixture.hpp"
#include "ir/graph_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace switchyard::ir {
namespace {

using test::GraphFileTest;
using test::Json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(GraphFileTest, MinimalGraphReads) {
  write_graph(minimal_graph());
  const Graph g = read_graph_file(json_path_);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[2], kNoValue);
  EXPECT_EQ(find_attr(g.nodes[0].attrs, "alpha")->i, 1);
}

TEST_F(GraphFileTest, SyntaxErrorGivesLineAndColumn) {
  write_bytes(json_path_, "{\n  \"format\": \"switchyard-graph\",\n  \"version\": 1,\n  oops\n}\n");
  const std::string message = read_error(ErrorKind::Io);
  EXPECT_THAT(message, StartsWith(json_path_ + ":4:3: JSON syntax error: "));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("json.exception")));

  write_bytes(json_path_, "{\"a\": [1, 2\n");
  EXPECT_THAT(read_error(ErrorKind::Io), StartsWith(json_path_ + ":2:1: JSON syntax error: "));
  write_bytes(json_path_, "");
  EXPECT_THAT(read_error(ErrorKind::Io), StartsWith(json_path_ + ":1:1: JSON syntax error"));
  write_bytes(json_path_, "{\"name\": \"\xff\xfe\"}");
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("JSON syntax error"));
}

TEST_F(GraphFileTest, MissingOrForeignFile) {
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr(json_path_ + ": cannot open graph file"));
  EXPECT_THAT(test::error_message([&] { read_graph_file(dir_.string()); }, ErrorKind::Io),
              HasSubstr("cannot open graph file"));
  write_bytes(json_path_, "[1, 2]");
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("top level must be a JSON object"));
  write_bytes(json_path_, R"({"format": "onnx", "version": 1})");
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("not a switchyard graph file"));
}

TEST_F(GraphFileTest, NewerVersionIsRejectedNamingBothVersions) {
  Json graph = minimal_graph();
  graph["version"] = 3;
  write_graph(graph);
  const std::string message = read_error(ErrorKind::Io);
  EXPECT_THAT(message, HasSubstr("version 3 is newer"));
  EXPECT_THAT(message, HasSubstr("(version 2)"));
  graph["version"] = "1";
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("field 'version' must be an integer"));
  graph["version"] = 0;
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("invalid graph format version 0"));
}

TEST_F(GraphFileTest, UnknownDtype) {
  Json graph = minimal_graph();
  graph["constants"][0]["dtype"] = "float8";
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("constant 'w': field 'dtype': unknown dtype 'float8'"));
  graph = minimal_graph();
  graph["inputs"][0]["dtype"] = "complex64";
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("input 'x': field 'dtype': unknown dtype 'complex64'"));
}

TEST_F(GraphFileTest, WeightsFileProblems) {
  write_graph(minimal_graph(), 40);  // 64 bytes needed
  std::string message = read_error(ErrorKind::Io);
  EXPECT_THAT(message, HasSubstr("constant 'w'"));
  EXPECT_THAT(message, HasSubstr("truncated"));
  EXPECT_THAT(message, HasSubstr("model.bin"));

  std::filesystem::remove(bin_path_);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("cannot open weights file"));

  Json graph = minimal_graph();
  graph.erase("weights");
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("constant 'w' needs a weights file"));

  graph["weights"] = ".";  // a directory opens as a stream; it must not be read as weights
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("not a regular file"));
}

TEST_F(GraphFileTest, TensorDescriptorProblems) {
  auto expect_constant_error = [&](const char* key, Json value, const std::string& expected) {
    Json graph = minimal_graph();
    graph["constants"][0][key] = std::move(value);
    write_graph(graph, 1024);
    EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr(expected)) << key;
  };
  expect_constant_error("nbytes", 60, "constant 'w': nbytes is 60 but float32 [4, 4] needs 64");
  expect_constant_error("offset", 32, "constant 'w': offset 32 is not a multiple of 64");
  expect_constant_error("offset", uint64_t(1) << 62, "lie beyond the end of weights file");
  expect_constant_error("offset", -64, "constant 'w': field 'offset' must be a non-negative integer");
  expect_constant_error("shape", Json::array({4, -4}), "constant 'w': field 'shape' has invalid dimension -4");
  expect_constant_error("shape", Json::array({int64_t(1) << 40, int64_t(1) << 40}), "is too large");
  expect_constant_error("shape", "4x4", "field 'shape' must be an array");
  expect_constant_error("nbytes", 64.0, "field 'nbytes' must be a non-negative integer");
  Json graph = minimal_graph();
  graph["constants"][0].erase("offset");
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("constant 'w': missing field 'offset'"));
}

TEST_F(GraphFileTest, UndefinedNamesNameTheNode) {
  Json graph = minimal_graph();
  graph["nodes"][0]["inputs"][0] = "x9";
  write_graph(graph);
  EXPECT_EQ(read_error(ErrorKind::Graph), json_path_ + ": node 'fc1': input 'x9' is not defined");
  graph = minimal_graph();
  graph["outputs"] = {"y", "nothing"};
  write_graph(graph);
  EXPECT_EQ(read_error(ErrorKind::Graph), json_path_ + ": graph output 'nothing' is not defined");
  graph = minimal_graph();
  graph["nodes"][0]["outputs"] = {"w"};
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Graph), HasSubstr("node 'fc1': output 'w' is already defined as a constant"));
}

TEST_F(GraphFileTest, ValidationErrorsNameTheFile) {
  Json graph = minimal_graph();
  graph["nodes"].push_back(Json::parse(R"({"name": "fc1", "op": "aten::relu", "inputs": ["y"], "outputs": ["z"]})"));
  write_graph(graph);
  EXPECT_EQ(read_error(ErrorKind::Graph), json_path_ + ": duplicate node name 'fc1' (nodes #0 and #1)");
  graph = minimal_graph();
  graph["nodes"][0]["inputs"] = {"x", "w", "back"};
  graph["nodes"].push_back(
      Json::parse(R"({"name": "loop", "op": "aten::relu", "inputs": ["y"], "outputs": ["back"]})"));
  write_graph(graph);
  const std::string message = read_error(ErrorKind::Graph);
  EXPECT_THAT(message, StartsWith(json_path_ + ": the graph has a cycle"));
  EXPECT_THAT(message, HasSubstr("'loop'"));
  graph = minimal_graph();
  graph["nodes"][0]["op"] = "";
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Graph), HasSubstr("node 'fc1' has an empty op name"));
}

TEST_F(GraphFileTest, AttributeEncodingErrors) {
  auto expect_attr_error = [&](const char* attr_json, const std::string& expected) {
    Json graph = minimal_graph();
    graph["nodes"][0]["attrs"]["dim"] = Json::parse(attr_json);
    write_graph(graph);
    EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("node 'fc1': attribute 'dim'" + expected)) << attr_json;
  };
  expect_attr_error(R"({"int": 1.5})", " (int) must be an integer");
  expect_attr_error(R"({"int": 18446744073709551615})", " (int) is too large");
  expect_attr_error(R"({"integer": 1})", ": unknown attribute kind 'integer'");
  expect_attr_error(R"({"int": 1, "float": 2.0})", " must be an object with exactly one key");
  expect_attr_error(R"(3)", " must be an object with exactly one key");
  expect_attr_error(R"({"none": 0})", " (none) must be null");
  expect_attr_error(R"({"ints": [1, "2"]})", " (ints) entry must be an integer");
  expect_attr_error(R"({"floats": [1.0, "infinity"]})", " (floats) entry must be a number");
  expect_attr_error(R"({"string": 5})", " (string) must be a string");
  expect_attr_error(R"({"tensor": {"dtype": "float32", "shape": [1], "offset": 0}})",
                    " (tensor): missing field 'nbytes'");

  Json graph = minimal_graph();
  graph["nodes"][0]["attrs"] = Json::array();
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("node 'fc1': field 'attrs' must be an object"));
}

TEST_F(GraphFileTest, FloatAttributesAcceptIntegersAndNonFiniteStrings) {
  Json graph = minimal_graph();
  graph["nodes"][0]["attrs"] = Json::parse(R"({"eps": {"float": 1}, "lo": {"float": "-inf"},
                                              "v": {"floats": [2, "nan", 0.5]}})");
  write_graph(graph);
  const Graph g = read_graph_file(json_path_);
  const Attributes& attrs = g.nodes[0].attrs;
  EXPECT_EQ(find_attr(attrs, "eps")->kind, AttrKind::Float);
  EXPECT_EQ(find_attr(attrs, "eps")->f, 1.0);
  EXPECT_TRUE(std::isinf(find_attr(attrs, "lo")->f));
  EXPECT_EQ(find_attr(attrs, "v")->floats.size(), 3u);
  EXPECT_TRUE(std::isnan(find_attr(attrs, "v")->floats[1]));
}

TEST_F(GraphFileTest, DuplicateKeysAndDeepNestingAreRejected) {
  write_bytes(json_path_, R"({"format": "switchyard-graph", "version": 1, "version": 2})");
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("duplicate JSON key 'version'"));
  write_bytes(json_path_, std::string(200000, '[') + std::string(200000, ']'));
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("nested deeper than"));
}

TEST_F(GraphFileTest, WrongFieldTypes) {
  auto expect_error = [&](const Json& graph, const std::string& expected) {
    write_graph(graph);
    EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr(expected));
  };
  Json graph = minimal_graph();
  graph["nodes"] = Json::object();
  expect_error(graph, "field 'nodes' must be an array");
  graph = minimal_graph();
  graph["nodes"][0]["inputs"][0] = 3;
  expect_error(graph, "node 'fc1': input name (or null) must be a string");
  graph = minimal_graph();
  graph["nodes"][0].erase("op");
  expect_error(graph, "node 'fc1': missing field 'op'");
  graph = minimal_graph();
  graph["nodes"][0]["name"] = nullptr;
  expect_error(graph, "node #0: field 'name' must be a string");
  graph = minimal_graph();
  graph["inputs"][0]["shape"] = {2, -2};
  expect_error(graph, "input 'x': field 'shape' has invalid dimension -2 (use -1 for a free dimension)");
  graph = minimal_graph();
  graph.erase("outputs");
  expect_error(graph, "graph file: missing field 'outputs'");
}

// Every prefix of a valid file, and every single-byte corruption of it, gives an Error or
// a graph: never a crash. (A light stand-in for the fuzzer.)
TEST_F(GraphFileTest, TruncatedAndCorruptedFilesNeverCrash) {
  Json graph = minimal_graph();
  graph["nodes"][0]["attrs"] = Json::parse(R"({"dim": {"ints": [1, -1]}, "t": {"tensor":
      {"dtype": "int8", "shape": [4], "offset": 0, "nbytes": 4}}, "s": {"string": "x"}})");
  const std::string text = graph.dump();
  write_bytes(bin_path_, std::string(64, '\x02'));
  int accepted = 0;
  auto try_read = [&](const std::string& candidate) {
    write_bytes(json_path_, candidate);
    try {
      read_graph_file(json_path_);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), StartsWith(json_path_ + ":"));
    }
  };
  for (size_t length = 0; length <= text.size(); ++length) try_read(text.substr(0, length));
  for (size_t i = 0; i < text.size(); ++i)
    for (char replacement : {'"', '0', '-', '{', ']'}) {
      std::string corrupted = text;
      corrupted[i] = replacement;
      try_read(corrupted);
    }
  EXPECT_GT(accepted, 0);
}

TEST(DemoGraph, MlpReadsAndValidates) {
  const Graph g = read_graph_file(std::string(SWITCHYARD_TEST_SOURCE_DIR) + "/tools/demo/mlp.json");
  std::vector<std::string> names, ops;
  for (const Node& node : g.nodes) {
    names.push_back(node.name);
    ops.push_back(node.op);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fc1", "act", "residual", "gated", "fc2", "softmax"}));
  EXPECT_EQ(ops, (std::vector<std::string>{"aten::linear", "aten::relu", "aten::add", "aten::mul", "aten::linear",
                                           "aten::softmax"}));
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "x");
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{2, 8}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "out");
  EXPECT_EQ(g.values[g.find_value("fc1.weight")].constant.shape(), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(g.values[g.find_value("fc2.bias")].constant.shape(), (std::vector<int64_t>{4}));
  const Attributes& softmax = g.nodes.back().attrs;
  ASSERT_NE(find_attr(softmax, "dim"), nullptr);
  EXPECT_EQ(find_attr(softmax, "dim")->kind, AttrKind::Int);
  EXPECT_EQ(find_attr(softmax, "dim")->i, -1);
  ASSERT_NE(find_attr(softmax, "dtype"), nullptr);
  EXPECT_EQ(find_attr(softmax, "dtype")->kind, AttrKind::None);
}

}  // namespace
}  // namespace switchyard::ir
