// The memory planner: reuse, views that outlive their producer's last reader, graph
// outputs kept out of the arena, a new plan per input shape, and the check that copies
// out a view the planning run did not see. The `memory_ops` test plugin has
// host-allocated kernels (test::scale, test::add) and views (test::alias).
#include "api/internal.hpp"
#include "exec/memory_plan.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <thread>

using namespace switchyard;
using namespace sytest;
using Kind = exec::ValueLife::Kind;

namespace {

exec::ValueLife life(Kind kind, size_t bytes, int32_t first, int32_t last, ir::ValueId view_of = ir::kNoValue) {
  exec::ValueLife l;
  l.kind = kind;
  l.bytes = bytes;
  l.first = first;
  l.last = last;
  l.view_of = view_of;
  return l;
}

bool overlap(const exec::MemoryPlan& p, const std::vector<exec::ValueLife>& v, size_t a, size_t b) {
  const bool in_time = v[a].first <= std::max(p.last[b], v[b].first) && v[b].first <= std::max(p.last[a], v[a].first);
  const bool in_space = p.offset[a] < p.offset[b] + static_cast<int64_t>(v[b].bytes) &&
                        p.offset[b] < p.offset[a] + static_cast<int64_t>(v[a].bytes);
  return in_time && in_space;
}

std::string config(const std::string& runtime = "") {
  return write_config("memory", std::string("[plugins]\nload = [\"") + SY_TEST_PLUGIN_DIR +
                                    "/libswitchyard-memory_ops.so\"]\n[runtime]\n" + runtime);
}

ir::Attributes k(double v) { return {{"k", ir::Attribute::of_float(v)}}; }

// x -> a = 2x -> v = alias(a) ; b = 3a (a's last direct reader) ; c = 5b ; y = v + c.
// Without v extending a's life, c would take a's bytes and y would be 60x, not 32x.
ir::Graph view_outlives_producer(const char* alias_op = "test::alias") {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("a", "test::scale", {x}, {"a"}, k(2));
  g.add_node("v", alias_op, {g.find_value("a")}, {"v"});
  g.add_node("b", "test::scale", {g.find_value("a")}, {"b"}, k(3));
  g.add_node("c", "test::scale", {g.find_value("b")}, {"c"}, k(5));
  g.add_node("y", "test::add", {g.find_value("v"), g.find_value("c")}, {"y"});
  g.outputs = {g.find_value("y")};
  return g;
}

const MemoryValue& value(const MemoryReport& r, const std::string& name) {
  for (const MemoryValue& v : r.values)
    if (v.value == name) return v;
  ADD_FAILURE() << "no value " << name << " in the memory plan";
  return r.values.front();
}

std::vector<float> times(std::vector<float> x, float k) {
  for (float& e : x) e *= k;
  return x;
}

}  // namespace

// ---- the planner on its own ------------------------------------------------------

TEST(PlanMemory, AChainReusesBytesOnceTheirReaderHasRun) {
  // v0 -> v1 -> v2 -> v3 -> v4, each 1000 bytes, each read only by the next node.
  std::vector<exec::ValueLife> v;
  for (int i = 0; i < 5; ++i) v.push_back(life(Kind::HostArena, 1000, i, i + 1));
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.total_activation_bytes, 5000u);
  EXPECT_EQ(p.arena_bytes, 2 * 1024u) << "two values are alive at once; 1000 rounds up to 1024";
  for (size_t a = 0; a < v.size(); ++a)
    for (size_t b = a + 1; b < v.size(); ++b) EXPECT_FALSE(overlap(p, v, a, b)) << a << " and " << b;
}

TEST(PlanMemory, AViewExtendsItsParentsLifeTransitively) {
  std::vector<exec::ValueLife> v = {
      life(Kind::HostArena, 512, 0, 1),  // 0: read by node 1 only...
      life(Kind::View, 0, 1, 2, 0),      // 1: ...which views it; read by node 2
      life(Kind::View, 0, 2, 6, 1),      // 2: a view of the view, read at node 6
      life(Kind::HostArena, 512, 3, 4),  // 3..5: made while 0's bytes must stay
      life(Kind::HostArena, 512, 4, 5), life(Kind::HostArena, 512, 5, 6),
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.last[0], 6);
  EXPECT_EQ(p.last[1], 6);
  for (size_t b : {3u, 4u, 5u}) EXPECT_FALSE(overlap(p, v, 0, b)) << "value " << b << " reuses 0's bytes too early";
}

