// ABI negotiation: which plugin libraries the host loads and which it refuses, and what
// the refusal says. The test plugins (tests/sdk/plugins/*.c, built as C) live in
// SY_TEST_PLUGIN_DIR, away from the plugin folder the CLI searches.
#include "api/internal.hpp"
#include "ir/graph.hpp"
#include "loader/plugin_manager.hpp"

#include <switchyard/error.hpp>
#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

using switchyard::Error;
using switchyard::ErrorKind;
using switchyard::loader::check_version;
using switchyard::loader::PluginManager;

constexpr uint32_t kHostMajor = SY_SDK_VERSION_MAJOR;
constexpr uint32_t kHostMinor = SY_SDK_VERSION_MINOR;

std::string version(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

std::string plugin_file(const std::string& name) {
  return std::string(SY_TEST_PLUGIN_DIR) + "/libswitchyard-" + name + ".so";
}

// Loads `path` into `pm` and returns the message of the Error(ErrorKind::Plugin) it must
// throw; fails the test if it loads or throws anything else.
std::string refusal(PluginManager& pm, const std::string& path) {
  try {
    pm.load_file(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Plugin) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a switchyard::Error: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << path << " was loaded, but should have been refused";
  return "";
}

std::string refusal(const std::string& path) {
  PluginManager pm;
  return refusal(pm, path);
}

// ---- the rule itself --------------------------------------------------------------

TEST(CheckVersion, AcceptsSameVersion) {
  EXPECT_EQ(check_version(1, 0, 1, 0), "");
  EXPECT_EQ(check_version(1, 3, 1, 3), "");
}

TEST(CheckVersion, AcceptsOlderMinor) {
  EXPECT_EQ(check_version(1, 0, 1, 3), "");
  EXPECT_EQ(check_version(1, 2, 1, 3), "");
}

TEST(CheckVersion, RefusesNewerMinorNamingBothVersions) {
  std::string why = check_version(1, 4, 1, 3);
  EXPECT_NE(why.find("1.4"), std::string::npos) << why;
  EXPECT_NE(why.find("1.3"), std::string::npos) << why;
}

TEST(CheckVersion, RefusesOtherMajorNamingBothVersions) {
  for (auto [major, minor] : {std::pair{2u, 0u}, std::pair{0u, 9u}, std::pair{2u, 5u}}) {
    std::string why = check_version(major, minor, 1, 3);
    EXPECT_NE(why.find(version(major, minor)), std::string::npos) << why;
    EXPECT_NE(why.find("1.3"), std::string::npos) << why;
  }
}

// ---- real libraries ---------------------------------------------------------------

TEST(PluginAbi, LoadsPluginOfTheHostsVersion) {
  PluginManager pm;
  auto plugin = pm.load_file(plugin_file("same_version"));
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "same_version");
  EXPECT_EQ(plugin->vendor(), "switchyard tests");
  EXPECT_EQ(plugin->version(), "0.0.1");
  EXPECT_EQ(plugin->sdk_major(), kHostMajor);
  EXPECT_EQ(plugin->sdk_minor(), kHostMinor);
  ASSERT_EQ(plugin->table().num_kernels, 1u);
  EXPECT_STREQ(plugin->table().kernels[0]->op, "test::copy");
  ASSERT_EQ(pm.kernels_for("test::copy").size(), 1u);
  EXPECT_EQ(pm.find("same_version"), plugin);
  // SDK 1.3: its attributes are read at load, past an extension chain of unknown types.
  const std::vector<std::pair<std::string, std::string>> want{{"build", "C11 test plugin"}, {"library", "none 0.0"}};
  EXPECT_EQ(plugin->attributes(), want);
}

TEST(PluginAbi, LoadsPluginOfAnOlderMinor) {
  // A host one minor ahead (as the next SDK release will be) loads today's plugin.
  PluginManager pm(kHostMajor, kHostMinor + 1);
  auto plugin = pm.load_file(plugin_file("same_version"));
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->sdk_minor(), kHostMinor);
  EXPECT_EQ(plugin->host_api().version_minor, kHostMinor + 1);  // the plugin saw the host's version
  ASSERT_EQ(pm.kernels_for("test::copy").size(), 1u);
#ifdef SY_TEST_HAVE_OLDER_MINOR
  PluginManager today;
  EXPECT_EQ(today.load_file(plugin_file("older_minor"))->sdk_minor(), kHostMinor - 1);
#endif
}

