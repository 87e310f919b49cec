// Backend selection against a fake catalog: rule matching, first-rule-wins, fallback
// with recorded rejections, dtype checks, strict mode and the default lists.
#include "select/selector.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sel = switchyard::select;
namespace cfgns = switchyard::config;
using switchyard::ir::Node;

namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kF16{kDLFloat, 16, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

const DLDataType kFloatOnly[] = {kF32};
const DLDataType kHalfAndFloat[] = {kF16, kF32};

SY_KernelDef make_def(const char* op, const char* family, const DLDataType* dtypes, size_t n) {
  SY_KernelDef def{};
  def.struct_size = SY_KernelDef_STRUCT_SIZE;
  def.op = op;
  def.family = family;
  def.device_type = kDLCPU;
  def.dtypes = dtypes;
  def.num_dtypes = n;
  return def;
}

// Static kernel definitions, as a plugin would hold them.
const SY_KernelDef kExampleLinear = make_def("aten::linear", "linalg", kFloatOnly, 1);
const SY_KernelDef kLinalgLinear = make_def("aten::linear", "linalg", kFloatOnly, 1);
const SY_KernelDef kAtenLinear = make_def("aten::linear", "linalg", nullptr, 0);  // any dtype
const SY_KernelDef kAtenConv = make_def("aten::conv2d", "conv", kHalfAndFloat, 2);
const SY_KernelDef kConvConv = make_def("aten::conv2d", "conv", kFloatOnly, 1);

// A catalog over a fixed kernel list; `refusals` maps a backend to the reason it gives.
struct FakeCatalog {
  std::vector<sel::Candidate> kernels;
  std::map<std::string, std::string> refusals;
  std::vector<std::string> asked;  // backends whose `ask` ran, in order
  int families_calls = 0;

  sel::Catalog catalog() {
    sel::Catalog c;
    c.kernels_for = [this](const std::string& op) {
      std::vector<sel::Candidate> out;
      for (const auto& k : kernels)
        if (op == k.def->op) out.push_back(k);
      return out;
    };
    c.families_for = [this](const std::string& op) {
      ++families_calls;
      std::vector<std::string> out;
      for (const auto& k : kernels)
        if (op == k.def->op) out.push_back(k.def->family);
      return out;
    };
    c.ask = [this](const sel::Candidate& cand, const Node&, const std::vector<const DLTensor*>&) {
      asked.push_back(cand.backend);
      auto it = refusals.find(cand.backend);
      return it == refusals.end() ? std::string() : it->second;
    };
    return c;
  }
};

FakeCatalog standard_catalog() {
  FakeCatalog fake;
  fake.kernels = {{"example", &kExampleLinear, nullptr},
                  {"linalg", &kLinalgLinear, nullptr},
                  {"aten", &kAtenLinear, nullptr},
                  {"aten", &kAtenConv, nullptr},
                  {"conv", &kConvConv, nullptr}};
  return fake;
}

Node make_node(std::string name, std::string op, std::string module_path = {}) {
  Node node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.module_path = std::move(module_path);
  return node;
}

DLTensor meta(DLDataType dtype) {
  DLTensor t{};
  t.dtype = dtype;
  t.device = {kDLCPU, 0};
  return t;
}

cfgns::Rule rule(std::string op, std::string node, std::string module, std::string family,
                 std::vector<std::string> backends, int line = 0) {
  cfgns::Rule r;
  r.op = std::move(op);
  r.node = std::move(node);
  r.module = std::move(module);
  r.family = std::move(family);
  r.backends = std::move(backends);
  r.pos = {"configs/x.toml", line, 1};
  return r;
}

}  // namespace

// ---- match_rule ------------------------------------------------------------------------