TEST(PlanMemory, WhatAGraphOutputReadsStaysOutOfTheArena) {
  std::vector<exec::ValueLife> v = {
      life(Kind::HostArena, 256, 0, 1),
      life(Kind::View, 0, 1, exec::kForever, 0),      // a graph output viewing value 0
      life(Kind::HostArena, 256, 2, exec::kForever),  // a graph output itself
      life(Kind::HostArena, 256, 2, 3),
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.offset[0], -1);
  EXPECT_EQ(p.offset[2], -1);
  EXPECT_GE(p.offset[3], 0);
  EXPECT_EQ(p.arena_bytes, 256u);
  EXPECT_EQ(p.heap_peak_bytes, 512u) << "values 0 and 2 live on the heap to the end";
}

// A decoder: attention values early, then a large graph output (the logits) beside the
// last hidden state. The output's peak is paid anyway; values that fit under it wherever
// they live stay on the heap, so the arena (held all run) keeps only the last input.
TEST(PlanMemory, ValuesUnderTheHeapPeakStayOutOfTheArena) {
  std::vector<exec::ValueLife> v = {
      life(Kind::HostArena, 300, 0, 2),                // 0: q, early
      life(Kind::HostArena, 500, 1, 2),                // 1: scores, early
      life(Kind::HostArena, 200, 2, 3),                // 2: the last hidden state
      life(Kind::HostArena, 1000, 3, exec::kForever),  // 3: the logits, a graph output
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.offset[0], -1);
  EXPECT_EQ(p.offset[1], -1);
  EXPECT_GE(p.offset[2], 0) << "alive beside the logits: the heap would pass its peak";
  EXPECT_EQ(p.arena_bytes, 256u);  // 200, aligned to 64
  EXPECT_EQ(p.heap_peak_bytes, 1000u);
  EXPECT_EQ(p.estimated_peak_bytes(), 1256u) << "with all three in the arena: 1088 + 1000";
  EXPECT_TRUE(p.arena_on);
}

TEST(PlanMemory, UnreadValuesStillTakeBytesWhileTheirProducerRuns) {
  std::vector<exec::ValueLife> v = {life(Kind::HostArena, 64, 0, -1), life(Kind::HostArena, 64, 0, 1)};
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_FALSE(overlap(p, v, 0, 1));
  EXPECT_EQ(p.arena_bytes, 128u);
}

TEST(PlanMemory, WithoutTheArenaEverythingIsHeap) {
  std::vector<exec::ValueLife> v = {life(Kind::HostArena, 100, 0, 1), life(Kind::Kernel, 100, 1, 2),
                                    life(Kind::HostArena, 100, 2, 3)};
  exec::MemoryPlan p = exec::plan_memory(v, /*use_arena=*/false);
  EXPECT_EQ(p.arena_bytes, 0u);
  for (int64_t o : p.offset) EXPECT_EQ(o, -1);
  EXPECT_EQ(p.heap_peak_bytes, 200u);
  EXPECT_EQ(p.estimated_peak_bytes(), 200u);
}

// ---- in-place at the end (SDK 1.2 output_inplace_tail) -----------------------------

exec::ValueLife tail(exec::ValueLife l, int32_t of) {
  l.tail_of = of;
  return l;
}

TEST(PlanMemory, AValueTakesTheEndOfTheOutputWrittenOverIt) {
  std::vector<exec::ValueLife> v = {
      tail(life(Kind::HostArena, 256, 0, 1), 1),  // 0: the input, last read by node 1...
      life(Kind::HostArena, 1024, 1, 2),          // 1: ...which writes this over it
      life(Kind::HostArena, 512, 0, 1),           // 2: alive beside both at node 1
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.offset[0], p.offset[1] + 1024 - 256) << "the input's bytes end where the output's do";
  EXPECT_EQ(p.tail_host[0], 1);
  EXPECT_EQ(p.tail_host[2], -1);
  EXPECT_FALSE(overlap(p, v, 2, 0));
  EXPECT_FALSE(overlap(p, v, 2, 1));
  EXPECT_EQ(p.arena_bytes, 1536u) << "without the end: 1024 + 512 + 256";
}

TEST(PlanMemory, AValueTakesTheEndOnlyWhereNothingElseIsThere) {
  std::vector<exec::ValueLife> v = {
      tail(life(Kind::HostArena, 256, 0, 1), 1),  // 0: may take 1's end...
      life(Kind::HostArena, 1024, 1, 2),          // 1
      life(Kind::HostArena, 1024, 0, 0),          // 2: ...but this one is there at node 0
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.offset[1], p.offset[2]) << "1 reuses 2's bytes";
  EXPECT_EQ(p.tail_host[0], -1);
  for (size_t b : {1u, 2u}) EXPECT_FALSE(overlap(p, v, 0, b)) << "0 and " << b;
}

