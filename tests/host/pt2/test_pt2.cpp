// torch.export archives (.pt2): the committed fixtures (tools/torch2/make_fixtures.py, run
// with torch 2.6 and with the newest torch) through Runtime::load, at shapes other than the
// exported example, against torch 2's own eager outputs; node by node against
// torch.fx.Interpreter on the exported graph; and every way a bad archive or input is
// refused. No torch 2 is needed: the fixtures hold torch 2's outputs.
// Criterion: max |switchyard - torch| <= 1e-4 * max(1, max |torch|), per output.
#include "pt2_test_util.hpp"

#include <switchyard/error.hpp>
#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace switchyard;
using namespace switchyard::pt2_test;

namespace {

struct Case {
  std::string version, stem;  // "torch-2.6", "cnn"
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.version << "/" << c.stem; }

// Every fixture model, or those with torch.fx.Interpreter's node outputs.
std::vector<Case> cases(bool with_fx_nodes = false) {
  std::vector<Case> out;
  for (const char* version : {"torch-2.6", "torch-2.15"}) {
    const Json manifest = read_json(fixtures_dir() + "/" + version + "/manifest.json");
    for (const Json& m : manifest["models"])
      if (!with_fx_nodes || m.contains("fx_nodes")) out.push_back({version, m["stem"]});
  }
  return out;
}

class Pt2Fixture : public ::testing::TestWithParam<Case> {
 protected:
  Json entry() const {
    const Json manifest = read_json(fixtures_dir() + "/" + GetParam().version + "/manifest.json");
    for (const Json& m : manifest["models"])
      if (m["stem"] == GetParam().stem) return m;
    return Json();
  }
  std::string dir() const { return fixtures_dir() + "/" + GetParam().version + "/"; }
};

TEST_P(Pt2Fixture, MatchesTorchAtOtherShapes) {
  const Json m = entry();
  for (const char* config : {"default.toml", "reference.toml"}) {
    Runtime rt(Options{config_path(config)});
    auto model = rt.load(dir() + m["file"].get<std::string>());
    for (const Json& set : m["labels"]) {
      SCOPED_TRACE(std::string(config) + " " + set["label"].get<std::string>());
      const std::vector<Tensor> inputs = read_tensors(dir() + set["inputs"].get<std::string>(), model->input_names());
      const std::vector<Tensor> expected = read_tensors(dir() + set["expected"].get<std::string>());
      const std::vector<Tensor> got = model->run(inputs);
      EXPECT_EQ(compare(got, expected), "");
    }
  }
}

// Every call_function node of the exported graph in `fx` (torch.fx.Interpreter's outputs by
// FX name) against node_io "all" of `model_file` on `inputs_file`. A multi-output op's
// pieces are its outputs under their getitem names.
void expect_node_io_matches_fx(const std::string& model_file, const std::string& inputs_file, const Json& fx) {
  Options options{config_path("default.toml")};
  options.capture = "all";
  Runtime rt(options);
  auto model = rt.load(model_file);
  const auto inputs = read_tensors(inputs_file, model->input_names());
  model->run(inputs);
  std::map<std::string, Tensor> by_value;  // every node output, by value name
  std::map<std::string, const NodeIO*> by_node;
  const auto plan = model->plan(inputs);
  for (const NodeIO& io : model->node_io()) by_node[io.node] = &io;
  for (const PlanEntry& e : plan) {
    auto it = by_node.find(e.node);
    if (it == by_node.end()) continue;
    for (size_t k = 0; k < e.outputs.size() && k < it->second->outputs.size(); ++k)
      by_value[e.outputs[k]] = it->second->outputs[k];
  }
  size_t compared = 0;
  for (const auto& [name, value] : fx.items()) {
    SCOPED_TRACE("FX node " + name);
    if (value.is_array()) {  // a multi-output op: its pieces are compared by their getitem names
      EXPECT_TRUE(by_node.count(name) || by_value.count(name)) << "no node_io record named " << name;
      continue;
    }
    Tensor got;
    if (auto n = by_node.find(name); n != by_node.end() && !n->second->outputs.empty())
      got = n->second->outputs[0];
    else if (auto v = by_value.find(name); v != by_value.end())
      got = v->second;
    if (!got.defined()) {
      ADD_FAILURE() << "switchyard has no node or value named '" << name << "'";
      continue;
    }
    EXPECT_EQ(compare({got}, {tensor_from_json(value)}), "");
    ++compared;
  }
  EXPECT_GT(compared, 10u);
}

class Pt2NodeIo : public Pt2Fixture {};

TEST_P(Pt2NodeIo, MatchesFxInterpreterByName) {
  const Json m = entry();
  expect_node_io_matches_fx(dir() + m["file"].get<std::string>(), dir() + m["labels"][0]["inputs"].get<std::string>(),
                            read_json(dir() + m["fx_nodes"].get<std::string>()));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.version + "_" + info.param.stem;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}
INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2Fixture, ::testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2NodeIo, ::testing::ValuesIn(cases(true)), case_name);

