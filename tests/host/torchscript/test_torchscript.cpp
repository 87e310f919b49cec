// The TorchScript importer: small traced and scripted models (make_fixtures.py) imported,
// run through switchyard's Runtime on the aten plugin, and compared with the module's
// own forward in LibTorch; node names, module paths, and the errors for what cannot be
// lowered.
#include "import_model.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <torch/script.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

using namespace switchyard;

namespace {

std::string fixture(const std::string& name) { return std::string(SY_TS_FIXTURES) + "/" + name; }

#define REQUIRE_FIXTURE(name)                                                     \
  if (!std::filesystem::exists(fixture(name))) GTEST_SKIP() << "no fixture " << name \
                                                            << " (no Python with torch at build time)"

DLDataType dl(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return {kDLFloat, 32, 1};
    case at::kLong: return {kDLInt, 64, 1};
    case at::kBool: return {6, 8, 1};
    default: ADD_FAILURE() << "unexpected dtype"; return {kDLFloat, 32, 1};
  }
}
at::ScalarType st(DLDataType d) {
  if (d.code == kDLInt) return at::kLong;
  if (d.code == 6) return at::kBool;
  return at::kFloat;
}

Tensor to_sy(const at::Tensor& src) {
  at::Tensor t = src.contiguous();
  return Tensor::from_blob(t.data_ptr(), dl(t.scalar_type()), t.sizes().vec(), {}, [t] {});
}
at::Tensor to_at(const Tensor& src) {
  Tensor c = src.contiguous();
  return at::from_blob(c.raw_data(), c.shape(), at::TensorOptions().dtype(st(c.dtype()))).clone();
}

std::string config_path() {
  std::string path = (std::filesystem::path(testing::TempDir()) / "ts_aten.toml").string();
  std::ofstream(path) << "[plugins]\nload = [\"aten\"]\n";
  return path;
}

// The module's own forward (not frozen), outputs flattened.
std::vector<at::Tensor> reference(const std::string& path, const std::vector<at::Tensor>& inputs) {
  torch::jit::Module m = torch::jit::load(path);
  m.eval();
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  std::vector<at::Tensor> out;
  std::vector<c10::IValue> todo{m.forward(args)};
  while (!todo.empty()) {
    c10::IValue v = todo.front();
    todo.erase(todo.begin());
    if (v.isTuple()) {
      auto elems = v.toTupleRef().elements();
      todo.insert(todo.begin(), elems.begin(), elems.end());
    } else {
      out.push_back(v.toTensor());
    }
  }
  return out;
}

class TorchScript : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    torchscript::register_loader();
    runtime_ = new Runtime(Options{config_path()});
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  void SetUp() override { at::manual_seed(3); }

  static ir::Graph import(const std::string& name) {
    ir::Graph g;
    torchscript::import_model(fixture(name), g);
    ir::validate(g);
    return g;
  }

  // Runs `name` in switchyard and in LibTorch on `inputs` and compares every output.
  static void check(const std::string& name, const std::vector<at::Tensor>& inputs) {
    auto model = runtime_->load(fixture(name));
    std::vector<Tensor> in;
    for (const at::Tensor& t : inputs) in.push_back(to_sy(t.clone()));
    std::vector<Tensor> out = model->run(in);
    std::vector<at::Tensor> ref_in;
    for (const at::Tensor& t : inputs) ref_in.push_back(t.clone());  // forward may write to them
    std::vector<at::Tensor> ref = reference(fixture(name), ref_in);
    ASSERT_EQ(out.size(), ref.size()) << name;
    for (size_t i = 0; i < ref.size(); ++i) {
      at::Tensor got = to_at(out[i]);
      ASSERT_EQ(got.sizes(), ref[i].sizes()) << name << " output " << i;
      ASSERT_EQ(got.scalar_type(), ref[i].scalar_type()) << name << " output " << i;
      at::Tensor r = ref[i].to(at::kDouble), g = got.to(at::kDouble);
      double scale = std::max(1.0, r.numel() ? r.abs().max().item<double>() : 0.0);
      double diff = r.numel() ? (g - r).abs().max().item<double>() : 0.0;
      EXPECT_LE(diff, 1e-4 * scale) << name << " output " << i;
    }
  }

  static const ir::Node* node(const ir::Graph& g, const std::string& name) {
    for (const ir::Node& n : g.nodes)
      if (n.name == name) return &n;
    return nullptr;
  }

  static Error error_of(const std::string& name) {
    try {
      runtime_->load(fixture(name));
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << name << " loaded without an error";
    return Error(ErrorKind::Internal, "");
  }

  static Runtime* runtime_;
};
Runtime* TorchScript::runtime_ = nullptr;