TEST(PlanMemory, TheEndMustBeWholeAlignmentsAway) {
  // 1000 - 300 is not a multiple of 64: the input could not end exactly where the output does.
  std::vector<exec::ValueLife> v = {tail(life(Kind::HostArena, 300, 0, 1), 1), life(Kind::HostArena, 1000, 1, 2)};
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.tail_host[0], -1);
  EXPECT_FALSE(overlap(p, v, 0, 1));
}

// The decoder again, now with a final linear that may write the logits over its input:
// everything fits in the logits' own buffer, which becomes the arena.
TEST(PlanMemory, AGraphOutputsBufferBecomesTheArenaWhereThatLowersThePeak) {
  std::vector<exec::ValueLife> v = {
      life(Kind::HostArena, 320, 0, 2),                // 0: q, early
      life(Kind::HostArena, 512, 1, 2),                // 1: scores, early
      tail(life(Kind::HostArena, 192, 2, 3), 3),       // 2: the last hidden state
      life(Kind::HostArena, 1024, 3, exec::kForever),  // 3: the logits, a graph output
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_EQ(p.arena_outputs, std::vector<int32_t>{3});
  EXPECT_EQ(p.arena_bytes, 1024u);
  EXPECT_EQ(p.heap_peak_bytes, 0u);
  EXPECT_EQ(p.offset[2], p.offset[3] + 1024 - 192);
  for (size_t a = 0; a < v.size(); ++a)
    for (size_t b = a + 1; b < v.size(); ++b)
      if (!(a == 2 && b == 3)) EXPECT_FALSE(overlap(p, v, a, b)) << a << " and " << b;
  EXPECT_EQ(p.estimated_peak_bytes(), 1024u) << "was 1216: the logits beside the last hidden state";
}

TEST(PlanMemory, AGraphOutputStaysOnTheHeapWhereTheArenaWouldOutgrowIt) {
  std::vector<exec::ValueLife> v = {
      life(Kind::HostArena, 2048, 0, 1),               // 0: larger than the output
      tail(life(Kind::HostArena, 192, 1, 2), 2),       // 1
      life(Kind::HostArena, 1024, 2, exec::kForever),  // 2: a graph output
  };
  exec::MemoryPlan p = exec::plan_memory(v);
  EXPECT_TRUE(p.arena_outputs.empty()) << "a caller keeping the output would keep 2 KiB";
  EXPECT_EQ(p.offset[2], -1);
}

// ---- the planner in the executor ---------------------------------------------------

TEST(MemoryPlan, AViewOutlivesItsProducersLastDirectReader) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, view_outlives_producer());
  const std::vector<float> x = {1, -2, 3, 0.5f};
  for (int run = 0; run < 3; ++run) {  // run 0 plans; runs 1 and 2 use the arena
    auto out = model->run({f32({4}, x)});
    EXPECT_EQ(values(out[0]), times(x, 32)) << "run " << run;
    EXPECT_EQ(model->last_stats().arena_bytes > 0, run > 0) << "run " << run;
  }
  MemoryReport r = model->memory_plan({f32({4}, x)});
  ASSERT_TRUE(r.arena_enabled);
  EXPECT_EQ(value(r, "a").placement, "arena");
  EXPECT_EQ(value(r, "v").placement, "view of a");
  EXPECT_FALSE(value(r, "v").in_place) << "a view test::alias returned, not an in-place write";
  EXPECT_EQ(value(r, "a").last, 4) << "a's bytes must live until y reads its view";
  EXPECT_NE(value(r, "c").offset, value(r, "a").offset);
  EXPECT_EQ(value(r, "y").placement, "output");
}

TEST(MemoryPlan, ANewInputShapeMakesANewPlan) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, view_outlives_producer());
  std::vector<float> small(16, 1.0f), large(1024, 1.0f);
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(values(model->run({f32({16}, small)})[0]), times(small, 32));
    EXPECT_EQ(values(model->run({f32({1024}, large)})[0]), times(large, 32));
  }
  const MemoryReport a = model->memory_plan({f32({16}, small)});
  const MemoryReport b = model->memory_plan({f32({1024}, large)});
  EXPECT_EQ(value(a, "a").bytes, 16 * sizeof(float));
  EXPECT_EQ(value(b, "a").bytes, 1024 * sizeof(float));
  EXPECT_EQ(b.arena_bytes, 64 * a.arena_bytes) << "each 64 B value grows to 4 KiB";
  model->run({f32({16}, small)});
  EXPECT_EQ(model->last_stats().arena_bytes, a.arena_bytes) << "the first shape's plan is reused";
}