TEST(MatchRule, ByOp) {
  cfgns::Config cfg;
  cfg.rules = {rule("aten::conv2d", "", "", "", {"conv"}), rule("aten::linear", "", "", "", {"linalg"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("fc", "aten::linear"), {}), 1);
  EXPECT_EQ(sel::match_rule(cfg, make_node("fc", "aten::relu"), {}), -1);
}

TEST(MatchRule, ByNodeGlob) {
  cfgns::Config cfg;
  cfg.rules = {rule("", "encoder.*", "", "", {"linalg"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("encoder.layers.0.fc1", "aten::linear"), {}), 0);
  EXPECT_EQ(sel::match_rule(cfg, make_node("decoder.fc1", "aten::linear"), {}), -1);
}

TEST(MatchRule, ByModuleGlob) {
  cfgns::Config cfg;
  cfg.rules = {rule("", "", "layer1.*", "", {"conv"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("conv_3", "aten::conv2d", "layer1.0"), {}), 0);
  EXPECT_EQ(sel::match_rule(cfg, make_node("conv_9", "aten::conv2d", "layer2.0"), {}), -1);
  EXPECT_EQ(sel::match_rule(cfg, make_node("conv_1", "aten::conv2d", ""), {}), -1);
}

TEST(MatchRule, ByFamily) {
  cfgns::Config cfg;
  cfg.rules = {rule("", "", "", "conv", {"conv"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("c", "aten::conv2d"), {"conv"}), 0);
  EXPECT_EQ(sel::match_rule(cfg, make_node("c", "aten::conv2d"), {"linalg"}), -1);
  EXPECT_EQ(sel::match_rule(cfg, make_node("c", "aten::conv2d"), {}), -1);
}

TEST(MatchRule, AllGivenMatchersMustMatch) {
  cfgns::Config cfg;
  cfg.rules = {rule("aten::linear", "encoder.*", "", "", {"linalg"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("encoder.fc", "aten::linear"), {}), 0);
  EXPECT_EQ(sel::match_rule(cfg, make_node("encoder.act", "aten::gelu"), {}), -1);
  EXPECT_EQ(sel::match_rule(cfg, make_node("head.fc", "aten::linear"), {}), -1);
}

TEST(MatchRule, FirstRuleWins) {
  cfgns::Config cfg;
  cfg.rules = {rule("", "encoder.*", "", "", {"aten"}), rule("aten::linear", "", "", "", {"linalg"})};
  EXPECT_EQ(sel::match_rule(cfg, make_node("encoder.fc", "aten::linear"), {}), 0);
  EXPECT_EQ(sel::match_rule(cfg, make_node("head.fc", "aten::linear"), {}), 1);
}

// ---- select_kernel ---------------------------------------------------------------------

TEST(SelectKernel, RuleChoosesBackendAndSaysWhy) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"example", "aten"};
  cfg.rules = {rule("aten::conv2d", "", "", "", {"conv"}, 4), rule("aten::linear", "", "", "", {"linalg", "aten"}, 12)};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "linalg");
  EXPECT_EQ(s.winner->def, &kLinalgLinear);
  EXPECT_EQ(s.rule_index, 1);
  EXPECT_EQ(s.reason, "rule #2 (configs/x.toml:12:1) → linalg");
  EXPECT_TRUE(s.rejected.empty());
}

TEST(SelectKernel, DefaultListWhenNoRuleMatches) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"aten", "example"};
  cfg.rules = {rule("aten::conv2d", "", "", "", {"conv"})};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "aten");
  EXPECT_EQ(s.rule_index, -1);
  EXPECT_EQ(s.reason, "default list → aten");
}

TEST(SelectKernel, EmptyDefaultListUsesCatalogOrder) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "example");
  EXPECT_EQ(s.reason, "any plugin in load order → example");

  fake.refusals["example"] = "no";
  fake.refusals["linalg"] = "no";
  s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "aten");
  ASSERT_EQ(s.rejected.size(), 2u);  // conv never offered linear, so it is never asked
}