TEST(PluginAbi, RefusesNewerMinor) {
  std::string path = plugin_file("newer_minor");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor, kHostMinor + 1)), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor, kHostMinor)), std::string::npos) << why;
  EXPECT_NE(why.find("(built with: build C11 test plugin; library none 0.0)"), std::string::npos) << why;
}

TEST(PluginAbi, RefusesAnExtensionChainThatLoops) {
  std::string path = plugin_file("extension_cycle");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("extension chain longer than 256 links (a cycle?)"), std::string::npos) << why;
  EXPECT_NE(why.find("(built with: build C11 test plugin"), std::string::npos) << why;
}

// SY_EXTENSION_STORAGE_ELEMENTS must give one element per declared storage.
TEST(PluginAbi, RefusesStorageElementsForStoragesItLacks) {
  std::string path = plugin_file("bad_storage_elements");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("its storage elements extension lists 1 storage(s), but it declares 0"), std::string::npos) << why;
}

TEST(PluginAbi, RefusesNewerMajor) {
  std::string path = plugin_file("newer_major");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor + 1, 0)), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor, kHostMinor)), std::string::npos) << why;
}

TEST(PluginAbi, RefusesOlderMajor) {
  std::string path = plugin_file("older_major");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor - 1, 9)), std::string::npos) << why;
  EXPECT_NE(why.find(version(kHostMajor, kHostMinor)), std::string::npos) << why;
}

TEST(PluginAbi, RefusesLibraryWithoutEntrySymbol) {
  std::string path = plugin_file("no_entry");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find(SY_PLUGIN_ENTRY_SYMBOL), std::string::npos) << why;
}

TEST(PluginAbi, RefusesFileThatIsNotASharedLibrary) {
  std::string path = ::testing::TempDir() + "libswitchyard-bogus.so";
  std::ofstream(path) << "this is a text file, not a shared library\n";
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
}

TEST(PluginAbi, RefusesMissingFile) {
  std::string path = plugin_file("does_not_exist");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
}

TEST(PluginAbi, RefusesPluginWhoseInitFailsWithItsMessage) {
  std::string path = plugin_file("init_fail");
  std::string why = refusal(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("init_fail: no device found"), std::string::npos) << why;
}

TEST(PluginAbi, RefusesDuplicatePluginName) {
  PluginManager pm;
  pm.load_file(plugin_file("dup_a"));       // reports the name "dup"
  std::string path = plugin_file("dup_b");  // also "dup"
  std::string why = refusal(pm, path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("dup"), std::string::npos) << why;
  EXPECT_EQ(pm.plugins().size(), 1u);
  EXPECT_EQ(pm.find("dup")->path(), plugin_file("dup_a"));
}

// Two managers (two Runtimes) that load one library share its code and globals, and a
// plugin keeps the host table of its latest init in a global (sdk/plugin.hpp), used by its
// tensor deleters: both loads get one table, alive until the last load is gone.
TEST(PluginAbi, LoadsOfOneLibraryShareOneHostTable) {
  PluginManager first;
  auto a = first.load_file(plugin_file("same_version"));
  {
    PluginManager second;
    auto b = second.load_file(plugin_file("same_version"));
    EXPECT_EQ(&a->host_api(), &b->host_api());
  }
  PluginManager newer(kHostMajor, kHostMinor + 1);  // a table states the host's version
  auto c = newer.load_file(plugin_file("same_version"));
  EXPECT_NE(&a->host_api(), &c->host_api());
  EXPECT_EQ(c->host_api().version_minor, kHostMinor + 1);
  EXPECT_EQ(a->host_api().version_minor, kHostMinor);
}

TEST(PluginAbi, RefusalLeavesManagerUsable) {
  PluginManager pm;
  refusal(pm, plugin_file("newer_minor"));
  refusal(pm, plugin_file("init_fail"));
  EXPECT_TRUE(pm.plugins().empty());
  EXPECT_NE(pm.load_file(plugin_file("same_version")), nullptr);
  EXPECT_EQ(pm.plugins().size(), 1u);
}

// ---- a plugin of every earlier minor runs on this host ------------------------------