at::Tensor mask(std::vector<std::vector<int>> rows) {
  at::Tensor m = at::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, at::kBool);
  for (size_t b = 0; b < rows.size(); ++b)
    for (size_t s = 0; s < rows[b].size(); ++s) m[b][s] = rows[b][s] != 0;
  return m;
}

}  // namespace

TEST_F(TorchScript, MlpMatchesLibTorch) {
  REQUIRE_FIXTURE("mlp.pt");
  ir::Graph g = import("mlp.pt");
  std::vector<std::string> names;
  for (const ir::Node& n : g.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1", "act", "fc2", "relu", "add", "out"}));
  ASSERT_NE(node(g, "fc1"), nullptr);
  EXPECT_EQ(node(g, "fc1")->op, "aten::linear");
  EXPECT_EQ(node(g, "fc1")->module_path, "fc1");
  EXPECT_EQ(g.values[node(g, "fc1")->inputs[1]].name, "fc1.weight");
  EXPECT_EQ(g.values[node(g, "fc1")->inputs[1]].kind, ir::ValueKind::Constant);
  EXPECT_EQ(g.values[g.inputs[0]].name, "x");
  check("mlp.pt", {at::randn({4, 8})});
  check("mlp.pt", {at::randn({7, 8})});  // no sizes baked: any batch
}

TEST_F(TorchScript, CnnFoldsBatchNormAndNamesModules) {
  REQUIRE_FIXTURE("cnn.pt");
  ir::Graph g = import("cnn.pt");
  for (const ir::Node& n : g.nodes) EXPECT_EQ(n.op.find("batch_norm"), std::string::npos) << n.name;
  for (const char* name : {"conv1", "layer1.0.conv1", "layer1.0.conv2", "layer1.0.relu",
                           "layer1.0.relu_1", "layer1.1.conv2", "fc"})
    EXPECT_NE(node(g, name), nullptr) << name;
  EXPECT_EQ(node(g, "layer1.0.conv1")->module_path, "layer1.0.conv1");
  EXPECT_EQ(node(g, "layer1.0.relu_1")->module_path, "layer1.0.relu");
  EXPECT_EQ(node(g, "layer1.0")->op, "aten::add");  // out += x, BasicBlock's own op
  std::set<std::string> unique;
  for (const ir::Node& n : g.nodes) EXPECT_TRUE(unique.insert(n.name).second) << n.name;
  // x.view(x.size(0), -1) is flatten(x, 1): any batch size runs.
  const ir::Node* head = nullptr;
  for (const ir::Node& n : g.nodes)
    if (n.op == "aten::flatten") head = &n;
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{-1, 3, 16, 16}));
  check("cnn.pt", {at::randn({2, 3, 16, 16})});
  check("cnn.pt", {at::randn({3, 3, 16, 16})});
  check("cnn_nohint.pt", {at::randn({1, 3, 20, 20})});  // no shapes recorded: none needed
}

