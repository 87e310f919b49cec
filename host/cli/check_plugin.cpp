// `switchyard check-plugin LIB.so`: the conformance kit. Runs every kernel a plugin
// exports on generated single-node graphs (conformance/cases_*.cpp) and compares each
// output with the aten reference plugin's. Needs only the plugin binary, not its source.
#include "check_plugin.hpp"
#include "commands.hpp"
#include "conformance/cases.hpp"
#include "ir/graph.hpp"

#include <switchyard/error.hpp>
#include <switchyard/sdk.h>
#include <switchyard/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace switchyard::cli {

namespace {

namespace fs = std::filesystem;
using conformance::Case;

// A config loading only `plugin` (a name or a .so path), every node on it, strict.
std::string write_config(const std::string& tag, const std::string& plugin) {
  fs::path path = fs::temp_directory_path() / ("switchyard-check-" + tag + "-" + std::to_string(::getpid()) + ".toml");
  std::ofstream out(path);
  out << "[plugins]\nload = [\"" << plugin << "\"]\n[selection]\nstrict = false\n[runtime]\nnode_io = \"none\"\n";
  if (!out) throw Error(ErrorKind::Io, "cannot write " + path.string());
  return path.string();
}

double element(const Tensor& t, int64_t i) {
  const void* p = t.raw_data();
  const DLDataType d = t.dtype();
  switch (d.code) {
    case kDLFloat:
      if (d.bits == 32) return static_cast<const float*>(p)[i];
      if (d.bits == 64) return static_cast<const double*>(p)[i];
      if (d.bits == 16) return conformance::from_half_bits(static_cast<const uint16_t*>(p)[i]);
      break;
    case kDLBfloat:
      if (d.bits == 16) return conformance::from_bfloat16_bits(static_cast<const uint16_t*>(p)[i]);
      break;
    case kDLInt:
      if (d.bits == 8) return static_cast<const int8_t*>(p)[i];
      if (d.bits == 16) return static_cast<const int16_t*>(p)[i];
      if (d.bits == 32) return static_cast<const int32_t*>(p)[i];
      if (d.bits == 64) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
      break;
    case kDLUInt:
      if (d.bits == 8) return static_cast<const uint8_t*>(p)[i];
      break;
    case SY_DL_BOOL:
      return static_cast<const uint8_t*>(p)[i];
    default:
      break;
  }
  throw Error(ErrorKind::Unsupported, "cannot compare dtype " + dtype_name(d));
}

// "" when `got` matches `ref`; else what differs. Adds the max abs error to `max_err`.
std::string compare(const Tensor& got, const Tensor& ref, const Case& c, double& max_err) {
  if (!same_dtype(got.dtype(), ref.dtype()))
    return "dtype " + dtype_name(got.dtype()) + ", reference " + dtype_name(ref.dtype());
  if (got.shape() != ref.shape()) return "shape " + shape_string(got.shape()) + ", reference " + shape_string(ref.shape());
  const Tensor g = got.contiguous(), r = ref.contiguous();
  const bool exact = ref.dtype().code != kDLFloat && ref.dtype().code != kDLBfloat;
  for (int64_t i = 0; i < r.numel(); ++i) {
    const double a = element(g, i), b = element(r, i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) return "element " + std::to_string(i) + " is " + std::to_string(a) + ", reference " + std::to_string(b);
      continue;
    }
    const double err = std::fabs(a - b);
    if (!std::isfinite(err) && a == b) continue;  // the same infinity
    max_err = std::max(max_err, err);
    const bool ok = exact ? a == b : err <= c.atol + c.rtol * std::fabs(b);
    if (!ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %lld is %.9g, reference %.9g (|diff| %.3g > %.3g)",
                    static_cast<long long>(i), a, b, err, c.atol + c.rtol * std::fabs(b));
      return buf;
    }
  }
  return "";
}

struct Built {
  ir::Graph graph;
  std::vector<Tensor> feeds;  // the non-constant inputs, in graph input order
};

// One node `op` over the case's inputs; for a fused "A+B", A then B when `split`.
Built build(const std::string& op, const Case& c, bool split) {
  Built b;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      ids.push_back(ir::kNoValue);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    if (i < c.constant.size() && c.constant[i]) {
      ids.push_back(b.graph.add_constant(name, *c.inputs[i]));
    } else {
      ids.push_back(b.graph.add_input(name, c.inputs[i]->dtype(), c.inputs[i]->shape()));
      b.feeds.push_back(*c.inputs[i]);
    }
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < c.num_outputs; ++i) outs.push_back("out" + std::to_string(i));
  const size_t plus = op.find('+');
  if (!split || plus == std::string::npos) {
    b.graph.add_node("check", op, ids, outs, c.attrs);
  } else {
    const size_t n_producer = c.producer_inputs == 0 ? ids.size() : c.producer_inputs;
    ir::Attributes producer_attrs, consumer_attrs;
    for (const auto& [name, value] : c.attrs) {
      if (name.rfind("post.", 0) == 0) consumer_attrs.emplace_back(name.substr(5), value);
      else producer_attrs.emplace_back(name, value);
    }
    b.graph.add_node("producer", op.substr(0, plus), {ids.begin(), ids.begin() + n_producer}, {"mid"}, producer_attrs);
    std::vector<ir::ValueId> consumer_in = {b.graph.find_value("mid")};
    consumer_in.insert(consumer_in.end(), ids.begin() + n_producer, ids.end());
    b.graph.add_node("check", op.substr(plus + 1), consumer_in, outs, consumer_attrs);
  }
  for (const std::string& o : outs) b.graph.outputs.push_back(b.graph.find_value(o));
  return b;
}