// The full zoo (tests/host/pt2/run_pt2_zoo.sh sets SWITCHYARD_PT2_ZOO_DIR to an export of
// tools/torch2/make_fixtures.py --set zoo); no cases without it.
std::vector<Json> zoo_models() {
  std::vector<Json> out;
  const char* dir = std::getenv("SWITCHYARD_PT2_ZOO_DIR");
  if (dir == nullptr) return out;
  const Json manifest = read_json(std::string(dir) + "/manifest.json");
  for (const Json& m : manifest["models"]) out.push_back(m);
  return out;
}

class Pt2Zoo : public ::testing::TestWithParam<Json> {};

TEST_P(Pt2Zoo, MatchesTorchAtOtherShapes) {
  const std::string dir = std::string(std::getenv("SWITCHYARD_PT2_ZOO_DIR")) + "/";
  const Json& m = GetParam();
  for (const char* config : {"default.toml", "reference.toml"}) {
    Runtime rt(Options{config_path(config)});
    auto model = rt.load(dir + m["file"].get<std::string>());
    for (const Json& set : m["labels"]) {
      SCOPED_TRACE(m["stem"].get<std::string>() + " " + config + " " + set["label"].get<std::string>());
      const auto inputs = read_tensors(dir + set["inputs"].get<std::string>(), model->input_names());
      EXPECT_EQ(compare(model->run(inputs), read_tensors(dir + set["expected"].get<std::string>())), "");
    }
  }
}
// resnet18 and the HF-style BERT, node by node.
TEST_P(Pt2Zoo, NodeIoMatchesFxInterpreterByName) {
  const std::string dir = std::string(std::getenv("SWITCHYARD_PT2_ZOO_DIR")) + "/";
  const Json& m = GetParam();
  if (!m.contains("fx_nodes")) return;  // exported without the interpreter's outputs
  expect_node_io_matches_fx(dir + m["file"].get<std::string>(), dir + m["labels"][0]["inputs"].get<std::string>(),
                            read_json(dir + m["fx_nodes"].get<std::string>()));
}
INSTANTIATE_TEST_SUITE_P(Zoo, Pt2Zoo, ::testing::ValuesIn(zoo_models()),
                         [](const auto& info) { return info.param["stem"].template get<std::string>(); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Pt2Zoo);

// As for TorchScript, an input's dtype is pinned only where an op needs it: BERT's int64
// attention mask also runs as float32 (`1.0 - mask` promotes), its token ids stay int64.
TEST(Pt2Inputs, MaskTakesAnyDtypeIdsStayInt64) {
  const std::string dir = fixtures_dir() + "/torch-2.15/";
  Runtime rt(Options{config_path("default.toml")});
  auto model = rt.load(dir + "bert.pt2");
  std::vector<Tensor> inputs = read_tensors(dir + "bert.b3_s7.inputs.json", model->input_names());
  const auto expected = read_tensors(dir + "bert.b3_s7.expected.json");
  Tensor mask = Tensor::empty(DLDataType{kDLFloat, 32, 1}, inputs[2].shape());
  for (int64_t k = 0; k < mask.numel(); ++k) mask.data<float>()[k] = static_cast<float>(inputs[2].data<int64_t>()[k]);
  EXPECT_EQ(compare(model->run({inputs[0], inputs[1], mask}), expected), "");
  Tensor float_ids = Tensor::empty(DLDataType{kDLFloat, 32, 1}, inputs[0].shape());
  try {
    model->run({float_ids, inputs[1], inputs[2]});
    ADD_FAILURE() << "float32 token ids ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected dtype int64, got float32"), std::string::npos) << e.what();
  }
}

TEST(Pt2Names, PlanShowsFxNamesModulePathsAndRanges) {
  Runtime rt(Options{config_path("default.toml")});
  auto model = rt.load(fixtures_dir() + "/torch-2.6/cnn.pt2");
  EXPECT_EQ(model->input_specs().at(0), "[s0, 3, 16, 16] with s0 in 1..64");
  const auto plan = model->plan(read_tensors(fixtures_dir() + "/torch-2.6/cnn.b3.inputs.json", model->input_names()));
  std::map<std::string, std::string> paths;
  for (const PlanEntry& e : plan) paths[e.node] = e.module_path;
  ASSERT_TRUE(paths.count("conv2d"));
  EXPECT_EQ(paths["conv2d"], "stem.0");
  EXPECT_EQ(paths["linear"], "fc");
}

}  // namespace