TEST_F(TorchScript, SizeArithmeticWithoutTracedShapesIsAnError) {
  REQUIRE_FIXTURE("encoder_grad_nohint.pt");
  Error e = error_of("encoder_grad_nohint.pt");
  EXPECT_EQ(e.kind(), ErrorKind::Graph);
  std::string m = e.what();
  EXPECT_NE(m.find("cannot lower aten::view at "), std::string::npos) << m;
  EXPECT_NE(m.find("'size'"), std::string::npos) << m;
  EXPECT_NE(m.find("switchyard_inputs.json"), std::string::npos) << m;
  EXPECT_NE(m.find("functional.py:"), std::string::npos) << m;
}

TEST_F(TorchScript, InPlaceOpsRunOutOfPlace) {
  REQUIRE_FIXTURE("inplace.pt");
  ir::Graph g = import("inplace.pt");
  // The write into input x stays an in-place op (run out of place); its later users read
  // the node's output, never the input.
  const ir::Node* mul = nullptr;
  for (const ir::Node& n : g.nodes)
    if (n.op == "aten::mul_") mul = &n;
  ASSERT_NE(mul, nullptr);
  for (const ir::Node& n : g.nodes)
    if (&n != mul)
      for (ir::ValueId in : n.inputs) EXPECT_NE(in, g.inputs[0]) << n.name << " reads x before its write";
  check("inplace.pt", {at::randn({3, 4}), at::randn({3, 4})});
}

TEST_F(TorchScript, WriteThroughAViewIsAnError) {
  REQUIRE_FIXTURE("view_write.pt");
  Error e = error_of("view_write.pt");
  EXPECT_EQ(e.kind(), ErrorKind::Graph);
  std::string m = e.what();
  EXPECT_NE(m.find("aten::add_"), std::string::npos) << m;
  EXPECT_NE(m.find("view"), std::string::npos) << m;
}

TEST_F(TorchScript, TensorListsAndTupleOutputs) {
  REQUIRE_FIXTURE("cat.pt");
  ir::Graph g = import("cat.pt");
  ASSERT_NE(node(g, "cat"), nullptr);
  EXPECT_EQ(node(g, "cat")->inputs.size(), 3u);
  EXPECT_EQ(node(g, "stack")->inputs.size(), 2u);
  check("cat.pt", {at::randn({2, 3}), at::randn({2, 3})});

  ir::Graph t = import("tuple.pt");
  EXPECT_EQ(t.outputs.size(), 3u);
  ASSERT_NE(node(t, "chunk"), nullptr);
  EXPECT_EQ(node(t, "chunk")->outputs.size(), 2u);
  check("tuple.pt", {at::randn({2, 6})});
}

TEST_F(TorchScript, Int64EmbeddingInput) {
  REQUIRE_FIXTURE("embed.pt");
  for (const char* name : {"embed.pt", "embed_nohint.pt", "embed_shapes.pt"}) {
    ir::Graph g = import(name);
    EXPECT_TRUE(same_dtype(g.values[g.inputs[0]].dtype, DLDataType{kDLInt, 64, 1})) << name;
    EXPECT_EQ(g.values[g.inputs[0]].name, "ids");
    check(name, {at::randint(0, 20, {2, 5}, at::kLong)});
  }
}