struct KernelResult {
  std::string op, dtype;
  size_t passed = 0, rejected = 0;
  double max_err = 0.0;
  std::string failure;     // the first failing case, if any
  std::string skip_reason; // why nothing ran
};

KernelResult check_kernel(const Runtime& plugin_rt, const Runtime& reference_rt, const std::string& backend,
                          const KernelInfo& kernel, const std::string& dtype_text,
                          const conformance::CaseTable& table, bool verbose) {
  KernelResult r;
  r.op = kernel.op;
  r.dtype = dtype_text;
  DLDataType dtype{};
  if (!parse_dtype(dtype_text, &dtype)) {
    r.skip_reason = "unknown dtype name";
    return r;
  }
  const conformance::CaseGenerator* generator = table.find(kernel.op);
  if (generator == nullptr) {
    r.skip_reason = "no generated cases for this op";
    return r;
  }
  const std::vector<Case> cases = (*generator)(dtype);
  if (cases.empty()) r.skip_reason = "no generated cases at this dtype";
  std::string first_rejection;
  for (const Case& c : cases) {
    const std::string where = "case '" + c.label + "': ";
    Built mine = build(kernel.op, c, false);
    auto model = plugin_rt.load_graph(std::move(mine.graph));
    const std::vector<PlanEntry> plan = model->plan(mine.feeds);
    if (plan.size() != 1 || plan[0].backend != backend) {
      ++r.rejected;
      if (first_rejection.empty())
        first_rejection = where + (plan.empty() || plan[0].rejected.empty() ? "not selected" : plan[0].rejected[0].reason);
      if (verbose) std::printf("    %s rejected\n", where.c_str());
      continue;
    }
    std::vector<Tensor> got, ref;
    try {
      got = model->run(mine.feeds);
    } catch (const Error& e) {
      r.failure = where + "the plugin failed: " + e.what();
      return r;
    }
    Built theirs = build(kernel.op, c, true);
    try {
      ref = reference_rt.load_graph(std::move(theirs.graph))->run(theirs.feeds);
    } catch (const Error& e) {
      r.failure = where + "the reference failed (bad case?): " + e.what();
      return r;
    }
    if (got.size() != ref.size()) {
      r.failure = where + std::to_string(got.size()) + " outputs, reference " + std::to_string(ref.size());
      return r;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string diff = compare(got[i], ref[i], c, r.max_err);
      if (!diff.empty()) {
        r.failure = where + "output " + std::to_string(i) + ": " + diff;
        return r;
      }
    }
    ++r.passed;
    if (verbose) std::printf("    %s ok\n", where.c_str());
  }
  if (r.passed == 0 && !cases.empty()) r.skip_reason = "every case rejected, e.g. " + first_rejection;
  return r;
}

std::string format_err(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", e);
  return buf;
}

}  // namespace

int cmd_check_plugin(const CommonOptions& common, const CheckPluginOptions& options) {
  if (!fs::exists(options.plugin)) throw Error(ErrorKind::Plugin, "check-plugin: no such file: " + options.plugin);
  const std::string plugin_path = fs::absolute(options.plugin).string();

  Options mine = to_options(common);
  mine.config_path = write_config("plugin", plugin_path);
  Runtime plugin_rt(mine);
  fs::remove(mine.config_path);
  const std::vector<PluginInfo> loaded = plugin_rt.plugins();
  if (loaded.size() != 1) throw Error(ErrorKind::Plugin, "check-plugin: " + options.plugin + " did not load as one plugin");
  const PluginInfo& plugin = loaded[0];

  Options ref = to_options(common);
  ref.config_path = write_config("reference", options.reference);
  Runtime reference_rt(ref);
  fs::remove(ref.config_path);
  if (reference_rt.plugins().empty())
    throw Error(ErrorKind::Plugin, "check-plugin: the reference plugin '" + options.reference + "' was not found");

  std::printf("check-plugin: %s %s (%s), %zu kernels, against '%s'\n", plugin.name.c_str(), plugin.version.c_str(),
              plugin.path.c_str(), plugin.kernels.size(), options.reference.c_str());
  const conformance::CaseTable table = conformance::all_cases();
  std::vector<std::vector<std::string>> rows = {{"result", "op", "dtype", "cases", "max_err", "detail"}};
  size_t failed = 0, passed = 0, skipped = 0;
  for (const KernelInfo& kernel : plugin.kernels) {
    if (!options.op.empty() && kernel.op != options.op) continue;
    for (const std::string& dtype : kernel.dtypes) {
      KernelResult r = check_kernel(plugin_rt, reference_rt, plugin.name, kernel, dtype, table, options.verbose);
      std::string result = !r.failure.empty() ? "FAIL" : r.passed > 0 ? "PASS" : "SKIP";
      std::string detail = !r.failure.empty() ? r.failure : r.passed > 0 && r.rejected > 0
                               ? std::to_string(r.rejected) + " cases rejected by supports"
                               : r.skip_reason;
      (result == "FAIL" ? failed : result == "PASS" ? passed : skipped) += 1;
      rows.push_back({result, r.op, r.dtype, std::to_string(r.passed) + "/" + std::to_string(r.passed + r.rejected),
                      r.passed > 0 ? format_err(r.max_err) : "-", detail});
    }
  }
  print_table(rows);
  std::printf("check-plugin: %zu passed, %zu failed, %zu skipped (no case ran)\n", passed, failed, skipped);
  if (options.require_all && skipped > 0) {
    std::fprintf(stderr, "error: check-plugin --require-all: %zu kernel/dtype pairs ran no case\n", skipped);
    return 1;
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace switchyard::cli
