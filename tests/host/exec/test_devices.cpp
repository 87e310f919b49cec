// Storages on a device (SDK 1.1), proven on the CPU with the fake-device test plugin,
// whose memory faults on any access but the plugin's own: the host never reads device
// memory; copies are inserted exactly where values cross; node_io and graph outputs come
// back as host tensors; device values get an arena and in-place writes of their own.
#include "api/internal.hpp"
#include "exec/storage.hpp"
#include "exec_test_util.hpp"
#include "ir/graph.hpp"
#include "loader/plugin_manager.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace sytest;

namespace {

const std::string kFakePlugin = std::string(SY_TEST_PLUGIN_DIR) + "/libswitchyard-fake_device.so";

// Nodes named dev.* run on the fake device; the rest on the example plugin (host).
std::string device_config(const std::string& extra = "") {
  return write_config("devices", "[plugins]\nload = [\"" + kFakePlugin +
                                     "\", \"example\"]\n"
                                     "[selection]\ndefault = [\"example\"]\n"
                                     "[[rules]]\nnode = \"dev.*\"\nbackends = [\"fake\"]\n" +
                                     extra);
}

// x -> dev.relu -> dev.mul(a, a) -> host.relu -> out
ir::Graph crossing_graph() {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("dev.relu", "aten::relu", {x}, {"a"});
  g.add_node("dev.mul", "aten::mul", {g.find_value("a"), g.find_value("a")}, {"b"});
  g.add_node("host.relu", "aten::relu", {g.find_value("b")}, {"out"});
  g.outputs = {g.find_value("out")};
  return g;
}

std::vector<float> expected(const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(v > 0 ? v * v : 0);
  return y;
}

}  // namespace

TEST(Devices, CopiesAreInsertedExactlyWhereValuesCross) {
  Runtime rt(Options{device_config()});
  auto model = load_graph(rt, crossing_graph());
  const std::vector<float> x = {-1, 2, -3, 4.5f, 0.5f};
  EXPECT_EQ(values(model->run({f32({5}, x)})[0]), expected(x));
  auto plan = model->plan({f32({5}, x)});
  EXPECT_EQ(plan[0].backend, "fake");
  EXPECT_EQ(plan[1].backend, "fake");
  EXPECT_EQ(plan[2].backend, "example");
  auto copies = model->storage_copies({f32({5}, x)});
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].value, "x");  // the host input, into device memory for dev.relu
  EXPECT_EQ(copies[0].from, "host");
  EXPECT_EQ(copies[0].to, "fake/fake");
  EXPECT_EQ(copies[0].reader, "dev.relu");
  EXPECT_EQ(copies[0].bytes, 5u * 4u);
  EXPECT_EQ(copies[1].value, "b");  // back to the host for host.relu; `a` never leaves the device
  EXPECT_EQ(copies[1].from, "fake/fake");
  EXPECT_EQ(copies[1].to, "host");
  EXPECT_EQ(copies[1].reader, "host.relu");
}

TEST(Devices, RepeatedRunsUseTheDeviceArenaAndInPlaceWrites) {
  Runtime rt(Options{device_config()});
  auto model = load_graph(rt, crossing_graph());
  const std::vector<float> x = {3, -1, 2, 7};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values(model->run({f32({4}, x)})[0]), expected(x)) << "run " << i;
  MemoryReport report = model->memory_plan({f32({4}, x)});
  bool device_arena = false, in_place = false;
  for (const MemoryValue& v : report.values) {
    device_arena |= v.placement == "arena (fake/fake)";
    // dev.relu writes over x's device copy, which nothing else reads
    in_place |= v.value == "a" && v.placement.rfind("view of x@fake/fake", 0) == 0;
  }
  EXPECT_TRUE(device_arena);
  EXPECT_TRUE(in_place);
}

TEST(Devices, NodeIoOfDeviceValuesIsCopiedBackToTheHost) {
  Runtime rt(Options{device_config("[runtime]\nnode_io = \"all\"\n")});
  auto model = load_graph(rt, crossing_graph());
  const std::vector<float> x = {-2, 3};
  model->run({f32({2}, x)});
  const auto& io = model->node_io();
  ASSERT_EQ(io.size(), 3u);
  for (const NodeIO& rec : io) {
    for (const Tensor& t : rec.inputs) EXPECT_EQ(t.device().device_type, kDLCPU) << rec.node;
    for (const Tensor& t : rec.outputs) EXPECT_EQ(t.device().device_type, kDLCPU) << rec.node;
  }
  EXPECT_EQ(io[0].node, "dev.relu");
  EXPECT_EQ(values(io[0].inputs[0]), x);
  EXPECT_EQ(values(io[0].outputs[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(values(io[1].outputs[0]), (std::vector<float>{0, 9}));
}

TEST(Devices, OutputsComeBackToTheHost) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32, {-1});
  g.add_node("dev.relu", "aten::relu", {x}, {"a"});
  g.add_node("dev.add", "aten::add", {g.find_value("a"), x}, {"out"});
  g.outputs = {g.find_value("a"), g.find_value("out")};
  Runtime rt(Options{device_config()});
  auto model = load_graph(rt, std::move(g));
  for (int i = 0; i < 2; ++i) {
    auto out = model->run({f32({3}, {-1, 0.5f, 2})});
    ASSERT_EQ(out.size(), 2u);
    for (const Tensor& t : out) EXPECT_EQ(t.device().device_type, kDLCPU);
    EXPECT_EQ(values(out[0]), (std::vector<float>{0, 0.5f, 2}));
    EXPECT_EQ(values(out[1]), (std::vector<float>{-1, 1, 4}));
  }
}

TEST(Devices, TheHostCannotTouchFakeDeviceMemory) {
  // The control: fake-device memory faults when the host reads it, so the runs above prove
  // that the host went through the plugin's conversions.
  loader::PluginManager plugins;
  plugins.load_file(kFakePlugin);
  exec::StorageTable storages(plugins);
  ASSERT_EQ(storages.size(), 1u);
  Tensor t = storages.allocate(0, kF32, {16});
  EXPECT_EQ(t.device().device_type, kDLExtDev);
  EXPECT_DEATH(
      {
        volatile float v = *static_cast<float*>(t.raw_data());
        (void)v;
      },
      "");
  Tensor back = storages.to_host(0, storages.from_host(0, f32({2}, {1.5f, -2}), "x"), "x");
  EXPECT_EQ(values(back), (std::vector<float>{1.5f, -2}));
}
