// Fusion: a producer and its element-wise consumer (or a chain of two) run as one "A+B"
// ("A+B+C") kernel when the producer's backend offers and accepts it (sdk.h, "Fused
// kernels"), and only then. The `fusing` test plugin's kernels are listed in
// plugins/fusing.cpp.
#include "api/internal.hpp"
#include "exec/fusion.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

std::string config(const std::string& extra = "") {
  return write_config("fusion", std::string("[plugins]\nload = [\"example\", \"") + SY_TEST_PLUGIN_DIR +
                                    "/libswitchyard-fusing.so\"]\n" + extra);
}

// x -> scale(k) -> "scaled" -> shift(by) -> "y"  [-> extra consumers of "scaled"]
ir::Graph chain(double k, double by, bool scaled_is_output = false) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("scale", "test::scale", {x}, {"scaled"}, {{"k", ir::Attribute::of_float(k)}}, "block.scale");
  g.add_node("shift", "test::shift", {g.find_value("scaled")}, {"y"}, {{"by", ir::Attribute::of_float(by)}},
             "block.shift");
  g.outputs = {g.find_value("y")};
  if (scaled_is_output) g.outputs.push_back(g.find_value("scaled"));
  return g;
}

float fused_runs(const Runtime& rt) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("runs", "test::runs", {x}, {"n"});
  g.outputs = {g.find_value("n")};
  return values(load_graph(rt, std::move(g))->run({f32({1}, {0})})[0])[0];
}

}  // namespace

TEST(Fusion, FusesWhenTheBackendOffersAndAccepts) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain(2.0, 0.5));
  const float before = fused_runs(rt);
  auto out = model->run({f32({3}, {1, -2, 3})});
  EXPECT_EQ(values(out[0]), (std::vector<float>{2.5f, -3.5f, 6.5f}));
  EXPECT_EQ(fused_runs(rt), before + 1) << "the fused kernel should have run once";
  EXPECT_EQ(model->last_stats().nodes_run, 1u);

  auto plan = model->plan({f32({3}, {1, -2, 3})});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].op, "test::scale+test::shift");
  EXPECT_EQ(plan[0].backend, "fusing");
  EXPECT_EQ(plan[0].fused_from, (std::vector<std::string>{"scale", "shift"}));
  EXPECT_NE(plan[0].reason.find("fused with 'shift'"), std::string::npos) << plan[0].reason;
  EXPECT_EQ(plan[1].backend, "fusing");
  EXPECT_NE(plan[1].reason.find("fused into 'scale'"), std::string::npos) << plan[1].reason;
}

TEST(Fusion, RejectedFusedNodeRunsUnfused) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain(-1.0, 0.5));  // the fused kernel declines k < 0
  const float before = fused_runs(rt);
  EXPECT_EQ(values(model->run({f32({2}, {1, 2})})[0]), (std::vector<float>{-0.5f, -1.5f}));
  EXPECT_EQ(fused_runs(rt), before);
  EXPECT_EQ(model->last_stats().nodes_run, 2u);
  EXPECT_TRUE(model->plan({f32({2}, {1, 2})})[0].fused_from.empty());
}

TEST(Fusion, IntermediateThatIsAGraphOutputIsNotFused) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, chain(2.0, 1.0, /*scaled_is_output=*/true));
  auto out = model->run({f32({2}, {1, 2})});
  EXPECT_EQ(values(out[0]), (std::vector<float>{3, 5}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{2, 4}));
  EXPECT_EQ(model->last_stats().nodes_run, 2u);
}

TEST(Fusion, TwoConsumersAreNotFused) {
  Runtime rt(Options{config()});
  ir::Graph g = chain(2.0, 1.0);
  g.add_node("shift2", "test::shift", {g.find_value("scaled")}, {"z"}, {{"by", ir::Attribute::of_float(3.0)}});
  g.outputs.push_back(g.find_value("z"));
  auto model = load_graph(rt, std::move(g));
  auto out = model->run({f32({1}, {1})});
  EXPECT_EQ(values(out[0]), (std::vector<float>{3}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{5}));
  EXPECT_EQ(model->last_stats().nodes_run, 3u);
}

