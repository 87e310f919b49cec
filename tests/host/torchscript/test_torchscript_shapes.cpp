// Plain traces (torch.jit.trace(m, x).save(p), no hints) whose sizes come from their inputs:
// the importer keeps the size arithmetic as sym:: nodes and binds kernel arguments to it,
// makes in-place writes through views functional, and pins no input to its traced shape.
// Every model runs at shapes other than the traced one and matches LibTorch.
#include "ir/graph_file.hpp"
#include "ir/input_spec.hpp"
#include "torchscript_fixture.hpp"

#include <map>

using namespace switchyard;
using namespace switchyard::test;

namespace {

std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const ir::Node& n : g.nodes) ++counts[n.op];
  return counts;
}

// The attribute `name` of the first node running `op`; fails the test if there is none.
const ir::Attribute* attr_of(const ir::Graph& g, const std::string& op, const std::string& name) {
  for (const ir::Node& n : g.nodes)
    if (n.op == op) return ir::find_attr(n.attrs, name);
  ADD_FAILURE() << "no " << op << " node";
  return nullptr;
}

bool bound(const ir::Graph& g, const std::string& op, const std::string& name) {
  const ir::Attribute* a = attr_of(g, op, name);
  return a != nullptr && a->bound();
}

}  // namespace

TEST_F(TorchScript, PlainTransformerComputesSizesAtRunTime) {
  REQUIRE_FIXTURE("encoder_grad_nohint.pt");
  ir::Graph g = import("encoder_grad_nohint.pt");  // no recorded shapes, none needed
  const auto ops = op_counts(g);
  EXPECT_GT(ops.count("sym::size") ? ops.at("sym::size") : 0, 0);
  EXPECT_TRUE(bound(g, "aten::view", "size"));  // view(q, [T, B * H, D]) from the sizes
  for (ir::ValueId in : g.inputs) {
    EXPECT_TRUE(g.values[in].example_shape.empty());
    for (int64_t d : g.values[in].shape) EXPECT_EQ(d, -1) << g.values[in].name;  // nothing pinned
  }
  check("encoder_grad_nohint.pt", {at::randn({2, 5, 16}), mask_rows({{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}})});
  check("encoder_grad_nohint.pt",
        {at::randn({3, 9, 16}),
         mask_rows({{0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 1, 1, 1}, {0, 1, 1, 1, 1, 1, 1, 1, 1}})});
}

TEST_F(TorchScript, SizeArithmeticThroughViewExpandArangeZerosAndPad) {
  REQUIRE_FIXTURE("plain_size_ops.pt");
  ir::Graph g = import("plain_size_ops.pt");
  const auto ops = op_counts(g);
  EXPECT_TRUE(ops.count("sym::floordiv"));  // c // 2 (channel shuffle)
  EXPECT_TRUE(ops.count("sym::mod"));       // (4 - w % 4) % 4 (pad)
  EXPECT_TRUE(bound(g, "aten::view", "size"));
  EXPECT_TRUE(bound(g, "aten::pad", "pad"));
  EXPECT_TRUE(bound(g, "aten::expand", "size"));  // the class token, expanded to the batch
  EXPECT_TRUE(bound(g, "aten::arange", "end"));
  EXPECT_TRUE(bound(g, "aten::zeros", "size"));
  EXPECT_EQ(attr_of(g, "aten::arange", "end")->kind, ir::AttrKind::Int);  // an int end: int64 positions
  EXPECT_EQ(ir::expected_shape(g, 0), "[B, 3, H, W]");                    // conv.weight fixes rank and channels
  for (auto shape : {std::vector<int64_t>{2, 3, 6, 5}, {3, 3, 7, 9}, {1, 3, 4, 4}, {5, 3, 1, 2}})
    check("plain_size_ops.pt", {at::randn(shape)});
}

TEST_F(TorchScript, HalfTheBatch) {
  REQUIRE_FIXTURE("plain_half.pt");
  ir::Graph g = import("plain_half.pt");
  EXPECT_TRUE(op_counts(g).count("sym::floordiv"));
  EXPECT_TRUE(bound(g, "aten::slice", "end"));
  for (int64_t batch : {4, 2, 7, 10}) check("plain_half.pt", {at::randn({batch, 3})});
}

TEST_F(TorchScript, FloatSizeArithmeticKeepsPyTorchsDtypes) {
  REQUIRE_FIXTURE("plain_float_sizes.pt");
  ir::Graph g = import("plain_float_sizes.pt");
  const auto ops = op_counts(g);
  EXPECT_TRUE(ops.count("sym::pow"));     // x.size(-1) ** 0.5
  EXPECT_TRUE(ops.count("sym::tensor"));  // a size divided into a tensor: y / scale, y + x.size(0)
  std::set<std::string> dtypes;
  for (const ir::Node& n : g.nodes)
    if (n.op == "sym::tensor") dtypes.insert(ir::find_attr(n.attrs, "dtype")->s);
  EXPECT_TRUE(dtypes.count("int64")) << "NumToTensor of a size is an int64 tensor";
  EXPECT_TRUE(dtypes.count("float32")) << "an int64 0-D tensor ** 0.5 is a float32 tensor";
  for (auto shape : {std::vector<int64_t>{2, 6, 16}, {3, 9, 25}, {1, 2, 7}})
    check("plain_float_sizes.pt", {at::randn(shape)});
}

