// Concatenation without copies (exec/join_placement.cpp): a cat's inputs are written into
// its output's arena bytes where they are contiguous runs of it, growing joins nest into
// one buffer, and nothing writes over those bytes in place while a part is still read.
// test::scale (memory_ops) makes host-allocated values; aten::cat runs on the shape
// plugin, aten::add on the elementwise plugin (which may write its output over an input).
#include "api/internal.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

std::string config(const std::string& runtime = "") {
  return write_config("joins", std::string("[plugins]\nload = [\"shape\", \"elementwise\", \"") + SY_TEST_PLUGIN_DIR +
                                   "/libswitchyard-memory_ops.so\"]\n[runtime]\n" + runtime);
}

ir::Attributes k(double v) { return {{"k", ir::Attribute::of_float(v)}}; }
ir::Attributes dim(int64_t d) { return {{"dim", ir::Attribute::of_int(d)}}; }

const MemoryValue& value(const MemoryReport& r, const std::string& name) {
  for (const MemoryValue& v : r.values)
    if (v.value == name) return v;
  ADD_FAILURE() << "no value " << name << " in the memory plan";
  return r.values.front();
}

// x [B, 4] -> a = 2x, b = 3x -> c = cat([a, b], 1) -> y = c + w ; z = 5a (a read after the cat).
ir::Graph cat_then_read_again() {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1, 4});
  ir::ValueId w = g.add_input("w", kF32, {-1, 8});
  g.add_node("a", "test::scale", {x}, {"a"}, k(2));
  g.add_node("b", "test::scale", {x}, {"b"}, k(3));
  g.add_node("c", "aten::cat", {g.find_value("a"), g.find_value("b")}, {"c"}, dim(1));
  g.add_node("y", "aten::add", {g.find_value("c"), w}, {"y"});
  g.add_node("z", "test::scale", {g.find_value("a")}, {"z"}, k(5));
  g.outputs = {g.find_value("y"), g.find_value("z")};
  return g;
}

struct Expected {
  std::vector<float> y, z;
};

Expected expected(const std::vector<float>& x, const std::vector<float>& w, int64_t batch) {
  Expected e;
  for (int64_t n = 0; n < batch; ++n) {
    for (int i = 0; i < 4; ++i) e.y.push_back(2 * x[n * 4 + i] + w[n * 8 + i]);
    for (int i = 0; i < 4; ++i) e.y.push_back(3 * x[n * 4 + i] + w[n * 8 + 4 + i]);
  }
  for (float v : x) e.z.push_back(10 * v);
  return e;
}

std::vector<float> ramp(size_t n, float from) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + static_cast<float>(i);
  return v;
}

}  // namespace

TEST(JoinPlacement, ACatsInputsAreWrittenIntoItsOutputAndStayReadable) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, cat_then_read_again());
  const std::vector<float> x = ramp(4, -2), w = ramp(8, 10);
  const Expected want = expected(x, w, 1);
  for (int run = 0; run < 3; ++run) {  // run 0 plans; runs 1 and 2 write a and b into c
    auto out = model->run({f32({1, 4}, x), f32({1, 8}, w)});
    EXPECT_EQ(values(out[0]), want.y) << "run " << run;
    EXPECT_EQ(values(out[1]), want.z) << "run " << run << ": a was written over after the cat";
  }
  const MemoryReport r = model->memory_plan({f32({1, 4}, x), f32({1, 8}, w)});
  EXPECT_EQ(value(r, "c").placement, "arena");
  EXPECT_EQ(value(r, "a").placement, "arena, inside c at byte 0 (a part of a cat, written there)");
  EXPECT_EQ(value(r, "b").placement, "arena, inside c at byte 16 (a part of a cat, written there)");
  EXPECT_EQ(value(r, "b").offset, value(r, "c").offset + 16);
  EXPECT_FALSE(value(r, "y").in_place) << "y must not be written over c while a is still read";
}

TEST(JoinPlacement, ARunWithANodeCallbackJoinsByCopying) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, cat_then_read_again());
  const std::vector<float> x = ramp(4, 1), w = ramp(8, -3);
  const Expected want = expected(x, w, 1);
  model->run({f32({1, 4}, x), f32({1, 8}, w)});  // plans, with the cat elided
  RunContext ctx;
  std::vector<std::string> seen;
  ctx.set_node_callback([&](const NodeEvent& e) { seen.push_back(e.node); });
  auto out = model->run({f32({1, 4}, x), f32({1, 8}, w)}, ctx);  // no arena: the kernel joins
  EXPECT_EQ(values(out[0]), want.y);
  EXPECT_EQ(values(out[1]), want.z);
  EXPECT_NE(std::find(seen.begin(), seen.end(), "c"), seen.end());
}

