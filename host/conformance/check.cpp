// The conformance kit's runner: for each kernel and dtype a plugin declares, builds one
// single-node graph per generated case, runs it on the plugin and on the reference (a
// fused "A+B" as A then B, "A+B+C" as three nodes), and compares the outputs; then again
// per storage, and with inputs fed by a node (in place). Public embedding API only.
#include "case_makers.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <dlfcn.h>
#include <unistd.h>

namespace switchyard::conformance {

namespace {

namespace fs = std::filesystem;

// The config option every node gets in the probe runtime: no kernel knows it, and none may
// decline a node for it (sdk.h, "Options").
constexpr const char* kProbeOption = "check_plugin_probe";

// A runtime loading only `plugin` (a name or a .so path): every node goes to it, or to nothing.
// With `storage` ("plugin/storage"), values go there wherever the kernel reads or writes it.
// With `probe` (the plugin's name), a rule routes every node to it with kProbeOption.
// With `also`, that plugin is loaded too.
Runtime runtime_for(const std::string& tag, const std::string& plugin, Options options, const std::string& storage = "",
                    const std::string& probe = "", const std::string& also = "") {
  const fs::path path =
      fs::temp_directory_path() / ("switchyard-check-" + tag + "-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path);
    out << "[plugins]\nload = [\"" << plugin << "\"" << (also.empty() ? "" : ", \"" + also + "\"")
        << "]\n[selection]\nstrict = false\n";
    if (!probe.empty())
      out << "[[rules]]\nnode = \"*\"\nbackends = [\"" << probe << "\"]\noptions = { " << kProbeOption << " = 1 }\n";
    out << "[runtime]\nnode_io = \"none\"\n";
    if (!storage.empty()) out << "prefer_storage = \"" << storage << "\"\n";
    out << "[precision]\ncompute = \"as-is\"\n";  // each kernel at the dtypes the case gives it
    if (!out) throw Error(ErrorKind::Io, "cannot write " + path.string());
  }
  options.config_path = path.string();
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ec;
      fs::remove(path, ec);
    }
  } remove{path};
  return Runtime(options);
}

double element(const Tensor& t, int64_t i) {
  const void* p = t.raw_data();
  const DLDataType d = t.dtype();
  switch (d.code) {
    case kDLFloat:
      if (d.bits == 32) return static_cast<const float*>(p)[i];
      if (d.bits == 64) return static_cast<const double*>(p)[i];
      if (d.bits == 16) return from_half_bits(static_cast<const uint16_t*>(p)[i]);
      break;
    case kDLBfloat:
      if (d.bits == 16) return from_bfloat16_bits(static_cast<const uint16_t*>(p)[i]);
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
    case SY_DL_BOOL: return static_cast<const uint8_t*>(p)[i];
    default: break;
  }
  throw Error(ErrorKind::Unsupported, "cannot compare dtype " + dtype_name(d));
}

// "" when `got` matches `ref`; else what differs. Adds the max abs error to `max_err`.
std::string compare(const Tensor& got, const Tensor& ref, const Case& c, double& max_err) {
  if (!same_dtype(got.dtype(), ref.dtype()))
    return "dtype " + dtype_name(got.dtype()) + ", reference " + dtype_name(ref.dtype());
  if (got.shape() != ref.shape())
    return "shape " + shape_string(got.shape()) + ", reference " + shape_string(ref.shape());
  const Tensor g = got.contiguous(), r = ref.contiguous();
  const bool exact = ref.dtype().code != kDLFloat && ref.dtype().code != kDLBfloat;
  for (int64_t i = 0; i < r.numel(); ++i) {
    const double a = element(g, i), b = element(r, i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b))
        return "element " + std::to_string(i) + " is " + std::to_string(a) + ", reference " + std::to_string(b);
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

// The unit roundoff of a storage's element dtype ("" where its bytes hold the values
// whole): bfloat16 keeps 8 significant bits, float16 11, float32 (of float64 values) 24;
// another narrower float is allowed 2^-2 (the kit cannot know its format).
double unit_roundoff(const std::string& element) {
  if (element.empty()) return 0;
  if (element == "bfloat16") return std::ldexp(1.0, -8);
  if (element == "float16") return std::ldexp(1.0, -11);
  if (element == "float32") return std::ldexp(1.0, -24);
  return 0.25;
}

struct Built {
  Graph graph;
  std::vector<Tensor> feeds;  // the non-constant inputs, in graph input order
};

// The in-place pass's helper plugin (feed_plugin.cpp), in switchyard-check/ beside this
// library; "" where it is not there.
std::string feed_plugin() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&feed_plugin), &info) == 0 || info.dli_fname == nullptr) return "";
  const fs::path path = fs::path(info.dli_fname).parent_path() / "switchyard-check" / "libswitchyard-check_feed.so";
  std::error_code ec;
  return fs::exists(path, ec) ? fs::absolute(path, ec).string() : "";
}