// The "abi_1_<m>" plugins are built from the header of minor m kept in
// tests/sdk/fixtures/sdk_1_<m>: their tables end where that minor's did. 1.0's knows
// nothing of storages, threads or cost; 1.1's has a cost and an in-place output; 1.2's
// also answers output_inplace_tail.
class EarlierMinor : public testing::TestWithParam<uint32_t> {};

TEST_P(EarlierMinor, LoadsAndRunsItsKernel) {
  const uint32_t minor = GetParam();
  const std::string name = "abi_" + std::to_string(kHostMajor) + "_" + std::to_string(minor);
  const std::string config = (std::filesystem::path(testing::TempDir()) / (name + ".toml")).string();
  std::ofstream(config) << "[plugins]\nload = [\"" << plugin_file(name) << "\"]\n";
  switchyard::Runtime rt(switchyard::Options{config});
  ASSERT_EQ(rt.plugins().size(), 1u);
  EXPECT_EQ(rt.plugins()[0].name, name);
  EXPECT_EQ(rt.plugins()[0].sdk_minor, minor);
  EXPECT_TRUE(rt.plugins()[0].attributes.empty());  // attributes came with 1.3
  switchyard::ir::Graph g;
  const DLDataType f32{kDLFloat, 32, 1};
  auto x = g.add_input("x", f32, {-1});
  g.add_node("first", "test::copy", {x}, {"a"});
  g.add_node("second", "test::copy", {g.find_value("a")}, {"b"});
  g.outputs = {g.find_value("b")};
  auto model = load_graph(rt, std::move(g));
  for (int64_t n : {3, 5, 3}) {  // two signatures, one of them twice (the arena path)
    switchyard::Tensor in = switchyard::Tensor::empty(f32, {n});
    for (int64_t i = 0; i < n; ++i) in.data<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
    auto out = model->run({in});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].numel(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[0].data<float>()[i], in.data<float>()[i]);
    // 1.0's kernel table ends before `cost`: the host never reads it, and reports none.
    for (const auto& e : model->plan({in})) EXPECT_EQ(e.has_kernel_cost, minor >= 1) << e.node;
  }
}

INSTANTIATE_TEST_SUITE_P(PluginAbi, EarlierMinor, testing::Range(uint32_t{0}, kHostMinor),
                         [](const testing::TestParamInfo<uint32_t>& info) {
                           return "Sdk" + std::to_string(kHostMajor) + "_" + std::to_string(info.param);
                         });

// No struct has tail padding, so structs that plugins of earlier minors sized with sizeof()
// read the same as SY_<Struct>_STRUCT_SIZE (sdk/CHANGELOG.md, 1.3).
TEST(PluginAbi, StructSizeIsSizeofForEveryStruct) {
#define SY_EXPECT_NO_TAIL(T) EXPECT_EQ(T##_STRUCT_SIZE, sizeof(T)) << #T
  SY_EXPECT_NO_TAIL(SY_HostApi);
  SY_EXPECT_NO_TAIL(SY_StorageSizeArgs);
  SY_EXPECT_NO_TAIL(SY_StorageAllocArgs);
  SY_EXPECT_NO_TAIL(SY_StorageCopyArgs);
  SY_EXPECT_NO_TAIL(SY_StorageDef);
  SY_EXPECT_NO_TAIL(SY_TensorDesc);
  SY_EXPECT_NO_TAIL(SY_SupportsArgs);
  SY_EXPECT_NO_TAIL(SY_KernelCreateArgs);
  SY_EXPECT_NO_TAIL(SY_KernelInferArgs);
  SY_EXPECT_NO_TAIL(SY_KernelRunArgs);
  SY_EXPECT_NO_TAIL(SY_KernelStorageArgs);
  SY_EXPECT_NO_TAIL(SY_KernelCostArgs);
  SY_EXPECT_NO_TAIL(SY_KernelDef);
  SY_EXPECT_NO_TAIL(SY_NamedValue);
  SY_EXPECT_NO_TAIL(SY_PluginAttributesArgs);
  SY_EXPECT_NO_TAIL(SY_Plugin);
  SY_EXPECT_NO_TAIL(SY_PluginInitArgs);
  SY_EXPECT_NO_TAIL(SY_Extension);
#undef SY_EXPECT_NO_TAIL
}

}  // namespace