TEST(Fusion, ConsumerRoutedElsewhereIsNotFused) {
  // x -> scale -> relu; the fusing plugin offers test::scale+aten::relu.
  auto graph = [] {
    ir::Graph g;
    ir::ValueId x = g.add_input("x", kF32, {-1});
    g.add_node("scale", "test::scale", {x}, {"scaled"}, {{"k", ir::Attribute::of_float(-2.0)}}, "block.scale");
    g.add_node("relu", "aten::relu", {g.find_value("scaled")}, {"y"}, {}, "block.relu");
    g.outputs = {g.find_value("y")};
    return g;
  };
  // A rule sends the consumer to "example" only: the pair stays apart.
  Runtime apart(
      Options{config("[[rules]]\nnode = \"relu\"\nbackends = [\"example\"]\n"
                     "[selection]\ndefault = [\"fusing\"]\n")});
  auto model = load_graph(apart, graph());
  EXPECT_EQ(values(model->run({f32({2}, {1, -1})})[0]), (std::vector<float>{0, 2}));
  auto plan = model->plan({f32({2}, {1, -1})});
  EXPECT_TRUE(plan[0].fused_from.empty());
  EXPECT_EQ(plan[1].backend, "example");
  // The consumer's routing allows the producer's backend: fused.
  Runtime together(Options{config("[[rules]]\nmodule = \"block.*\"\nbackends = [\"fusing\", \"example\"]\n")});
  auto fused = load_graph(together, graph());
  EXPECT_EQ(values(fused->run({f32({2}, {1, -1})})[0]), (std::vector<float>{0, 2}));
  EXPECT_EQ(fused->plan({f32({2}, {1, -1})})[0].fused_from, (std::vector<std::string>{"scale", "relu"}));
}

TEST(Fusion, OffByConfigAndUnderFullCapture) {
  Runtime off(Options{config("[selection]\nfuse = false\n")});
  auto model = load_graph(off, chain(2.0, 1.0));
  EXPECT_EQ(values(model->run({f32({1}, {1})})[0]), (std::vector<float>{3}));
  EXPECT_EQ(model->last_stats().nodes_run, 2u);

  Options all{config()};
  all.capture = "all";
  Runtime capture(all);
  auto captured = load_graph(capture, chain(2.0, 1.0));
  captured->run({f32({1}, {1})});
  ASSERT_EQ(captured->node_io().size(), 2u) << "node_io 'all' records every original node";
  EXPECT_EQ(captured->node_io()[0].node, "scale");
  EXPECT_EQ(values(captured->node_io()[0].outputs[0]), (std::vector<float>{2}));
}

TEST(Fusion, StreamCaptureSeesEveryOriginalNode) {
  std::vector<std::string> seen;
  auto record = [&](const NodeEvent& e) {
    ASSERT_NE(e.input_sources, nullptr);
    std::string sources;
    for (const auto& s : *e.input_sources) sources += s + ";";
    seen.push_back(e.node + "#" + std::to_string(e.index) + " " + e.op + " (" + sources + ")");
    if (e.op.find('+') == std::string::npos) EXPECT_EQ(e.fused_members, nullptr) << e.node << " ran alone";
    EXPECT_EQ(e.input_sources->size(), e.inputs.size()) << e.node;
  };
  Runtime fusing(Options{config()});  // a callback alone leaves fusion on: one fused event
  auto fused = load_graph(fusing, chain(2.0, 1.0));
  fused->set_node_callback(record);
  EXPECT_EQ(values(fused->run({f32({1}, {1})})[0]), (std::vector<float>{3}));
  EXPECT_EQ(seen, (std::vector<std::string>{"scale#0 test::scale+test::shift (x;)"}));

  seen.clear();
  Options o{config()};
  o.capture = "stream";
  Runtime stream(o);
  auto model = load_graph(stream, chain(2.0, 1.0));
  model->set_node_callback(record);
  EXPECT_EQ(values(model->run({f32({1}, {1})})[0]), (std::vector<float>{3}));
  EXPECT_EQ(model->last_stats().nodes_run, 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"scale#0 test::scale (x;)", "shift#1 test::shift (scaled;)"}));
}

TEST(Fusion, ChainOfThreeRunsAsOneKernel) {
  Runtime rt(Options{config()});
  ir::Graph g = chain(2.0, 0.5);  // x -> scale -> shift -> shift2
  g.add_node("shift2", "test::shift", {g.find_value("y")}, {"z"}, {{"by", ir::Attribute::of_float(0.25)}},
             "block.shift2");
  g.outputs = {g.find_value("z")};
  auto model = load_graph(rt, std::move(g));
  std::vector<std::string> sources, members;
  model->set_node_callback([&](const NodeEvent& e) {
    ASSERT_NE(e.input_sources, nullptr);
    for (const auto& s : *e.input_sources) sources.push_back(e.op + " <- " + s);
    ASSERT_NE(e.fused_members, nullptr) << "a fused event names the nodes it ran";
    members = *e.fused_members;
  });
  const float before = fused_runs(rt);
  EXPECT_EQ(values(model->run({f32({2}, {1, -2})})[0]), (std::vector<float>{2.75f, -3.25f}));
  EXPECT_EQ(fused_runs(rt), before + 1);
  EXPECT_EQ(model->last_stats().nodes_run, 1u);
  EXPECT_EQ(sources, (std::vector<std::string>{"test::scale+test::shift+test::shift <- x"}));
  EXPECT_EQ(members, (std::vector<std::string>{"scale", "shift", "shift2"}));
  auto plan = model->plan({f32({2}, {1, -2})});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].op, "test::scale+test::shift+test::shift");
  EXPECT_EQ(plan[0].fused_from, (std::vector<std::string>{"scale", "shift", "shift2"}));
  EXPECT_NE(plan[0].reason.find("fused with 'shift', 'shift2'"), std::string::npos) << plan[0].reason;
  EXPECT_NE(plan[2].reason.find("fused into 'scale'"), std::string::npos) << plan[2].reason;
}