// One node `op` over the case's inputs; for a fused "A+B" ("A+B+C"), A then B (then C)
// when `split`. B (or C, Case::rest_inputs_to) takes the inputs after A's. With `fed`,
// each run-time input goes through a check::feed node first (the in-place pass).
Built build(const std::string& op, const Case& c, bool split, bool fed = false) {
  Built b;
  std::vector<Graph::ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      ids.push_back(Graph::kNoValue);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    if (i < c.constant.size() && c.constant[i]) {
      ids.push_back(b.graph.add_constant(name, *c.inputs[i]));
    } else {
      ids.push_back(b.graph.add_input(name, c.inputs[i]->dtype(), c.inputs[i]->shape()));
      b.feeds.push_back(*c.inputs[i]);
      if (fed)
        ids.back() =
            b.graph.add_node("feed" + std::to_string(i), "check::feed", {ids.back()}, {"fed" + std::to_string(i)})[0];
    }
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < c.num_outputs; ++i) outs.push_back("out" + std::to_string(i));
  std::vector<Graph::ValueId> out_ids;
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t plus = op.find('+', from);
    parts.push_back(op.substr(from, plus == std::string::npos ? std::string::npos : plus - from));
    if (plus == std::string::npos) break;
    from = plus + 1;
  }
  if (!split || parts.size() == 1) {
    out_ids = b.graph.add_node("check", op, ids, outs, c.attrs);
  } else {
    const size_t n_producer = c.producer_inputs == 0 ? ids.size() : c.producer_inputs;
    // Attributes by prefix: none for A, "post." for B, "post2." for C.
    std::vector<Attributes> attrs(parts.size());
    for (const auto& [name, value] : c.attrs) {
      size_t k = 0, skip = 0;
      if (name.rfind("post.", 0) == 0)
        k = 1, skip = 5;
      else if (name.rfind("post2.", 0) == 0)
        k = 2, skip = 6;
      if (k < parts.size()) attrs[k].emplace_back(name.substr(skip), value);
    }
    Graph::ValueId mid =
        b.graph.add_node("producer", parts[0], {ids.begin(), ids.begin() + n_producer}, {"mid"}, attrs[0])[0];
    for (size_t k = 1; k < parts.size(); ++k) {
      std::vector<Graph::ValueId> in = {mid};
      if (k == c.rest_inputs_to) in.insert(in.end(), ids.begin() + n_producer, ids.end());
      const bool last = k + 1 == parts.size();
      const std::vector<std::string> names = last ? outs : std::vector<std::string>{"mid" + std::to_string(k)};
      out_ids = b.graph.add_node(last ? "check" : "consumer" + std::to_string(k), parts[k], in, names, attrs[k]);
      mid = out_ids[0];
    }
  }
  for (Graph::ValueId o : out_ids) b.graph.add_output(o);
  return b;
}

const char* verdict_name(Verdict v) { return v == Verdict::Pass ? "PASS" : v == Verdict::Fail ? "FAIL" : "SKIP"; }

}  // namespace

size_t Report::count(Verdict verdict) const {
  return static_cast<size_t>(
      std::count_if(kernels.begin(), kernels.end(), [&](const KernelResult& k) { return k.verdict == verdict; }));
}

std::string describe(const KernelResult& r) {
  return std::string(verdict_name(r.verdict)) + " " + r.op + " " + r.dtype + (r.detail.empty() ? "" : ": " + r.detail);
}

struct PluginCheck::Impl {
  CheckOptions options;
  CaseTable table;
  Runtime plugin_rt, reference_rt;
  PluginInfo plugin;
  std::unique_ptr<Runtime> probe_rt;  // every node with an option no kernel knows
  // One runtime per storage the plugin declares, keeping values there ([runtime] prefer_storage).
  struct InStorage {
    std::string storage;
    double rounding = 0;  // the unit roundoff of what its bytes hold, where that narrows
    Runtime rt;
    InStorage(const std::string& plugin, const Options& options, std::string name, const std::string& element)
        : storage(std::move(name)),
          rounding(unit_roundoff(element)),
          rt(runtime_for("storage", plugin, options, storage)) {}
  };
  std::vector<std::unique_ptr<InStorage>> storage_rts;
  std::unique_ptr<Runtime> fed_rt;  // the plugin and check::feed; null without feed_plugin()

  Impl(CheckOptions o, CaseTable t)
      : options(std::move(o)),
        table(std::move(t)),
        plugin_rt(runtime_for("plugin", fs::absolute(options.plugin).string(), options.runtime)),
        reference_rt(runtime_for("reference", options.reference, options.runtime)) {}