TEST(JoinPlacement, PartsThatInterleaveAreCopied) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, cat_then_read_again());
  const std::vector<float> x = ramp(8, -4), w = ramp(16, 2);  // batch 2: a's rows alternate with b's
  const Expected want = expected(x, w, 2);
  for (int run = 0; run < 2; ++run) {
    auto out = model->run({f32({2, 4}, x), f32({2, 8}, w)});
    EXPECT_EQ(values(out[0]), want.y) << "run " << run;
    EXPECT_EQ(values(out[1]), want.z) << "run " << run;
  }
  const MemoryReport r = model->memory_plan({f32({2, 4}, x), f32({2, 8}, w)});
  EXPECT_EQ(value(r, "a").placement.find("inside"), std::string::npos) << value(r, "a").placement;
}

TEST(JoinPlacement, TheConfigTurnsItOff) {
  Runtime rt(Options{config("join_in_place = false\n")});
  auto model = load_graph(rt, cat_then_read_again());
  const std::vector<float> x = ramp(4, -2), w = ramp(8, 10);
  const Expected want = expected(x, w, 1);
  for (int run = 0; run < 2; ++run) EXPECT_EQ(values(model->run({f32({1, 4}, x), f32({1, 8}, w)})[0]), want.y);
  const MemoryReport r = model->memory_plan({f32({1, 4}, x), f32({1, 8}, w)});
  EXPECT_EQ(value(r, "a").placement.find("inside"), std::string::npos) << value(r, "a").placement;
}

// DenseNet's pattern: c_k = cat([a_0 .. a_k]), a_{k+1} = f(c_k). Each join is a prefix of
// the last one, so every a_k and every c_k sits in c_3's buffer and no join copies.
TEST(JoinPlacement, GrowingJoinsNestInOneBuffer) {
  Runtime rt(Options{config()});
  ir::Graph g;
  g.add_node("a0", "test::scale", {g.add_input("x", kF32, {1, -1})}, {"a0"}, k(2));
  std::vector<ir::ValueId> parts{g.find_value("a0")};
  for (int i = 1; i <= 3; ++i) {
    const std::string c = "c" + std::to_string(i), a = "a" + std::to_string(i);
    g.add_node(c, "aten::cat", parts, {c}, dim(0));
    g.add_node(a, "test::scale", {g.find_value(c)}, {a}, k(0.5));
    parts.push_back(g.find_value(a));
  }
  g.add_node("c4", "aten::cat", parts, {"c4"}, dim(0));
  g.add_node("y", "test::scale", {g.find_value("c4")}, {"y"}, k(1));
  g.outputs = {g.find_value("y")};
  auto model = load_graph(rt, std::move(g));
  // a0 = 2x; a1 = x (half of c1 = a0); a2 = half of [a0, a1]; a3 = half of [a0, a1, a2].
  const std::vector<float> x = {1, -3};
  std::vector<float> a0{2, -6}, want = a0;
  std::vector<float> c = a0;
  for (int i = 1; i <= 3; ++i) {
    std::vector<float> next;
    for (float v : c) next.push_back(v * 0.5f);
    want.insert(want.end(), next.begin(), next.end());
    c = want;
  }
  for (int run = 0; run < 3; ++run) EXPECT_EQ(values(model->run({f32({1, 2}, x)})[0]), want) << "run " << run;
  const MemoryReport r = model->memory_plan({f32({1, 2}, x)});
  for (const char* inside : {"a0", "a1", "a2", "a3", "c1", "c2", "c3"})
    EXPECT_EQ(value(r, inside).placement.rfind("arena, inside c4 at byte ", 0), 0u) << inside;
  EXPECT_EQ(value(r, "a3").offset, value(r, "c4").offset + 8 * 4);
  EXPECT_EQ(value(r, "c3").offset, value(r, "c4").offset);
}

// A part that a view points into, the view a graph output: the view outlives the run, so
// the part keeps a buffer of its own and the join copies.
TEST(JoinPlacement, APartAViewOutlivesKeepsItsOwnBuffer) {
  Runtime rt(Options{config()});
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", kF32, {1, 4});
  g.add_node("a", "test::scale", {x}, {"a"}, k(2));
  g.add_node("b", "test::scale", {x}, {"b"}, k(3));
  g.add_node("v", "test::alias", {g.find_value("a")}, {"v"});
  g.add_node("c", "aten::cat", {g.find_value("a"), g.find_value("b")}, {"c"}, dim(1));
  g.add_node("y", "test::scale", {g.find_value("c")}, {"y"}, k(1));
  g.outputs = {g.find_value("y"), g.find_value("v")};
  auto model = load_graph(rt, std::move(g));
  const std::vector<float> in = ramp(4, -1);
  for (int run = 0; run < 3; ++run) {
    auto out = model->run({f32({1, 4}, in)});
    EXPECT_EQ(values(out[0]), (std::vector<float>{-2, 0, 2, 4, -3, 0, 3, 6})) << "run " << run;
    EXPECT_EQ(values(out[1]), (std::vector<float>{-2, 0, 2, 4})) << "run " << run;
  }
  const MemoryReport r = model->memory_plan({f32({1, 4}, in)});
  EXPECT_EQ(value(r, "a").placement.find("inside"), std::string::npos) << value(r, "a").placement;
}
