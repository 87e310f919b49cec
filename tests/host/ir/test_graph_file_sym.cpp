// Graph file version 2: sym nodes, attributes bound to scalar values, and input specs
// (rank, symbolic dim names, example shape) round-trip; version 1 files still read; and
// every malformed bound attribute is an error naming it.
#include "graph_file_fixture.hpp"
#include "ir/sym.hpp"

using namespace switchyard;
using namespace switchyard::ir;
using namespace switchyard::ir::test;
using ::testing::HasSubstr;

namespace {

// x [B, 4] -> view(x, [x.size(0), 2, -1]) + x.size(0) (as a tensor)
Graph sym_graph() {
  Graph g;
  const ValueId x = g.add_input("x", kFloat32, {-1, 4});
  Value& in = g.values[static_cast<size_t>(x)];
  in.rank_known = true;
  in.dim_names = {"B", "F"};
  in.example_shape = {2, 4};
  const ValueId b = g.add_sym("batch", "sym::size", {x}, {{"dim", Attribute::of_int(0)}});
  const ValueId two = g.add_sym("two", "sym::const", {}, {{"value", Attribute::of_int(2)}});
  const ValueId free = g.add_sym("free", "sym::const", {}, {{"value", Attribute::of_int(-1)}});
  const ValueId size = g.add_sym("size", "sym::list", {b, two, free});
  const ValueId bt = g.add_sym("batch_t", "sym::tensor", {b}, {{"dtype", Attribute::of_string("int64")}});
  const int32_t view =
      g.add_node("view", "aten::view", {x}, {"v"}, {{"size", Attribute::of_ref(size, AttrKind::Ints)}});
  g.add_node("add", "aten::add", {g.nodes[static_cast<size_t>(view)].outputs[0], bt}, {"y"});
  g.outputs = {g.find_value("y")};
  validate(g);
  return g;
}

}  // namespace

TEST_F(GraphFileTest, SymGraphRoundTrips) {
  write_graph_file(sym_graph(), json_path_);
  const Json file = Json::parse(read_bytes(json_path_));
  EXPECT_EQ(file["version"], 2);
  EXPECT_EQ(file["inputs"][0]["shape"], Json({-1, 4}));
  EXPECT_EQ(file["inputs"][0]["dim_names"], Json({"B", "F"}));
  EXPECT_EQ(file["inputs"][0]["example_shape"], Json({2, 4}));
  bool seen_ref = false;
  for (const Json& node : file["nodes"])
    if (node["op"] == "aten::view") {
      EXPECT_EQ(node["attrs"]["size"], Json({{"ref", "size"}, {"kind", "ints"}}));
      seen_ref = true;
    }
  EXPECT_TRUE(seen_ref);

  const Graph g = read_graph_file(json_path_);
  const Value& x = g.values[static_cast<size_t>(g.inputs[0])];
  EXPECT_TRUE(x.rank_known);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(x.dim_names, (std::vector<std::string>{"B", "F"}));
  EXPECT_EQ(x.example_shape, (std::vector<int64_t>{2, 4}));
  const ValueId size = g.find_value("size");
  ASSERT_NE(size, kNoValue);
  EXPECT_EQ(g.values[static_cast<size_t>(size)].type, ValueType::Scalar);
  EXPECT_EQ(g.values[static_cast<size_t>(g.find_value("batch_t"))].type, ValueType::Tensor);
  for (const Node& n : g.nodes)
    if (n.op == "aten::view") {
      const Attribute* a = find_attr(n.attrs, "size");
      ASSERT_NE(a, nullptr);
      EXPECT_TRUE(a->bound());
      EXPECT_EQ(a->ref, size);
      EXPECT_EQ(a->kind, AttrKind::Ints);
      // The bound value is computed before the node that reads it.
      EXPECT_LT(g.values[static_cast<size_t>(size)].producer, g.values[static_cast<size_t>(n.outputs[0])].producer);
    }
}