  void note(const std::string& line) const {
    if (options.on_case) options.on_case(line);
  }
};

namespace {
const std::string& existing(const std::string& plugin) {
  if (!fs::exists(plugin)) throw Error(ErrorKind::Plugin, "check-plugin: no such file: " + plugin);
  return plugin;
}
}  // namespace

PluginCheck::PluginCheck(CheckOptions options, CaseTable table) {
  existing(options.plugin);
  impl_ = std::make_unique<Impl>(std::move(options), std::move(table));
  const std::vector<PluginInfo> loaded = impl_->plugin_rt.plugins();
  if (loaded.size() != 1)
    throw Error(ErrorKind::Plugin, "check-plugin: " + impl_->options.plugin + " did not load as one plugin");
  impl_->plugin = loaded[0];
  // `new` from the returned prvalue: a Runtime is neither copied nor moved.
  impl_->probe_rt.reset(new Runtime(runtime_for("probe", fs::absolute(impl_->options.plugin).string(),
                                                impl_->options.runtime, "", impl_->plugin.name)));
  if (impl_->reference_rt.plugins().empty())
    throw Error(ErrorKind::Plugin,
                "check-plugin: the reference plugin '" + impl_->options.reference + "' was not found");
  const PluginInfo& p = impl_->plugin;
  for (size_t k = 0; k < p.storages.size(); ++k)
    impl_->storage_rts.push_back(
        std::make_unique<Impl::InStorage>(fs::absolute(impl_->options.plugin).string(), impl_->options.runtime,
                                          p.storages[k], k < p.storage_elements.size() ? p.storage_elements[k] : ""));
  if (const std::string feed = feed_plugin(); !feed.empty())
    impl_->fed_rt.reset(new Runtime(
        runtime_for("fed", fs::absolute(impl_->options.plugin).string(), impl_->options.runtime, "", "", feed)));
}

PluginCheck::~PluginCheck() = default;

const PluginInfo& PluginCheck::plugin() const { return impl_->plugin; }

