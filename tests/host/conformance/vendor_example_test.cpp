// The conformance kit as a vendor runs it from their own test suite: this file is the
// example in switchyard/conformance.hpp's header comment, built against the installed
// targets' public headers only (switchyard::conformance), run on the example plugin.
#include <gtest/gtest.h>
#include <switchyard/conformance.hpp>
using namespace switchyard::conformance;

TEST(MyPlugin, MatchesTheAtenReference) {
  CheckOptions options;
  options.plugin = MYPLUGIN_SO;  // e.g. "$<TARGET_FILE:myplugin>" from CMake
  const Report report = check_plugin(options);
  for (const KernelResult& k : report.kernels) EXPECT_NE(k.verdict, Verdict::Fail) << describe(k);
  EXPECT_GT(report.count(Verdict::Pass), 0u);
}