TEST_F(GraphFileTest, InputShapesByVersion) {
  Json graph = minimal_graph();  // version 1
  graph["inputs"][0]["shape"] = Json::array();
  write_graph(graph);
  EXPECT_FALSE(read_graph_file(json_path_).values[0].rank_known);  // version 1: [] is "unknown"
  graph["version"] = 2;
  write_graph(graph);
  EXPECT_TRUE(read_graph_file(json_path_).values[0].rank_known);  // version 2: [] is a 0-D input
  graph["inputs"][0].erase("shape");
  write_graph(graph);
  EXPECT_FALSE(read_graph_file(json_path_).values[0].rank_known);  // no shape: unknown
  graph["version"] = 1;
  graph["inputs"][0]["shape"] = Json({-1, 4});
  write_graph(graph);
  EXPECT_TRUE(read_graph_file(json_path_).values[0].rank_known);
}

TEST_F(GraphFileTest, BoundAttributeErrors) {
  write_graph_file(sym_graph(), json_path_);
  const Json good = Json::parse(read_bytes(json_path_));
  size_t view = 0;
  while (good["nodes"][view]["op"] != "aten::view") ++view;
  auto with_size = [&](Json attr) {
    Json graph = good;
    graph["nodes"][view]["attrs"]["size"] = std::move(attr);
    write_bytes(json_path_, graph.dump(2));
  };
  with_size(Json({{"ref", "nope"}, {"kind", "ints"}}));
  EXPECT_THAT(read_error(ErrorKind::Graph),
              HasSubstr("node 'view': attribute 'size' is bound to 'nope', which is not defined"));
  with_size(Json({{"ref", "size"}, {"kind", "tensor"}}));
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("attribute 'size': unknown bound kind 'tensor'"));
  with_size(Json({{"ref", "size"}}));
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("attribute 'size' must be {\"ref\""));
  with_size(Json({{"ref", 3}, {"kind", "ints"}}));
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("field 'ref' must be a string"));
  with_size(Json({{"ref", "x"}, {"kind", "ints"}}));  // a graph input, not a scalar
  EXPECT_THAT(read_error(ErrorKind::Graph), HasSubstr("attribute 'size' is bound to"));
  with_size(Json({{"ref", "batch"}, {"kind", "float"}}));  // an int given to a float is fine...
  EXPECT_NO_THROW(read_graph_file(json_path_));
  with_size(Json({{"ref", "size"}, {"kind", "int"}}));  // ...a list given to an int is not
  EXPECT_THAT(read_error(ErrorKind::Graph), HasSubstr("attribute 'size' expects int"));

  Json old = good;
  old["version"] = 1;
  write_bytes(json_path_, old.dump(2));
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("bound attributes ({\"ref\": ...}) need graph format version 2"));
}

TEST_F(GraphFileTest, ScalarUsedAsATensorInput) {
  write_graph_file(sym_graph(), json_path_);
  Json graph = Json::parse(read_bytes(json_path_));
  for (Json& node : graph["nodes"])
    if (node["op"] == "aten::add") node["inputs"][1] = "batch";  // the sym::size result itself
  write_bytes(json_path_, graph.dump(2));
  EXPECT_THAT(read_error(ErrorKind::Graph),
              HasSubstr("is a scalar; kernels read tensors (make it one with sym::tensor)"));
}

TEST_F(GraphFileTest, InputSpecFieldErrors) {
  Json graph = minimal_graph();
  graph["version"] = 2;
  graph["inputs"][0]["dim_names"] = Json({"B"});
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io),
              HasSubstr("input 'x': field 'dim_names' has 1 names for a shape of 2 dimensions"));
  graph["inputs"][0]["dim_names"] = Json({"B", 4});
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("field 'dim_names' entry must be a string"));
  graph["inputs"][0].erase("dim_names");
  graph["inputs"][0]["example_shape"] = Json({2, -1});
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io), HasSubstr("input 'x': field 'example_shape' has invalid dimension -1"));
  graph["inputs"][0]["example_shape"] = Json({2});
  write_graph(graph);
  EXPECT_THAT(read_error(ErrorKind::Io),
              HasSubstr("field 'example_shape' [2] does not have the rank of its shape [-1, 4]"));
}