KernelResult PluginCheck::check(const KernelInfo& kernel, const std::string& dtype_text) const {
  const Impl& s = *impl_;
  KernelResult r;
  r.op = kernel.op;
  r.dtype = dtype_text;
  auto finish = [&](Verdict verdict, std::string detail) {
    r.verdict = verdict;
    r.detail = std::move(detail);
    return r;
  };
  DLDataType dtype{};
  if (!parse_dtype(dtype_text, &dtype)) return finish(Verdict::Skip, "unknown dtype name");
  const CaseGenerator* generator = s.table.find(kernel.op);
  if (generator == nullptr) return finish(Verdict::Skip, "no generated cases for this op");
  const std::vector<Case> cases = (*generator)(dtype);
  if (cases.empty()) return finish(Verdict::Skip, "no generated cases at this dtype");
  std::string first_rejection;
  for (const Case& c : cases) {
    const std::string where = "case '" + c.label + "': ";
    Built mine = build(kernel.op, c, false);
    auto model = s.plugin_rt.load(std::move(mine.graph));
    std::vector<PlanEntry> plan;
    std::string refused;  // no backend at all took the node: the plugin's reason is in the error
    try {
      plan = model->plan(mine.feeds);
    } catch (const Error& e) {
      refused = e.what();
    }
    if (plan.size() != 1 || plan[0].backend != s.plugin.name) {
      ++r.rejected;
      if (first_rejection.empty())
        first_rejection = where + (!refused.empty()                           ? refused
                                   : plan.empty() || plan[0].rejected.empty() ? "not selected"
                                                                              : plan[0].rejected[0].reason);
      s.note(where + "rejected");
      continue;
    }
    if (const Attribute* asked = find_attr(c.attrs, "@compute")) {  // the kernel answers SY_ComputeReport
      if (plan[0].compute.empty())
        return finish(Verdict::Fail, where + "asked \"@compute\" = \"" + std::get<std::string>(*asked) +
                                         "\", the kernel did not say what it computes in (SY_ComputeReport)");
      if (plan[0].compute != "bfloat16") s.note(where + "computes in " + plan[0].compute + ": " + plan[0].compute_note);
    }
    {  // the same node with a config option the kernel does not know: never a reason to decline
      Built probed = build(kernel.op, c, false);
      auto probe = s.probe_rt->load(std::move(probed.graph));
      std::vector<PlanEntry> probe_plan;
      std::string error;
      try {
        probe_plan = probe->plan(probed.feeds);
      } catch (const Error& e) {
        error = e.what();
      }
      if (probe_plan.size() != 1 || probe_plan[0].backend != s.plugin.name)
        return finish(Verdict::Fail,
                      where + "declined the node when the config gave it an option it does not know (@" + kProbeOption +
                          "; sdk.h, \"Options\": never a reason to decline): " +
                          (!error.empty()                                         ? error
                           : probe_plan.empty() || probe_plan[0].rejected.empty() ? "not selected"
                                                                                  : probe_plan[0].rejected[0].reason));
    }
    std::vector<Tensor> got, ref;
    try {
      got = model->run(mine.feeds);
    } catch (const Error& e) {
      return finish(Verdict::Fail, where + "the plugin failed: " + e.what());
    }
    Built theirs = build(kernel.op, c, true);
    try {
      ref = s.reference_rt.load(std::move(theirs.graph))->run(theirs.feeds);
    } catch (const Error& e) {
      return finish(Verdict::Fail, where + "the reference failed (bad case?): " + e.what());
    }
    if (got.size() != ref.size())
      return finish(Verdict::Fail,
                    where + std::to_string(got.size()) + " outputs, reference " + std::to_string(ref.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string diff = compare(got[i], ref[i], c, r.max_err);
      if (!diff.empty()) return finish(Verdict::Fail, where + "output " + std::to_string(i) + ": " + diff);
    }
    // Again with values in each of the plugin's storages, where the kernel reads or writes
    // it: the conversions to and from it, and the kernel on its own layout.
    std::string stored;
    for (const auto& in : s.storage_rts) {
      const std::string& storage = in->storage;
      Built again = build(kernel.op, c, false);
      auto in_storage = in->rt.load(std::move(again.graph));
      bool used = false;
      for (const StorageCopy& copy : in_storage->storage_copies(again.feeds))
        used = used || copy.from == storage || copy.to == storage;
      if (!used) continue;
      try {
        got = in_storage->run(again.feeds);
      } catch (const Error& e) {
        return finish(Verdict::Fail, where + "in storage " + storage + ": the plugin failed: " + e.what());
      }
      // A storage that narrows (SY_EXTENSION_STORAGE_ELEMENTS) gives back each value
      // rounded, a neighbour away where the kernel's value and the reference's round apart.
      Case stored_case = c;
      stored_case.rtol += 2 * in->rounding;
      for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
        const std::string diff = compare(got[i], ref[i], stored_case, r.max_err);
        if (!diff.empty())
          return finish(Verdict::Fail, where + "in storage " + storage + ": output " + std::to_string(i) + ": " + diff);
      }
      ++r.storage_cases[storage];
      stored += ", in " + storage;
    }
    // Again with inputs the host owns and that die here, where that lets the host grant
    // an in-place output: the kernel must read each input before it writes over it.
    if (s.fed_rt && kernel.host_allocated_outputs) {
      Built fed = build(kernel.op, c, false, true);
      auto model = s.fed_rt->load(std::move(fed.graph));
      bool in_place = false;
      try {
        model->run(fed.feeds);  // plans: in-place writes begin with the next run
        for (const MemoryValue& v : model->memory_plan(fed.feeds).values)
          in_place = in_place || v.in_place || v.placement.rfind("arena, at the end of ", 0) == 0;
        if (in_place) got = model->run(fed.feeds);
      } catch (const Error& e) {
        return finish(Verdict::Fail, where + "in place: the plugin failed: " + e.what());
      }
      for (size_t i = 0; in_place && i < got.size() && i < ref.size(); ++i) {
        const std::string diff = compare(got[i], ref[i], c, r.max_err);
        if (!diff.empty()) return finish(Verdict::Fail, where + "in place: output " + std::to_string(i) + ": " + diff);
      }
      if (in_place) {
        ++r.in_place_cases;
        stored += ", in place";
      }
    }
    ++r.passed;
    s.note(where + "ok" + (stored.empty() ? "" : " (also " + stored.substr(2) + ")"));
  }
  if (r.passed == 0) return finish(Verdict::Skip, "every case rejected, e.g. " + first_rejection);
  return finish(Verdict::Pass, r.rejected > 0 ? std::to_string(r.rejected) + " cases rejected by supports" : "");
}

Report PluginCheck::run() const {
  Report report;
  report.plugin = impl_->plugin;
  report.reference = impl_->options.reference;
  for (const KernelInfo& kernel : impl_->plugin.kernels) {
    if (!impl_->options.op.empty() && kernel.op != impl_->options.op) continue;
    for (const std::string& dtype : kernel.dtypes) report.kernels.push_back(check(kernel, dtype));
  }
  return report;
}

Report check_plugin(const CheckOptions& options, const CaseTable& table) { return PluginCheck(options, table).run(); }

}  // namespace switchyard::conformance