TEST_F(TorchScript, TransformerEncoderNestedFastPath) {
  REQUIRE_FIXTURE("encoder_nograd.pt");
  ir::Graph g = import("encoder_nograd.pt");
  ASSERT_NE(node(g, "encoder.layers.0"), nullptr);
  EXPECT_EQ(node(g, "encoder.layers.0")->op, "aten::_transformer_encoder_layer_fwd");
  EXPECT_EQ(node(g, "encoder.layers.0")->module_path, "encoder.layers.0");
  EXPECT_NE(node(g, "encoder.layers.1"), nullptr);
  for (const ir::Node& n : g.nodes) EXPECT_EQ(n.op.find("nested"), std::string::npos) << n.name;
  EXPECT_TRUE(same_dtype(g.values[g.inputs[1]].dtype, DLDataType{6, 8, 1}));
  check("encoder_nograd.pt", {at::randn({2, 5, 16}), mask({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}})});
  // Every row padded: to_padded_tensor pads to the longest row (4), as ATen does.
  check("encoder_nograd.pt", {at::randn({2, 5, 16}), mask({{0, 0, 0, 0, 1}, {0, 0, 0, 1, 1}})});
  // Not left-aligned: the nested tensor takes each row's first `count` positions.
  check("encoder_nograd.pt", {at::randn({2, 5, 16}), mask({{0, 1, 0, 0, 1}, {1, 0, 0, 0, 0}})});
  // No sizes were baked: the input declares a free batch dimension (the traced shape
  // otherwise), and other batch sizes run.
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{-1, 5, 16}));
  check("encoder_nograd.pt", {at::randn({3, 5, 16}),
                              mask({{0, 0, 0, 0, 0}, {0, 0, 1, 1, 1}, {0, 0, 0, 0, 1}})});
  // Padding positions of the input must not leak into the result.
  at::Tensor x = at::randn({2, 5, 16});
  x[1][4].fill_(std::numeric_limits<float>::infinity());
  check("encoder_nograd.pt", {x, mask({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}})});
}

TEST_F(TorchScript, TransformerEncoderDecomposed) {
  REQUIRE_FIXTURE("encoder_grad.pt");
  ir::Graph g = import("encoder_grad.pt");
  EXPECT_NE(node(g, "encoder.layers.0.self_attn.linear"), nullptr);
  EXPECT_NE(node(g, "encoder.layers.1.norm2"), nullptr);
  check("encoder_grad.pt", {at::randn({2, 5, 16}), mask({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}})});
  check("encoder_grad.pt", {at::randn({2, 5, 16}), mask({{0, 0, 1, 0, 0}, {1, 0, 0, 1, 0}})});
  // Its views take sizes computed from the batch (view(q, [T, B * H, D])): the importer
  // turns the batch-dependent entry into -1, so other batch sizes run too.
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{-1, 5, 16}));
  check("encoder_grad.pt", {at::randn({3, 5, 16}), mask({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}, {0, 1, 1, 1, 1}})});
}

TEST_F(TorchScript, ConstantExpandedToTheBatch) {
  REQUIRE_FIXTURE("class_token.pt");
  ir::Graph g = import("class_token.pt");
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{-1, 3, 6}));
  for (int64_t batch : {2, 1, 5}) check("class_token.pt", {at::randn({batch, 3, 6})});
}

TEST_F(TorchScript, ControlFlowIsAnError) {
  REQUIRE_FIXTURE("control.pt");
  Error e = error_of("control.pt");
  EXPECT_EQ(e.kind(), ErrorKind::Graph);
  std::string m = e.what();
  EXPECT_NE(m.find("cannot lower prim::If at "), std::string::npos) << m;
  EXPECT_NE(m.find("make_fixtures.py:"), std::string::npos) << m;
  EXPECT_NE(m.find("if x.sum() > 0"), std::string::npos) << m;
}

TEST_F(TorchScript, FilesThatAreNotTorchScriptAreIoErrors) {
  REQUIRE_FIXTURE("truncated.pt");
  for (const char* name : {"truncated.pt", "random.pt", "tensors.pt"}) {
    Error e = error_of(name);
    EXPECT_EQ(e.kind(), ErrorKind::Io) << name;
    std::string m = e.what();
    EXPECT_EQ(m.rfind(fixture(name) + ": not a TorchScript file: ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  Error e = error_of("missing.pt");
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
}

TEST_F(TorchScript, RegisterLoaderIsIdempotent) {
  REQUIRE_FIXTURE("mlp.pt");
  torchscript::register_loader();
  torchscript::register_loader();
  auto model = runtime_->load(fixture("mlp.pt"));
  EXPECT_EQ(model->input_names(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(model->output_names(), (std::vector<std::string>{"out"}));
}