TEST(MemoryPlan, AViewThePlanningRunDidNotSeeIsCopiedOutOfTheArena) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, view_outlives_producer("test::late_alias"));
  const std::vector<float> x = {1, 2, 3, 4};
  model->run({f32({4}, x)});  // plans: late_alias copies, so a looks dead after b
  EXPECT_EQ(value(model->memory_plan({f32({4}, x)}), "v").placement, "heap");
  for (int run = 0; run < 2; ++run) {  // now late_alias returns a view of a, in the arena
    EXPECT_EQ(values(model->run({f32({4}, x)})[0]), times(x, 32)) << "run " << run;
    EXPECT_GT(model->last_stats().arena_bytes, 0u);
  }
}

TEST(MemoryPlan, CaptureAndTheConfigTurnTheArenaOff) {
  std::vector<const char*> runtimes = {"node_io = \"all\"\n", "memory_planner = false\n"};
#if !defined(__SANITIZE_THREAD__)  // oneTBB here is not built with TSan: its hand-offs read as races
  runtimes.push_back("inter_op_threads = 2\n");
#endif
  for (const char* runtime : runtimes) {
    Runtime rt(Options{config(runtime)});
    auto model = load_graph(rt, view_outlives_producer());
    const std::vector<float> x = {1, 2};
    for (int run = 0; run < 2; ++run) {
      EXPECT_EQ(values(model->run({f32({2}, x)})[0]), times(x, 32)) << runtime;
      EXPECT_EQ(model->last_stats().arena_bytes, 0u) << runtime;
    }
    EXPECT_FALSE(model->memory_plan({f32({2}, x)}).arena_enabled) << runtime;
  }
}

TEST(MemoryPlan, ConcurrentRunsEachTakeTheirOwnArena) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, view_outlives_producer());
  std::vector<float> x(4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) - 48.0f;
  model->run({f32({4096}, x)});  // plan once
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      RunContext ctx;
      std::vector<float> mine = times(x, static_cast<float>(t + 1));
      for (int run = 0; run < 20; ++run)
        if (values(model->run({f32({4096}, mine)}, ctx)[0]) != times(mine, 32)) ++wrong[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST(MemoryPlan, AMeasuredRunCountsTheArena) {
  Runtime rt(Options{config()});
  auto model = load_graph(rt, view_outlives_producer());
  std::vector<float> x(1 << 16, 1.0f);  // 256 KiB per value
  model->run({f32({1 << 16}, x)});
  RunContext ctx;
  ctx.set_memory_measurement(true);
  model->run({f32({1 << 16}, x)}, ctx);
  const MemoryReport r = model->memory_plan({f32({1 << 16}, x)});
  const double measured = static_cast<double>(ctx.last_stats().measured_peak_bytes);
  EXPECT_GE(measured, 0.9 * static_cast<double>(r.estimated_peak_bytes));
  EXPECT_LE(measured, 1.1 * static_cast<double>(r.estimated_peak_bytes));
}

// x -> a = 2x (arena) -> y = repeat2(a), a graph output twice a's size that its kernel may
// write over a buffer ending with a: the arena is y's buffer, and a sits at its end.
TEST(MemoryPlan, AGraphOutputWrittenOverItsInputsBufferKeepsItsValues) {
  Runtime rt(Options{config()});
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("a", "test::scale", {x}, {"a"}, k(2));
  g.add_node("y", "test::repeat2", {g.find_value("a")}, {"y"});
  g.outputs = {g.find_value("y")};
  auto model = load_graph(rt, std::move(g));
  std::vector<float> in(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 20.5f;
  std::vector<float> want;
  for (float e : in) want.insert(want.end(), {2 * e, 2 * e});
  std::vector<Tensor> kept;
  for (int run = 0; run < 4; ++run) {  // run 0 plans; the others write y over a
    auto out = model->run({f32({64}, run % 2 ? times(in, 3) : in)});
    EXPECT_EQ(values(out[0]), run % 2 ? times(want, 3) : want) << "run " << run;
    kept.push_back(out[0]);
  }
  for (size_t run = 0; run < kept.size(); ++run)  // each output kept its own buffer
    EXPECT_EQ(values(kept[run]), run % 2 ? times(want, 3) : want) << "run " << run << ", read after the others";
  MemoryReport r = model->memory_plan({f32({64}, in)});
  EXPECT_EQ(value(r, "y").placement, "output, in the arena");
  EXPECT_EQ(value(r, "a").placement, "arena, at the end of y");
  EXPECT_EQ(value(r, "a").offset, value(r, "y").offset + 512 - 256);
  EXPECT_EQ(r.arena_bytes, 512u);
  EXPECT_EQ(r.estimated_peak_bytes, 512u) << "y beside a would be 768";
}