TEST_F(TorchScript, ListsOfSizes) {
  REQUIRE_FIXTURE("plain_size_lists.pt");
  ir::Graph g = import("plain_size_lists.pt");
  const auto ops = op_counts(g);
  EXPECT_TRUE(ops.count("sym::list"));
  for (auto shape : {std::vector<int64_t>{2, 5, 8}, {3, 11, 8}, {1, 1, 4}})
    check("plain_size_lists.pt", {at::randn(shape)});
}

TEST_F(TorchScript, WriteThroughASliceOfAMaskMadeFromSizes) {
  REQUIRE_FIXTURE("plain_write_slice.pt");
  ir::Graph g = import("plain_write_slice.pt");
  EXPECT_TRUE(op_counts(g).count("aten::slice_scatter"));
  EXPECT_TRUE(bound(g, "aten::zeros", "size"));
  for (auto shape : {std::vector<int64_t>{2, 6}, {3, 9}, {1, 1}}) check("plain_write_slice.pt", {at::randn(shape)});
}

TEST_F(TorchScript, WritesThroughSelectAndAViewChain) {
  REQUIRE_FIXTURE("plain_write_select.pt");
  ir::Graph g = import("plain_write_select.pt");
  const auto ops = op_counts(g);
  EXPECT_TRUE(ops.count("aten::select_scatter"));
  EXPECT_TRUE(ops.count("aten::reshape"));  // v = y.view(B, -1) written: back to y's size
  for (auto shape : {std::vector<int64_t>{2, 4, 6}, {3, 5, 2}, {1, 3, 1}})
    check("plain_write_select.pt", {at::randn(shape)});
}

TEST_F(TorchScript, ShiftedWindowMaskWrittenThroughSlices) {
  REQUIRE_FIXTURE("plain_window_mask.pt");
  ir::Graph g = import("plain_window_mask.pt");
  const auto ops = op_counts(g);
  EXPECT_EQ(ops.count("aten::slice_scatter") ? ops.at("aten::slice_scatter") : 0, 9 * 4);  // 9 writes, 4 slices each
  EXPECT_TRUE(bound(g, "aten::zeros", "size"));
  for (auto shape : {std::vector<int64_t>{1, 6, 8, 3}, {2, 4, 10, 2}, {3, 8, 4, 1}})
    check("plain_window_mask.pt", {at::randn(shape)});
}

TEST_F(TorchScript, RecurrentLayersWithoutInitialState) {
  REQUIRE_FIXTURE("plain_lstm.pt");
  ir::Graph g = import("plain_lstm.pt");
  const ir::Attribute* len = attr_of(g, "aten::lstm", "hx.len");  // (input, hx[2], params[16])
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len->i, 2);
  EXPECT_EQ(attr_of(g, "aten::gru", "hx.len"), nullptr);  // gru's hx is one tensor, params the last list
  EXPECT_TRUE(bound(g, "aten::zeros", "size"));           // the zero state [4, B, 8] from the batch
  EXPECT_EQ(ir::expected_shape(g, 0), "[B, S, 6]");
  for (auto shape : {std::vector<int64_t>{2, 5, 6}, {3, 7, 6}, {1, 2, 6}}) check("plain_lstm.pt", {at::randn(shape)});
}

TEST_F(TorchScript, InputSpecsRefuseShapesTheWeightsRule) {
  REQUIRE_FIXTURE("plain_size_ops.pt");
  ir::Graph g = import("plain_size_ops.pt");
  EXPECT_EQ(ir::check_input_shape(g, 0, {2, 3, 9, 9}), "");
  EXPECT_EQ(ir::check_input_shape(g, 0, {2, 4, 9, 9}),
            "input 'x' expects [B, 3, H, W] (dim 1 is fixed to 3 by conv.weight), got [2, 4, 9, 9]");
  EXPECT_EQ(ir::check_input_shape(g, 0, {3, 9, 9}),
            "input 'x' expects [B, 3, H, W] (4 dimensions, fixed by conv.weight), got [3, 9, 9]");
}

TEST_F(TorchScript, ConvertedPlainTraceRunsAtOtherShapes) {
  REQUIRE_FIXTURE("plain_window_mask.pt");
  for (const char* name : {"plain_window_mask.pt", "plain_size_ops.pt", "plain_lstm.pt"}) {
    const std::string json = (std::filesystem::path(testing::TempDir()) / (std::string(name) + ".json")).string();
    ir::write_graph_file(import(name), json);
    const ir::Graph g = ir::read_graph_file(json);
    EXPECT_TRUE(has_sym_nodes(g)) << name;
    const std::vector<int64_t> shape = std::string(name) == "plain_window_mask.pt" ? std::vector<int64_t>{2, 4, 10, 2}
                                       : std::string(name) == "plain_size_ops.pt"  ? std::vector<int64_t>{3, 3, 7, 9}
                                                                                   : std::vector<int64_t>{3, 7, 6};
    at::Tensor x = at::randn(shape);
    expect_close(IrInterpreter(g).run({x.clone()}), reference(fixture(name), {x.clone()}),
                 std::string(name) + " (graph file)");
  }
}
