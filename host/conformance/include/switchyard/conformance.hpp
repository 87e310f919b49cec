// switchyard's conformance kit (libswitchyard-conformance): runs every kernel a plugin
// exports on generated single-node graphs, at every dtype it declares, and compares each
// output with a reference plugin's (aten by default). It needs only the plugin's binary.
// `switchyard check-plugin LIB.so` is its command; vendors can run it from their own tests:
//
//   #include <switchyard/conformance.hpp>
//   #include <gtest/gtest.h>
//   using namespace switchyard::conformance;
//
//   TEST(MyPlugin, MatchesTheAtenReference) {
//     CheckOptions options;
//     options.plugin = MYPLUGIN_SO;  // e.g. "$<TARGET_FILE:myplugin>" from CMake
//     const Report report = check_plugin(options);
//     for (const KernelResult& k : report.kernels) EXPECT_NE(k.verdict, Verdict::Fail) << describe(k);
//     EXPECT_GT(report.count(Verdict::Pass), 0u);
//   }
//
// (link switchyard::conformance; the reference plugin must be on the plugin path, e.g.
// $SWITCHYARD_PLUGIN_PATH). Cases come from one generator per op (all_cases(), from the
// kit's cases_<family>.cpp files); CaseTable::add() adds a vendor's own. Each case also
// runs in each storage the plugin declares, and with its run-time inputs made by a
// `check::feed` node (lib/switchyard-check/, found beside this library), where the host
// may grant the in-place outputs a kernel declares.
#pragma once

#include <switchyard/graph.hpp>
#include <switchyard/runtime.hpp>
#include <switchyard/tensor.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::conformance {

// ---- cases -----------------------------------------------------------------------

// One single-node graph: the node's inputs and attributes at one dtype.
struct Case {
  std::string label;                          // what is special, e.g. "transposed B"
  std::vector<std::optional<Tensor>> inputs;  // nullopt: an absent optional input
  std::vector<bool> constant;                 // (optional) input i is a graph constant
  Attributes attrs;
  size_t num_outputs = 1;
  // Fused ops "A+B" / "A+B+C" only: how many of `inputs` are A's (the rest follow B's
  // first input, or C's, below; the other reads its producer's output alone). 0 = all of
  // them. Attributes named "post.X" are B's attribute X, "post2.X" C's.
  size_t producer_inputs = 0;
  // Which part takes the inputs after A's: 1 (B, the default) or 2 (C; B is then unary),
  // e.g. "aten::linear+aten::gelu+aten::linear", whose C has its own weight and bias.
  size_t rest_inputs_to = 1;
  // An output passes when |got - ref| <= atol + rtol * |ref| for every element
  // (integer and bool outputs: exactly equal).
  double atol = 1e-5, rtol = 1e-4;
};

// Cases for one op at one dtype; empty when the op has no case at that dtype.
using CaseGenerator = std::function<std::vector<Case>(DLDataType dtype)>;

class CaseTable {
 public:
  void add(const std::string& op, CaseGenerator generator) { generators_[op] = std::move(generator); }
  const CaseGenerator* find(const std::string& op) const {
    auto it = generators_.find(op);
    return it == generators_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> ops() const {
    std::vector<std::string> names;
    for (const auto& [op, g] : generators_) names.push_back(op);
    return names;
  }

 private:
  std::map<std::string, CaseGenerator> generators_;
};

// Every generator the kit has (element-wise, linalg, conv, attention and shape ops).
CaseTable all_cases();

// ---- checking a plugin -------------------------------------------------------------

struct CheckOptions {
  std::string plugin;              // the plugin's shared library (.so)
  std::string reference = "aten";  // the plugin whose results count as right (name or .so)
  std::string op;                  // check only this op's kernels ("" = all)
  // Plugin paths, log level, strict, check_finite: as for any Runtime. The kit writes its
  // own config (one plugin each side), so `runtime.config_path` is not used.
  Options runtime;
  // Called with a line per case ("case 'x': ok" / "rejected"); none by default.
  std::function<void(const std::string& line)> on_case;
};

enum class Verdict { Pass, Fail, Skip };  // Skip: no case ran (none exists, or all rejected)

struct KernelResult {
  std::string op, dtype;
  Verdict verdict = Verdict::Skip;
  size_t passed = 0, rejected = 0;  // cases that matched the reference / that supports() refused
  double max_err = 0.0;             // largest |got - ref| over the cases that ran
  // Per storage the plugin declares ("conv/nChw16c"): passed cases that ran again with
  // values kept there, converted in and out by the plugin ([runtime] prefer_storage).
  std::map<std::string, size_t> storage_cases;
  // Passed cases that ran again with each run-time input made by a node before (so the
  // host owns it and it dies at the kernel) and the host granted an in-place output the
  // kernel declares (sdk.h output_inplace, output_inplace_tail).
  size_t in_place_cases = 0;
  std::string detail;  // the first failure, why nothing ran, or what was rejected
};

struct Report {
  PluginInfo plugin;
  std::string reference;
  std::vector<KernelResult> kernels;  // one per (kernel, declared dtype), in the plugin's order
  size_t count(Verdict verdict) const;
};

// "FAIL aten::relu float32: case 'x': output 0: element 3 is -1, reference 0 (...)".
std::string describe(const KernelResult& result);

// Loads the plugin and the reference once, then checks kernels on demand.
class PluginCheck {
 public:
  // Throws Error (Plugin) if the file is missing, does not load as exactly one plugin, or
  // the reference is not found.
  explicit PluginCheck(CheckOptions options, CaseTable table = all_cases());
  ~PluginCheck();
  PluginCheck(const PluginCheck&) = delete;
  PluginCheck& operator=(const PluginCheck&) = delete;

  const PluginInfo& plugin() const;
  // Every kernel (of options.op, if set) at every dtype it declares.
  Report run() const;
  KernelResult check(const KernelInfo& kernel, const std::string& dtype) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// PluginCheck(options, table).run().
Report check_plugin(const CheckOptions& options, const CaseTable& table = all_cases());

}  // namespace switchyard::conformance
