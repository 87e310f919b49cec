// Plugins that misbehave: every case is reported with the node, the op and the plugin,
// and nothing crashes or passes a broken result on.
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

// One node `op` on x[3]; strict routing to the misbehaving plugin.
std::string run_bad(const std::string& op, bool check_finite = false) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {3});
  g.add_node("blk.bad", op, {x}, {"y"}, {}, "blk");
  g.add_node("after", "aten::relu", {g.find_value("y")}, {"z"});
  g.outputs = {g.find_value("z")};
  Options o{write_config("bad", std::string("[plugins]\nload = [\"example\", \"") + SY_TEST_PLUGIN_DIR +
                                    "/libswitchyard-misbehaving.so\"]\n[selection]\nstrict = true\n")};
  o.check_finite = check_finite;
  Runtime rt(o);
  auto model = load_graph(rt, std::move(g));
  return error_of([&] { model->run({f32({3}, {1, 2, 3})}); });
}

void expect_names_node_op_plugin(const std::string& msg, const std::string& op) {
  EXPECT_NE(msg.find("node 'blk.bad'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("op " + op), std::string::npos) << msg;
  EXPECT_NE(msg.find("module blk"), std::string::npos) << msg;
  EXPECT_NE(msg.find("misbehaving"), std::string::npos) << msg;
}

}  // namespace

TEST(Misbehaving, KernelReturningAnErrorIsReported) {
  std::string msg = run_bad("bad::error");
  expect_names_node_op_plugin(msg, "bad::error");
  EXPECT_NE(msg.find("deliberate failure from bad::error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid argument"), std::string::npos) << msg;
}

TEST(Misbehaving, KernelThrowingBecomesAnError) {
  std::string msg = run_bad("bad::throw");
  expect_names_node_op_plugin(msg, "bad::throw");
  EXPECT_NE(msg.find("boom: an exception thrown inside a kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("internal error"), std::string::npos) << msg;
}

TEST(Misbehaving, OutputOfTheWrongShapeIsCaught) {
  std::string msg = run_bad("bad::wrong_shape");
  expect_names_node_op_plugin(msg, "bad::wrong_shape");
  EXPECT_NE(msg.find("produced float32 [3, 2] but its infer promised float32 [3]"), std::string::npos) << msg;
}

TEST(Misbehaving, OutputOfTheWrongDtypeIsCaught) {
  std::string msg = run_bad("bad::wrong_dtype");
  expect_names_node_op_plugin(msg, "bad::wrong_dtype");
  EXPECT_NE(msg.find("produced int32 [3] but its infer promised float32 [3]"), std::string::npos) << msg;
}

TEST(Misbehaving, RewritingAHostAllocatedOutputShapeIsCaught) {
  std::string msg = run_bad("bad::tamper_shape");
  expect_names_node_op_plugin(msg, "bad::tamper_shape");
  EXPECT_NE(msg.find("produced float32 [4] but its infer promised float32 [3]"), std::string::npos) << msg;
}

TEST(Misbehaving, LyingCapabilityQueryIsReportedAtCreation) {
  std::string msg = run_bad("bad::liar");
  expect_names_node_op_plugin(msg, "bad::liar");
  EXPECT_NE(msg.find("failed to create its kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad::liar cannot really run 'blk.bad'"), std::string::npos) << msg;
}

TEST(Misbehaving, CheckFiniteNamesTheFirstNodeWithANan) {
  EXPECT_EQ(run_bad("bad::nan"), "");  // off by default: NaN is a value like any other
  std::string msg = run_bad("bad::nan", /*check_finite=*/true);
  expect_names_node_op_plugin(msg, "bad::nan");
  EXPECT_NE(msg.find("first node to produce a non-finite value (output 0, element 0)"), std::string::npos) << msg;
}
