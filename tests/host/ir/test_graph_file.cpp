// The portable graph file: write→read round trips and the writer's errors.
#include "graph_file_fixture.hpp"
#include "ir/graph_file.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace switchyard::ir {
namespace {

namespace fs = std::filesystem;
using test::GraphFileTest;
using test::iota_tensor;
using test::kFloat32;
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

DLDataType dtype_of(const char* name) {
  DLDataType dtype{};
  EXPECT_TRUE(parse_dtype(name, &dtype)) << name;
  return dtype;
}

// A tensor of `dtype` whose bytes are 1, 2, 3, ... (any bit pattern is fine for a round trip).
Tensor patterned_tensor(const char* dtype, std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(dtype_of(dtype), std::move(shape));
  auto* bytes = t.data<uint8_t>();
  for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  if (std::strcmp(dtype, "bool") == 0)
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] &= 1;
  return t;
}

// --- round trip -------------------------------------------------------------------------

Graph rich_graph() {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32, {-1, 8});
  g.add_input("mask", dtype_of("bool"), {-1});
  const Tensor weight = iota_tensor({4, 8}, 0.25f);
  const ValueId w = g.add_constant("encoder.weight", weight);
  const ValueId tied = g.add_constant("decoder.weight", weight);  // tied: same memory
  std::vector<ValueId> constants{w, tied};
  for (const char* dtype : {"float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"})
    constants.push_back(g.add_constant(std::string("c_") + dtype, patterned_tensor(dtype, {3, 5})));
  constants.push_back(g.add_constant("empty", iota_tensor({0, 4})));

  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Attributes attrs{{"none", Attribute::none()},
                   {"int", Attribute::of_int(std::numeric_limits<int64_t>::min())},
                   {"int_max", Attribute::of_int(std::numeric_limits<int64_t>::max())},
                   {"float", Attribute::of_float(0.1)},
                   {"whole_float", Attribute::of_float(3.0)},
                   {"nan", Attribute::of_float(nan)},
                   {"neg_inf", Attribute::of_float(-inf)},
                   {"string", Attribute::of_string("tanh \"quoted\" ü")},
                   {"ints", Attribute::of_ints({1, -2, 3})},
                   {"no_ints", Attribute::of_ints({})},
                   {"floats", Attribute::of_floats({0.5, inf, 1e-300, nan})},
                   {"table", Attribute::of_tensor(patterned_tensor("int32", {2, 3}))},
                   {"a_last_but_sorted_first", Attribute::of_int(7)}};
  g.add_node("encoder", "aten::linear", {x, w, kNoValue}, {"h"}, attrs, "model.encoder");
  std::vector<ValueId> all{g.find_value("h")};
  all.insert(all.end(), constants.begin(), constants.end());
  g.add_node("collect", "custom::collect", all, {"y", "aux"});
  g.outputs = {g.find_value("y"), g.find_value("aux")};
  validate(g);
  return g;
}

void expect_same_attribute(const Attribute& a, const Attribute& b, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(a.kind, b.kind);
  auto same_float = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  switch (a.kind) {
    case AttrKind::None: break;
    case AttrKind::Int: EXPECT_EQ(a.i, b.i); break;
    case AttrKind::Float: EXPECT_TRUE(same_float(a.f, b.f)) << a.f << " vs " << b.f; break;
    case AttrKind::String: EXPECT_EQ(a.s, b.s); break;
    case AttrKind::Ints: EXPECT_EQ(a.ints, b.ints); break;
    case AttrKind::Floats:
      ASSERT_EQ(a.floats.size(), b.floats.size());
      for (size_t i = 0; i < a.floats.size(); ++i) EXPECT_TRUE(same_float(a.floats[i], b.floats[i]));
      break;
    case AttrKind::Tensor:
      EXPECT_TRUE(same_dtype(a.tensor.dtype(), b.tensor.dtype()));
      EXPECT_EQ(a.tensor.shape(), b.tensor.shape());
      ASSERT_EQ(a.tensor.nbytes(), b.tensor.nbytes());
      EXPECT_EQ(std::memcmp(a.tensor.raw_data(), b.tensor.raw_data(), a.tensor.nbytes()), 0);
      break;
  }
}

