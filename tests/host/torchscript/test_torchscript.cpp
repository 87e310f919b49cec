// The TorchScript importer: small traced and scripted models (make_fixtures.py) imported,
// run through switchyard's Runtime on the aten plugin, and compared with the module's
// own forward in LibTorch; node names, module paths, and the errors for what cannot be
// lowered. Plain traces with run-time shapes: test_torchscript_shapes.cpp.
#include "ir/input_spec.hpp"
#include "torchscript_fixture.hpp"

using namespace switchyard;
using namespace switchyard::test;

namespace {

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
  for (const char* name :
       {"conv1", "layer1.0.conv1", "layer1.0.conv2", "layer1.0.relu", "layer1.0.relu_1", "layer1.1.conv2", "fc"})
    EXPECT_NE(node(g, name), nullptr) << name;
  EXPECT_EQ(node(g, "layer1.0.conv1")->module_path, "layer1.0.conv1");
  EXPECT_EQ(node(g, "layer1.0.relu_1")->module_path, "layer1.0.relu");
  EXPECT_EQ(node(g, "layer1.0")->op, "aten::add");  // out += x, BasicBlock's own op
  std::set<std::string> unique;
  for (const ir::Node& n : g.nodes) EXPECT_TRUE(unique.insert(n.name).second) << n.name;
  // x.view(x.size(0), -1): the size is computed at run time (a bound attribute), so any
  // batch size runs; the conv weight fixes the input's rank and channels.
  const ir::Node* head = nullptr;
  for (const ir::Node& n : g.nodes)
    if (n.op == "aten::view") head = &n;
  ASSERT_NE(head, nullptr);
  ASSERT_NE(ir::find_attr(head->attrs, "size"), nullptr);
  EXPECT_TRUE(ir::find_attr(head->attrs, "size")->bound());
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{-1, 3, -1, -1}));
  EXPECT_EQ(g.values[g.inputs[0]].example_shape, (std::vector<int64_t>{2, 3, 16, 16}));  // the hint
  check("cnn.pt", {at::randn({2, 3, 16, 16})});
  check("cnn.pt", {at::randn({3, 3, 16, 16})});
  check("cnn_nohint.pt", {at::randn({1, 3, 20, 20})});  // no shapes recorded: none needed
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

TEST_F(TorchScript, WriteThroughAViewIsMadeFunctional) {
  REQUIRE_FIXTURE("view_write.pt");
  ir::Graph g = import("view_write.pt");  // x[0].add_(1.0), then x * 2.0
  bool scatter = false;
  for (const ir::Node& n : g.nodes) scatter = scatter || n.op == "aten::select_scatter";
  EXPECT_TRUE(scatter);
  check("view_write.pt", {at::randn({3, 4})});
  check("view_write.pt", {at::randn({5, 2})});
}