TEST(SelectKernel, FallsBackAndRecordsRejectionsInOrder) {
  FakeCatalog fake = standard_catalog();
  fake.refusals["linalg"] = "transposed weight not supported";
  cfgns::Config cfg;
  cfg.rules = {rule("aten::linear", "", "", "", {"conv", "linalg", "aten"})};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "aten");
  ASSERT_EQ(s.rejected.size(), 2u);
  EXPECT_EQ(s.rejected[0].backend, "conv");
  EXPECT_EQ(s.rejected[0].reason, "no kernel for aten::linear");
  EXPECT_EQ(s.rejected[1].backend, "linalg");
  EXPECT_EQ(s.rejected[1].reason, "transposed weight not supported");
  EXPECT_EQ(fake.asked, (std::vector<std::string>{"linalg", "aten"}));
}

TEST(SelectKernel, DtypeRejectionWithoutAsking) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"example", "aten"};
  DLTensor x = meta(kF32);
  DLTensor w = meta(kI64);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x, &w, nullptr});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "aten");  // an empty dtype list takes anything
  ASSERT_EQ(s.rejected.size(), 1u);
  EXPECT_EQ(s.rejected[0].backend, "example");
  EXPECT_EQ(s.rejected[0].reason, "dtype int64 of input 1 not supported (kernel takes float32)");
  EXPECT_EQ(fake.asked, std::vector<std::string>{"aten"});
}

TEST(SelectKernel, DtypeListNamesEveryAcceptedDtype) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"aten"};
  DLTensor x = meta(kI64);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("c", "aten::conv2d"), {&x});
  EXPECT_FALSE(s.winner.has_value());
  ASSERT_EQ(s.rejected.size(), 1u);
  EXPECT_EQ(s.rejected[0].reason, "dtype int64 of input 0 not supported (kernel takes float16, float32)");
}

TEST(SelectKernel, NullInputsAreSkipped) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"example"};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x, nullptr});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "example");
}

TEST(SelectKernel, StrictStopsAtFirstRejection) {
  FakeCatalog fake = standard_catalog();
  fake.refusals["linalg"] = "bias must be 1-D";
  cfgns::Config cfg;
  cfg.strict = true;
  cfg.rules = {rule("aten::linear", "", "", "", {"linalg", "aten"})};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  EXPECT_FALSE(s.winner.has_value());
  EXPECT_EQ(s.rule_index, 0);
  ASSERT_EQ(s.rejected.size(), 1u);
  EXPECT_EQ(s.rejected[0].backend, "linalg");
  EXPECT_EQ(s.rejected[0].reason, "bias must be 1-D");
  EXPECT_EQ(fake.asked, std::vector<std::string>{"linalg"});

  // Strict also stops at a backend that lacks the op.
  cfg.rules = {rule("aten::linear", "", "", "", {"conv", "aten"})};
  s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  EXPECT_FALSE(s.winner.has_value());
  ASSERT_EQ(s.rejected.size(), 1u);
  EXPECT_EQ(s.rejected[0].reason, "no kernel for aten::linear");
}

