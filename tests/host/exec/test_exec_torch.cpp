// Executor numerics on hand-built graphs, run through the aten (and example) plugins,
// checked against the same computation called directly in LibTorch.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace switchyard;
using namespace sytest;

namespace {

at::Tensor to_at(const Tensor& t) {
  Tensor c = t.contiguous();
  return at::from_blob(c.raw_data(), c.shape(), at::kFloat).clone();
}

// A switchyard tensor that owns a copy of an ATen tensor's values.
Tensor from_at(const at::Tensor& src) {
  at::Tensor c = src.contiguous();
  Tensor t = Tensor::empty(kF32, c.sizes().vec());
  std::memcpy(t.raw_data(), c.data_ptr<float>(), t.nbytes());
  return t;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

ir::Attributes attrs(std::initializer_list<std::pair<std::string, ir::Attribute>> list) { return ir::Attributes(list); }

}  // namespace

class ExecutorTorch : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(7); }
};

TEST_F(ExecutorTorch, MlpMatchesLibTorch) {
  at::Tensor x = at::randn({4, 8}), w1 = at::randn({16, 8}), b1 = at::randn({16});
  at::Tensor w2 = at::randn({5, 16}), b2 = at::randn({5});
  ir::Graph g;
  ir::ValueId in = g.add_input("x", kF32, {-1, 8});
  ir::ValueId cw1 = g.add_constant("fc1.weight", from_at(w1));
  ir::ValueId cb1 = g.add_constant("fc1.bias", from_at(b1));
  ir::ValueId cw2 = g.add_constant("fc2.weight", from_at(w2));
  ir::ValueId cb2 = g.add_constant("fc2.bias", from_at(b2));
  g.add_node("fc1", "aten::linear", {in, cw1, cb1}, {"h"}, {}, "fc1");
  g.add_node("act", "aten::gelu", {g.find_value("h")}, {"a"},
             attrs({{"approximate", ir::Attribute::of_string("none")}}), "act");
  g.add_node("res", "aten::add", {g.find_value("a"), g.find_value("h")}, {"r"},
             attrs({{"alpha", ir::Attribute::of_int(1)}}));
  g.add_node("fc2", "aten::linear", {g.find_value("r"), cw2, cb2}, {"logits"}, {}, "fc2");
  g.add_node("softmax", "aten::softmax", {g.find_value("logits")}, {"p"},
             attrs({{"dim", ir::Attribute::of_int(-1)}, {"dtype", ir::Attribute::none()}}));
  g.outputs = {g.find_value("p"), g.find_value("logits")};

  at::Tensor h = at::linear(x, w1, b1);
  at::Tensor r = at::gelu(h) + h;
  at::Tensor logits = at::linear(r, w2, b2);
  at::Tensor p = at::softmax(logits, -1);

  for (const char* config :
       {"[plugins]\nload = [\"aten\"]\n",
        "[plugins]\nload = [\"example\", \"aten\"]\n[selection]\ndefault = [\"example\", \"aten\"]\n"}) {
    Runtime rt(Options{write_config("mlp", config)});
    auto model = load_graph(rt, g);
    auto out = model->run({from_at(x)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_LT(max_abs_diff(to_at(out[0]), p), 1e-6) << config;
    EXPECT_LT(max_abs_diff(to_at(out[1]), logits), 1e-5) << config;
    // The signal is real: outputs are not all equal.
    EXPECT_GT(to_at(out[1]).std().item<double>(), 0.1);
  }
}

TEST_F(ExecutorTorch, ConvBlockMatchesLibTorch) {
  at::Tensor x = at::randn({2, 3, 10, 10}), w = at::randn({6, 3, 3, 3}), b = at::randn({6});
  ir::Graph g;
  ir::ValueId in = g.add_input("img", kF32, {-1, 3, 10, 10});
  ir::ValueId cw = g.add_constant("conv.weight", from_at(w));
  ir::ValueId cb = g.add_constant("conv.bias", from_at(b));
  g.add_node("conv", "aten::conv2d", {in, cw, cb}, {"c"},
             attrs({{"stride", ir::Attribute::of_ints({2, 2})},
                    {"padding", ir::Attribute::of_ints({1, 1})},
                    {"dilation", ir::Attribute::of_ints({1, 1})},
                    {"groups", ir::Attribute::of_int(1)}}),
             "features.0");
  g.add_node("relu", "aten::relu", {g.find_value("c")}, {"r"}, {}, "features.1");
  g.add_node("matmul", "aten::matmul", {g.find_value("r"), g.find_value("r")}, {"m"});
  g.outputs = {g.find_value("m")};

  at::Tensor r = at::relu(at::conv2d(x, w, b, {2, 2}, {1, 1}, {1, 1}, 1));
  at::Tensor expected = at::matmul(r, r);

  Runtime rt(Options{write_config("conv",
                                  "[plugins]\nload = [\"example\", \"aten\"]\n"
                                  "[selection]\ndefault = [\"example\", \"aten\"]\n")});
  auto model = load_graph(rt, g);
  auto out = model->run({from_at(x)});
  EXPECT_LT(max_abs_diff(to_at(out[0]), expected), 1e-4);
  auto plan = model->plan({from_at(x)});
  EXPECT_EQ(plan[0].backend, "aten");     // only aten has conv2d
  EXPECT_EQ(plan[1].backend, "example");  // example is first in the default list for relu
}

TEST_F(ExecutorTorch, KernelErrorNamesNodeOpAndPlugin) {
  ir::Graph g;
  ir::ValueId a = g.add_input("a", kF32, {2, 3});
  ir::ValueId b = g.add_input("b", kF32, {2, 3});
  g.add_node("proj.mm", "aten::mm", {a, b}, {"c"}, {}, "proj");
  g.outputs = {g.find_value("c")};
  Runtime rt(Options{write_config("mm", "[plugins]\nload = [\"aten\"]\n")});
  auto model = load_graph(rt, std::move(g));
  std::string msg = error_of([&] { model->run({from_at(at::ones({2, 3})), from_at(at::ones({2, 3}))}); });
  EXPECT_NE(msg.find("proj.mm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aten::mm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("plugin 'aten'"), std::string::npos) << msg;
}

TEST_F(ExecutorTorch, AdoptedOutputsOutliveModelAndRuntime) {
  // Unload policy: a tensor the aten plugin produced keeps the plugin loaded until freed.
  at::Tensor x = at::randn({3, 4});
  std::vector<Tensor> out;
  {
    Runtime rt(Options{write_config("adopt", "[plugins]\nload = [\"aten\"]\n")});
    ir::Graph g;
    ir::ValueId in = g.add_input("x", kF32, {3, 4});
    g.add_node("t", "aten::tanh", {in}, {"y"});
    g.outputs = {g.find_value("y")};
    auto model = load_graph(rt, std::move(g));
    out = model->run({from_at(x)});
  }
  EXPECT_LT(max_abs_diff(to_at(out[0]), at::tanh(x)), 1e-6);
  out.clear();  // the deleter runs here, then the plugin may unload
}

TEST_F(ExecutorTorch, DemoGraphMatchesItsReferenceOutputs) {
  // tools/demo/mlp_expected.json holds outputs computed by numpy when the demo was made.
  std::string dir = std::string(std::getenv("SWITCHYARD_SOURCE_DIR")) + "/tools/demo/";
  std::ifstream in(dir + "mlp_expected.json");
  ASSERT_TRUE(in) << dir;
  nlohmann::json expected = nlohmann::json::parse(in);
  const double tol = expected["tolerance"].get<double>();
  for (const char* config : {"default.toml", "reference.toml"}) {
    Runtime rt(Options{std::string(std::getenv("SWITCHYARD_SOURCE_DIR")) + "/configs/" + config});
    auto model = rt.load(dir + "mlp.json");
    for (const auto& c : expected["cases"]) {
      std::vector<float> x;
      for (const auto& row : c["x"])
        for (double v : row) x.push_back(static_cast<float>(v));
      std::vector<float> want;
      for (const auto& row : c["out"])
        for (double v : row) want.push_back(static_cast<float>(v));
      std::vector<float> got = values(model->run({f32({2, 8}, x)})[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], tol) << config << " case " << c["name"] << " element " << i;
    }
  }
}

TEST_F(ExecutorTorch, ViewOutputsKeepTheirParentAlive) {
  // r's last direct consumer is the reshape; the view v still reads r's memory, and
  // later nodes allocate same-sized buffers that would reuse r's memory if it were freed.
  at::Tensor x = at::randn({4, 6});
  ir::Graph g;
  ir::ValueId in = g.add_input("x", kF32, {4, 6});
  g.add_node("relu", "aten::relu", {in}, {"r"});
  g.add_node("view", "aten::reshape", {g.find_value("r")}, {"v"}, attrs({{"shape", ir::Attribute::of_ints({6, 4})}}));
  g.add_node("t", "aten::transpose", {g.find_value("v")}, {"vt"},
             attrs({{"dim0", ir::Attribute::of_int(0)}, {"dim1", ir::Attribute::of_int(1)}}));
  ir::ValueId y = in;
  for (int i = 0; i < 4; ++i) {  // churn: same-sized host-allocated outputs
    g.add_node("churn" + std::to_string(i), "aten::mul", {y, y}, {"y" + std::to_string(i)});
    y = g.find_value("y" + std::to_string(i));
  }
  g.outputs = {g.find_value("vt"), y};
  Runtime rt(Options{write_config("views",
                                  "[plugins]\nload = [\"example\", \"aten\"]\n"
                                  "[[rules]]\nop = \"aten::relu\"\nbackends = [\"aten\"]\n")});
  auto model = load_graph(rt, std::move(g));
  auto out = model->run({from_at(x)});
  auto plan = model->plan({from_at(x)});
  EXPECT_EQ(plan[1].backend, "aten");
  at::Tensor expected = at::relu(x).reshape({6, 4}).transpose(0, 1);
  EXPECT_FALSE(out[0].is_contiguous());  // really a view, not a copy
  EXPECT_LT(max_abs_diff(to_at(out[0]), expected), 1e-7);
}