TEST_F(GraphFileTest, RoundTripKeepsEverything) {
  const Graph original = rich_graph();
  write_graph_file(original, json_path_);
  ASSERT_TRUE(fs::exists(bin_path_));
  const Graph loaded = read_graph_file(json_path_);

  ASSERT_EQ(loaded.values.size(), original.values.size());
  ASSERT_EQ(loaded.inputs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Value& a = original.values[original.inputs[i]];
    const Value& b = loaded.values[loaded.inputs[i]];
    EXPECT_EQ(a.name, b.name);
    EXPECT_TRUE(same_dtype(a.dtype, b.dtype));
    EXPECT_EQ(a.shape, b.shape);
  }
  ASSERT_EQ(loaded.outputs.size(), 2u);
  EXPECT_EQ(loaded.values[loaded.outputs[0]].name, "y");
  EXPECT_EQ(loaded.values[loaded.outputs[1]].name, "aux");

  for (const Value& a : original.values) {
    if (a.kind != ValueKind::Constant) continue;
    SCOPED_TRACE(a.name);
    const ValueId id = loaded.find_value(a.name);
    ASSERT_NE(id, kNoValue);
    const Tensor& b = loaded.values[id].constant;
    EXPECT_EQ(dtype_name(b.dtype()), dtype_name(a.constant.dtype()));
    EXPECT_EQ(b.shape(), a.constant.shape());
    ASSERT_EQ(b.nbytes(), a.constant.nbytes());
    EXPECT_EQ(std::memcmp(b.raw_data(), a.constant.raw_data(), b.nbytes()), 0);  // bit-identical
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % kWeightsAlignment, 0u);
  }

  ASSERT_EQ(loaded.nodes.size(), 2u);
  const Node& encoder = loaded.nodes[0];
  EXPECT_EQ(encoder.name, "encoder");
  EXPECT_EQ(encoder.op, "aten::linear");
  EXPECT_EQ(encoder.module_path, "model.encoder");
  ASSERT_EQ(encoder.inputs.size(), 3u);
  EXPECT_EQ(encoder.inputs[2], kNoValue);
  const Attributes& want = original.nodes[0].attrs;
  ASSERT_EQ(encoder.attrs.size(), want.size());
  for (size_t a = 0; a < want.size(); ++a) {
    EXPECT_EQ(encoder.attrs[a].first, want[a].first);  // file order is kept
    expect_same_attribute(want[a].second, encoder.attrs[a].second, want[a].first);
  }
  const Node& collect = loaded.nodes[1];
  EXPECT_EQ(collect.module_path, "");
  ASSERT_EQ(collect.outputs.size(), 2u);
  EXPECT_EQ(loaded.values[collect.outputs[1]].producer, 1);
}