// A backend may offer two kernels for one op (the shape plugin's copy and view kernels):
// it rejects the node only when both decline, and a refusal by the first is no verdict.
TEST(SelectKernel, ABackendRejectsOnlyWhenAllItsKernelsDecline) {
  static const SY_KernelDef kCopyKernel = make_def("aten::linear", "linalg", kFloatOnly, 1);
  static const SY_KernelDef kViewKernel = make_def("aten::linear", "linalg", kFloatOnly, 1);
  std::map<const SY_KernelDef*, std::string> refusals = {{&kCopyKernel, "a view; the view kernel takes it"}};
  sel::Catalog catalog;
  catalog.kernels_for = [](const std::string&) {
    return std::vector<sel::Candidate>{
        {"linalg", &kCopyKernel, nullptr}, {"linalg", &kViewKernel, nullptr}, {"aten", &kAtenLinear, nullptr}};
  };
  std::vector<std::string> asked;
  catalog.ask = [&](const sel::Candidate& cand, const Node&, const std::vector<const DLTensor*>&) {
    asked.push_back(cand.backend);
    auto it = refusals.find(cand.def);
    return it == refusals.end() ? std::string() : it->second;
  };
  cfgns::Config cfg;
  cfg.strict = true;
  cfg.rules = {rule("aten::linear", "", "", "", {"linalg", "aten"})};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, catalog, make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->def, &kViewKernel);
  EXPECT_TRUE(s.rejected.empty()) << s.rejected[0].reason;

  // Both decline: strict stops after the backend's last kernel, with both reasons.
  refusals[&kViewKernel] = "input must be 2-D";
  asked.clear();
  s = sel::select_kernel(cfg, catalog, make_node("fc", "aten::linear"), {&x});
  EXPECT_FALSE(s.winner.has_value());
  ASSERT_EQ(s.rejected.size(), 2u);
  EXPECT_EQ(s.rejected[1].reason, "input must be 2-D");
  EXPECT_EQ(asked, (std::vector<std::string>{"linalg", "linalg"}));

  // Not strict: the next backend takes it, and the refusals stay on record.
  cfg.strict = false;
  s = sel::select_kernel(cfg, catalog, make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "aten");
  EXPECT_EQ(s.rejected.size(), 2u);
}

TEST(SelectKernel, StrictAcceptsWhenFirstBackendSaysYes) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.strict = true;
  cfg.default_backends = {"example", "aten"};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("fc", "aten::linear"), {&x});
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "example");
}

TEST(SelectKernel, NoBackendAccepts) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"example", "aten"};
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("r", "aten::relu"), {});
  EXPECT_FALSE(s.winner.has_value());
  ASSERT_EQ(s.rejected.size(), 2u);
  EXPECT_EQ(s.rejected[1].backend, "aten");
  EXPECT_EQ(s.rejected[1].reason, "no kernel for aten::relu");
}

TEST(SelectKernel, FamilyRuleRoutesAndFamiliesAskedOnlyWhenNeeded) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"aten"};
  DLTensor x = meta(kF32);
  auto s = sel::select_kernel(cfg, fake.catalog(), make_node("c", "aten::conv2d"), {&x});
  EXPECT_EQ(fake.families_calls, 0);
  EXPECT_EQ(s.winner->backend, "aten");

  cfg.rules = {rule("", "", "", "conv", {"conv", "aten"})};
  s = sel::select_kernel(cfg, fake.catalog(), make_node("c", "aten::conv2d"), {&x});
  EXPECT_EQ(fake.families_calls, 1);
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->backend, "conv");
  EXPECT_EQ(s.rule_index, 0);
}

// ---- routing_offers ---------------------------------------------------------------------

TEST(RoutingOffers, AsksTheNodesOwnRoutingNotEveryPlugin) {
  FakeCatalog fake = standard_catalog();
  cfgns::Config cfg;
  cfg.default_backends = {"linalg", "aten"};
  cfg.rules = {rule("", "head.*", "", "", {"conv"})};
  EXPECT_TRUE(sel::routing_offers(cfg, fake.catalog(), make_node("fc", "aten::linear")));
  EXPECT_FALSE(sel::routing_offers(cfg, fake.catalog(), make_node("head.fc", "aten::linear")))
      << "its rule names only conv, which has no linear";
  cfg.default_backends = {"conv"};
  EXPECT_FALSE(sel::routing_offers(cfg, fake.catalog(), make_node("fc", "aten::linear")));
  cfg.default_backends.clear();  // any plugin in load order
  EXPECT_TRUE(sel::routing_offers(cfg, fake.catalog(), make_node("fc", "aten::linear")));
  EXPECT_FALSE(sel::routing_offers(cfg, fake.catalog(), make_node("fc", "switchyard::rms_norm")));
}
