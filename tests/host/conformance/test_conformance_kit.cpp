// The conformance kit as a library: it fails a plugin with subtle bugs naming the kernel
// and the case, passes a correct one, takes a vendor's own cases, reports each case, and
// refuses a missing plugin or reference with an error naming it.
#include <switchyard/conformance.hpp>

#include <gtest/gtest.h>

#include <algorithm>

using namespace switchyard;
using namespace switchyard::conformance;

namespace {

const KernelResult* result_for(const Report& report, const std::string& op) {
  for (const KernelResult& k : report.kernels)
    if (k.op == op) return &k;
  return nullptr;
}

TEST(ConformanceKit, FailsSubtleBugsNamingTheKernelAndTheCase) {
  CheckOptions options;
  options.plugin = SUBTLY_WRONG_SO;
  const Report report = check_plugin(options);
  EXPECT_EQ(report.plugin.name, "subtly_wrong");
  EXPECT_EQ(report.reference, "aten");
  ASSERT_EQ(report.kernels.size(), 5u);
  const KernelResult* relu = result_for(report, "aten::relu");
  const KernelResult* sigmoid = result_for(report, "aten::sigmoid");
  const KernelResult* tanh = result_for(report, "aten::tanh");
  const KernelResult* neg = result_for(report, "aten::neg");
  const KernelResult* exp = result_for(report, "aten::exp");
  ASSERT_TRUE(relu && sigmoid && tanh && neg && exp);
  EXPECT_EQ(report.plugin.storages, (std::vector<std::string>{"subtly_wrong/reversed"}));
  EXPECT_EQ(relu->verdict, Verdict::Fail);
  EXPECT_NE(relu->detail.find("output 0: element"), std::string::npos) << relu->detail;
  EXPECT_EQ(sigmoid->verdict, Verdict::Fail);
  EXPECT_EQ(sigmoid->detail.rfind("case 'transposed", 0), 0u) << sigmoid->detail;
  EXPECT_EQ(tanh->verdict, Verdict::Pass) << describe(*tanh);
  EXPECT_GT(tanh->passed, 0u);
  EXPECT_TRUE(tanh->storage_cases.empty()) << "tanh reads and writes host memory only";
  // neg is right on host memory; to_host of its storage is not, and only a run with the
  // value kept there shows it.
  EXPECT_EQ(neg->verdict, Verdict::Fail);
  EXPECT_NE(neg->detail.find("in storage subtly_wrong/reversed: output 0: element"), std::string::npos) << neg->detail;
  EXPECT_EQ(tanh->in_place_cases, 0u) << "tanh declares no in-place output";
  // exp is right on graph inputs; only inputs the host owns and that die at the kernel,
  // so that the host grants the in-place output exp declares, show its bug.
  EXPECT_EQ(exp->verdict, Verdict::Fail);
  EXPECT_NE(exp->detail.find("in place: output 0: element"), std::string::npos) << exp->detail;
  EXPECT_EQ(report.count(Verdict::Pass), 1u);
  EXPECT_EQ(report.count(Verdict::Fail), 4u);
  EXPECT_EQ(describe(*sigmoid).rfind("FAIL aten::sigmoid float32: case 'transposed", 0), 0u) << describe(*sigmoid);
}

TEST(ConformanceKit, RunsAVendorsOwnCasesAndReportsEachOne) {
  CaseTable table;
  table.add("aten::relu", [](DLDataType dtype) {
    Tensor x = Tensor::empty(dtype, {4});
    const float values[] = {-2.0f, -0.0f, 0.5f, 3.0f};
    std::copy(values, values + 4, x.data<float>());
    Case c;
    c.label = "signs";
    c.inputs = {x};
    return std::vector<Case>{c};
  });
  CheckOptions options;
  options.plugin = EXAMPLE_SO;
  options.op = "aten::relu";
  std::vector<std::string> lines;
  options.on_case = [&](const std::string& line) { lines.push_back(line); };
  const PluginCheck check(options, table);
  EXPECT_EQ(check.plugin().name, "example");
  const Report report = check.run();
  ASSERT_EQ(report.kernels.size(), 1u) << "options.op keeps only aten::relu's kernel";
  EXPECT_EQ(report.kernels[0].verdict, Verdict::Pass) << describe(report.kernels[0]);
  EXPECT_EQ(report.kernels[0].passed, 1u);
  EXPECT_EQ(lines, (std::vector<std::string>{"case 'signs': ok"}));

  const KernelInfo add = [&] {
    for (const KernelInfo& k : check.plugin().kernels)
      if (k.op == "aten::add") return k;
    return KernelInfo{};
  }();
  const KernelResult none = check.check(add, "float32");
  EXPECT_EQ(none.verdict, Verdict::Skip);
  EXPECT_EQ(none.detail, "no generated cases for this op");
}

TEST(ConformanceKit, RefusesAMissingPluginOrReference) {
  CheckOptions missing;
  missing.plugin = "/nonexistent/libx.so";
  try {
    check_plugin(missing);
    ADD_FAILURE() << "no error for a missing plugin file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Plugin);
    EXPECT_NE(std::string(e.what()).find("no such file: /nonexistent/libx.so"), std::string::npos) << e.what();
  }
  CheckOptions no_reference;
  no_reference.plugin = EXAMPLE_SO;
  no_reference.reference = "ghost";
  EXPECT_THROW(PluginCheck{no_reference}, Error);
}

}  // namespace