TEST_F(GraphFileTest, WeightsAreSharedAlignedAndOwnedByTheTensors) {
  write_graph_file(rich_graph(), json_path_);
  const Json file = Json::parse(read_bytes(json_path_));
  EXPECT_EQ(file["format"], "switchyard-graph");
  EXPECT_EQ(file["version"], 2);
  EXPECT_EQ(file["weights"], "model.bin");
  EXPECT_EQ(file["nodes"][0]["attrs"]["int"], Json({{"int", std::numeric_limits<int64_t>::min()}}));
  EXPECT_EQ(file["nodes"][0]["attrs"]["whole_float"], Json({{"float", 3.0}}));
  EXPECT_TRUE(file["nodes"][0]["attrs"]["whole_float"]["float"].is_number_float());
  EXPECT_EQ(file["nodes"][0]["attrs"]["nan"], Json({{"float", "nan"}}));
  EXPECT_EQ(file["nodes"][0]["inputs"][2], nullptr);
  const Json& constants = file["constants"];
  EXPECT_EQ(constants[0]["offset"], constants[1]["offset"]);  // tied weights stored once
  for (const Json& c : constants) EXPECT_EQ(c["offset"].get<uint64_t>() % kWeightsAlignment, 0u) << c.dump();

  Tensor survivor;
  const char* base = nullptr;
  {
    const Graph loaded = read_graph_file(json_path_);
    const Tensor& encoder = loaded.values[loaded.find_value("encoder.weight")].constant;
    const Tensor& decoder = loaded.values[loaded.find_value("decoder.weight")].constant;
    EXPECT_EQ(encoder.raw_data(), decoder.raw_data());  // one copy in memory too
    base = static_cast<const char*>(encoder.raw_data()) - constants[0]["offset"].get<size_t>();
    for (const Json& c : constants) {  // every constant is a view of one buffer: no copies
      const Tensor& t = loaded.values[loaded.find_value(c["name"].get<std::string>())].constant;
      EXPECT_EQ(static_cast<const char*>(t.raw_data()), base + c["offset"].get<size_t>()) << c["name"];
    }
    survivor = decoder;
  }
  // The graph is gone; the buffer must live on with the last tensor that uses it.
  EXPECT_FLOAT_EQ(survivor.data<float>()[5], 1.25f);
}

TEST_F(GraphFileTest, ReaderSortsNodesWrittenOutOfOrder) {
  Json graph = minimal_graph();
  graph["outputs"] = {"z"};
  graph["nodes"].insert(graph["nodes"].begin(),
                        Json::parse(R"({"name": "act", "op": "aten::relu", "inputs": ["y"], "outputs": ["z"]})"));
  write_graph(graph);
  const Graph g = read_graph_file(json_path_);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "fc1");
  EXPECT_EQ(g.nodes[1].name, "act");
  EXPECT_EQ(g.nodes[1].module_path, "");  // optional fields default to empty
  EXPECT_TRUE(g.nodes[1].attrs.empty());
}

TEST_F(GraphFileTest, WriterErrors) {
  Graph g;
  g.add_constant("w8", Tensor::empty(DLDataType{kDLFloat, 8, 1}, {2}));
  EXPECT_THAT(test::error_message([&] { write_graph_file(g, json_path_); }, ErrorKind::Io),
              HasSubstr("constant 'w8': unsupported dtype"));
  const std::string nowhere = (dir_ / "no" / "such" / "dir" / "m.json").string();
  EXPECT_THAT(test::error_message([&] { write_graph_file(rich_graph(), nowhere); }, ErrorKind::Io),
              HasSubstr("cannot open for writing"));
  EXPECT_EQ(weights_path_for("a/model.json"), "a/model.bin");
  EXPECT_EQ(weights_path_for("a/model"), "a/model.bin");
}

// An input whose dtype the model leaves free is written "any" and read back as kAnyDtype;
// "any" is an input's dtype only, never a constant's.
TEST_F(GraphFileTest, InputDtypeAnyRoundTripsForInputsOnly) {
  Graph g;
  const ValueId x = g.add_input("mask", kAnyDtype, {-1, -1});
  g.add_node("neg", "aten::neg", {x}, {"y"});
  g.outputs = {g.find_value("y")};
  validate(g);
  write_graph_file(g, json_path_);
  EXPECT_EQ(Json::parse(read_bytes(json_path_))["inputs"][0]["dtype"], "any");
  const Graph loaded = read_graph_file(json_path_);
  EXPECT_TRUE(is_any_dtype(loaded.values[loaded.inputs[0]].dtype));
  Json graph = minimal_graph();
  graph["constants"][0]["dtype"] = "any";
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("constant 'w': field 'dtype': unknown dtype 'any'"));
}

}  // namespace
}  // namespace switchyard::ir
