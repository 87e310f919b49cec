// `switchyard check-plugin LIB.so`: the conformance kit (libswitchyard-conformance) on one
// plugin, printed as a table of PASS/FAIL/SKIP per kernel and dtype.
#include "check_plugin.hpp"

#include <switchyard/conformance.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace switchyard::cli {

namespace {

std::string format_err(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", e);
  return buf;
}

}  // namespace

int cmd_check_plugin(const CommonFlags& common, const CheckPluginFlags& flags) {
  using namespace conformance;
  CheckOptions options;
  options.plugin = flags.plugin;
  options.reference = flags.reference;
  options.op = flags.op;
  options.runtime = to_options(common);
  if (flags.verbose) options.on_case = [](const std::string& line) { std::printf("    %s\n", line.c_str()); };
  const PluginCheck check(options);
  const PluginInfo& plugin = check.plugin();
  std::printf("check-plugin: %s %s (%s), %zu kernels, against '%s'\n", plugin.name.c_str(), plugin.version.c_str(),
              plugin.path.c_str(), plugin.kernels.size(), flags.reference.c_str());
  const Report report = check.run();
  std::vector<std::vector<std::string>> rows = {
      {"result", "op", "dtype", "cases", "max_err", "also in storages", "in place", "detail"}};
  for (const KernelResult& r : report.kernels) {
    const char* verdict = r.verdict == Verdict::Pass ? "PASS" : r.verdict == Verdict::Fail ? "FAIL" : "SKIP";
    std::string stored;  // e.g. "nChw16c 12, nhwc 8": cases rerun with values in the plugin's storages
    for (const auto& [storage, count] : r.storage_cases)
      stored += (stored.empty() ? "" : ", ") + storage.substr(storage.find('/') + 1) + " " + std::to_string(count);
    rows.push_back({verdict, r.op, r.dtype, std::to_string(r.passed) + "/" + std::to_string(r.passed + r.rejected),
                    r.passed > 0 ? format_err(r.max_err) : "-", stored.empty() ? "-" : stored,
                    r.in_place_cases > 0 ? std::to_string(r.in_place_cases) : "-", r.detail});
  }
  print_table(rows);
  const size_t skipped = report.count(Verdict::Skip);
  std::printf("check-plugin: %zu passed, %zu failed, %zu skipped (no case ran)\n", report.count(Verdict::Pass),
              report.count(Verdict::Fail), skipped);
  if (flags.require_all && skipped > 0) {
    std::fprintf(stderr, "error: check-plugin --require-all: %zu kernel/dtype pairs ran no case\n", skipped);
    return 1;
  }
  return report.count(Verdict::Fail) > 0 ? 1 : 0;
}

}  // namespace switchyard::cli