TEST_F(TorchScript, WriteThatCannotBeMadeFunctionalIsAnError) {
  REQUIRE_FIXTURE("plain_strided_write.pt");
  Error e = error_of("plain_strided_write.pt");
  EXPECT_EQ(e.kind(), ErrorKind::Graph);
  std::string m = e.what();
  EXPECT_NE(m.find("cannot lower aten::mul_ at "), std::string::npos) << m;
  EXPECT_NE(m.find("make_fixtures.py:"), std::string::npos) << m;
  EXPECT_NE(m.find("aten::as_strided"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot be made functional"), std::string::npos) << m;
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
  // Nothing is pinned to the traced shape [2, 5, 16]: the layers fix the last dim only.
  EXPECT_EQ(ir::expected_shape(g, 0), "[..., 16]");
  EXPECT_TRUE(g.values[g.inputs[0]].shape.empty());
  check("encoder_nograd.pt", {at::randn({3, 5, 16}), mask({{0, 0, 0, 0, 0}, {0, 0, 1, 1, 1}, {0, 0, 0, 0, 1}})});
  check("encoder_nograd.pt", {at::randn({2, 7, 16}), mask({{0, 0, 0, 0, 0, 0, 1}, {0, 0, 1, 1, 1, 1, 1}})});
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
  // Its views take sizes computed from the batch (view(q, [T, B * H, D])): computed at run
  // time, so other batch sizes and sequence lengths run too.
  check("encoder_grad.pt", {at::randn({3, 5, 16}), mask({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}, {0, 1, 1, 1, 1}})});
  check("encoder_grad.pt", {at::randn({1, 9, 16}), mask({{0, 0, 0, 0, 0, 0, 0, 1, 1}})});
}

TEST_F(TorchScript, ConstantExpandedToTheBatch) {
  REQUIRE_FIXTURE("class_token.pt");
  ir::Graph g = import("class_token.pt");
  EXPECT_EQ(ir::expected_shape(g, 0), "[..., 6]");
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

// PyTorch promotes dtypes, so an input's dtype is pinned only where an op refuses any other
// (issue 34): int64 masks in `mask == 0` + masked_fill, `1.0 - mask` and `h * mask`, and
// pixel values converted with `.to(dtype)` run with whatever dtype they come in.
TEST_F(TorchScript, InputDtypesArePinnedOnlyWhereAnOpNeedsThem) {
  REQUIRE_FIXTURE("plain_hf_masks.pt");
  const DLDataType kLong{kDLInt, 64, 1}, kFloat{kDLFloat, 32, 1};
  ir::Graph g = import("plain_hf_masks.pt");  // (input_ids, attention_mask, mask)
  EXPECT_TRUE(same_dtype(g.values[g.inputs[0]].dtype, kLong)) << dtype_name(g.values[g.inputs[0]].dtype);
  EXPECT_TRUE(is_any_dtype(g.values[g.inputs[1]].dtype)) << dtype_name(g.values[g.inputs[1]].dtype);
  EXPECT_TRUE(is_any_dtype(g.values[g.inputs[2]].dtype)) << dtype_name(g.values[g.inputs[2]].dtype);
  const at::Tensor ids = at::randint(0, 20, {2, 5}, at::kLong);
  at::Tensor m = at::ones({2, 5}, at::kLong);
  m[1].slice(0, 3).zero_();
  check("plain_hf_masks.pt", {ids, m, m});  // int64, as tokenizers give them
  check("plain_hf_masks.pt", {ids, m.to(at::kFloat), m.to(at::kInt)});
  // Token ids into an embedding stay int64: refused before anything runs, naming the input.
  auto model = runtime_->load(fixture("plain_hf_masks.pt"));
  std::string msg;
  try {
    model->run({to_sy(ids.to(at::kFloat)), to_sy(m), to_sy(m)});
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("input 0 'input_ids': expected dtype int64, got float32"), std::string::npos) << msg;
  // A converted graph keeps "any": it is written as such and runs with an int64 mask.
  const std::string json = (std::filesystem::path(testing::TempDir()) / "hf_masks.json").string();
  torchscript::read_model(fixture("plain_hf_masks.pt")).save(json);
  std::vector<Tensor> out = runtime_->load(json)->run({to_sy(ids), to_sy(m), to_sy(m)});
  expect_close({to_at(out.at(0))}, reference(fixture("plain_hf_masks.pt"), {ids, m, m}), "hf_masks.json");

  // CLIP's pixel_values.to(dtype=weight.dtype): not an index, not pinned.
  ir::Graph p = import("plain_pixel_to.pt");
  EXPECT_TRUE(is_any_dtype(p.values[p.inputs[0]].dtype)) << dtype_name(p.values[p.inputs[0]].dtype);
  check("plain_pixel_to.pt", {at::randn({2, 3, 8, 8})});
  check("plain_pixel_to.pt", {at::randn({1, 3, 6, 8}, at::kDouble)});
  // A conv's own input has its weight's dtype: float64 is refused up front.
  ir::Graph c = import("cnn_nohint.pt");
  EXPECT_TRUE(same_dtype(c.values[c.inputs[0]].dtype, kFloat)) << dtype_name(c.values[c.inputs[0]].dtype);
  msg.clear();
  try {
    runtime_->load(fixture("cnn_nohint.pt"))->run({to_sy(at::randn({1, 3, 8, 8}, at::kDouble))});
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("input 0 'x': expected dtype float32, got float64"), std::string::npos) << msg;
}