TEST(Fusion, ChainReadsAResidualMadeBeforeItsHead) {
  // other = shift(x) runs first, so the chain scale -> shift -> addv(., other) may run at
  // scale's place, reading `other` as its last input.
  auto graph = [](bool other_first) {
    ir::Graph g;
    ir::ValueId x = g.add_input("x", kF32, {-1});
    auto other = [&] { g.add_node("other", "test::shift", {x}, {"o"}, {{"by", ir::Attribute::of_float(10.0)}}); };
    if (other_first) other();
    g.add_node("scale", "test::scale", {x}, {"scaled"}, {{"k", ir::Attribute::of_float(2.0)}});
    if (!other_first) other();
    g.add_node("shift", "test::shift", {g.find_value("scaled")}, {"y"}, {{"by", ir::Attribute::of_float(0.5)}});
    g.add_node("sum", "test::addv", {g.find_value("y"), g.find_value("o")}, {"z"});
    g.outputs = {g.find_value("z")};
    return g;
  };
  Runtime rt(Options{config()});
  const std::vector<float> expected{13.5f, 4.5f};  // (x * 2 + 0.5) + (x + 10) for x = 1, -2
  auto three = load_graph(rt, graph(true));
  EXPECT_EQ(values(three->run({f32({2}, {1, -2})})[0]), expected);
  EXPECT_EQ(three->last_stats().nodes_run, 2u);  // other, then the chain of three
  EXPECT_EQ(three->plan({f32({2}, {1, -2})})[1].op, "test::scale+test::shift+test::addv");
  // `other` made after scale: the chain stops at the pair; addv runs alone.
  auto pair = load_graph(rt, graph(false));
  EXPECT_EQ(values(pair->run({f32({2}, {1, -2})})[0]), expected);
  EXPECT_EQ(pair->last_stats().nodes_run, 3u);
  EXPECT_EQ(pair->plan({f32({2}, {1, -2})})[0].op, "test::scale+test::shift");
}

TEST(Fusion, BadFuseValueNamesTheLine) {
  std::string msg = error_of([] { Runtime rt(Options{write_config("badfuse", "[selection]\nfuse = \"yes\"\n")}); });
  EXPECT_NE(msg.find("badfuse.toml:2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[selection] fuse: expected a boolean"), std::string::npos) << msg;
}

// x + f(x) fuses as f(x) + x: aten::add with alpha 1 and aten::mul are commutative, so a
// producer feeding their second input comes first in the fused node's inputs. Not sub,
// not an add with another alpha, not one whose alpha is a run-time value.
TEST(Fusion, CommutativeConsumersTakeTheProducerFirst) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {-1});
  const ir::ValueId f = g.add_input("f", kF32, {-1});
  ir::Node add;
  add.op = "aten::add";
  add.inputs = {x, f};
  add.attrs = {{"alpha", ir::Attribute::of_int(1)}};
  EXPECT_EQ(exec::inputs_fed_by(add, f), (std::vector<ir::ValueId>{f, x}));
  EXPECT_EQ(exec::inputs_fed_by(add, x), (std::vector<ir::ValueId>{x, f})) << "already first: as it is";
  add.attrs = {{"alpha", ir::Attribute::of_float(1.0)}};
  EXPECT_EQ(exec::inputs_fed_by(add, f), (std::vector<ir::ValueId>{f, x}));
  add.attrs = {};
  EXPECT_EQ(exec::inputs_fed_by(add, f), (std::vector<ir::ValueId>{f, x})) << "alpha absent: 1";
  add.attrs = {{"alpha", ir::Attribute::of_int(2)}};
  EXPECT_TRUE(exec::inputs_fed_by(add, f).empty()) << "x + 2 f is not f + 2 x";
  ir::Attribute bound = ir::Attribute::of_int(1);
  bound.ref = x;
  add.attrs = {{"alpha", bound}};
  EXPECT_TRUE(exec::inputs_fed_by(add, f).empty()) << "a run-time alpha";
  ir::Node mul = add;
  mul.op = "aten::mul";
  mul.attrs = {};
  EXPECT_EQ(exec::inputs_fed_by(mul, f), (std::vector<ir::ValueId>{f, x}));
  ir::Node sub = add;
  sub.op = "aten::sub";
  sub.attrs = {};
  EXPECT_TRUE(exec::inputs_fed_by(sub, f).empty());
}
