// Per-node backend selection: rule (or default list) → ordered backends → first kernel
// whose dtypes fit and whose plugin says yes. Runs once per plan, not per inference.
#include "select/selector.hpp"

#include <switchyard/tensor.hpp>

#include <algorithm>

namespace switchyard::select {

namespace {

bool rule_needs_families(const config::Config& cfg) {
  return std::any_of(cfg.rules.begin(), cfg.rules.end(), [](const config::Rule& r) { return !r.family.empty(); });
}

// Every plugin that offers the op, in catalog (load) order, each once.
std::vector<std::string> backends_in_catalog_order(const std::vector<Candidate>& candidates) {
  std::vector<std::string> names;
  for (const auto& c : candidates)
    if (std::find(names.begin(), names.end(), c.backend) == names.end()) names.push_back(c.backend);
  return names;
}

}  // namespace

std::string dtype_mismatch(const SY_KernelDef& def, const std::vector<const DLTensor*>& inputs) {
  if (def.num_dtypes == 0 || def.dtypes == nullptr) return "";  // an empty list means any dtype
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) continue;  // absent optional input
    const DLDataType dtype = inputs[i]->dtype;
    const DLDataType* begin = def.dtypes;
    const DLDataType* end = def.dtypes + def.num_dtypes;
    if (std::any_of(begin, end, [&](DLDataType d) { return same_dtype(d, dtype); })) continue;
    std::string takes;
    for (const DLDataType* d = begin; d != end; ++d) takes += (takes.empty() ? "" : ", ") + dtype_name(*d);
    return "dtype " + dtype_name(dtype) + " of input " + std::to_string(i) + " not supported (kernel takes " + takes +
           ")";
  }
  return "";
}

namespace {
// Whether a [[rules]] or [[precision.rules]] entry's matchers all hold for the node.
template <typename R>
bool matches(const R& rule, const ir::Node& node, const std::vector<std::string>& families) {
  return (rule.op.empty() || rule.op == node.op) && (rule.node.empty() || config::glob_match(rule.node, node.name)) &&
         (rule.module.empty() || config::glob_match(rule.module, node.module_path)) &&
         (rule.family.empty() || std::find(families.begin(), families.end(), rule.family) != families.end());
}
}  // namespace

int match_rule(const config::Config& cfg, const ir::Node& node, const std::vector<std::string>& families) {
  for (size_t i = 0; i < cfg.rules.size(); ++i)
    if (matches(cfg.rules[i], node, families)) return static_cast<int>(i);
  return -1;
}

std::vector<config::Compute> match_compute(const config::Config& cfg, const Catalog& catalog, const ir::Graph& graph) {
  const config::Compute whole = cfg.compute.value_or(config::Compute::AsIs);
  const bool families_needed = std::any_of(cfg.precision_rules.begin(), cfg.precision_rules.end(),
                                           [](const config::PrecisionRule& r) { return !r.family.empty(); });
  std::vector<config::Compute> out;
  for (const ir::Node& node : graph.nodes) {
    std::vector<std::string> families;
    if (families_needed && catalog.families_for) families = catalog.families_for(node.op);
    config::Compute c = whole;
    for (const config::PrecisionRule& rule : cfg.precision_rules)
      if (matches(rule, node, families)) {
        c = rule.compute;
        break;
      }
    out.push_back(c);
  }
  return out;
}

namespace {
// Families cost a catalog query; only ask when some rule matches on them.
int rule_of(const config::Config& cfg, const Catalog& catalog, const ir::Node& node) {
  std::vector<std::string> families;
  if (catalog.families_for && rule_needs_families(cfg)) families = catalog.families_for(node.op);
  return match_rule(cfg, node, families);
}
}  // namespace

std::vector<int32_t> match_rules(const config::Config& cfg, const Catalog& catalog, const ir::Graph& graph) {
  std::vector<int32_t> out;
  out.reserve(graph.nodes.size());
  for (const ir::Node& node : graph.nodes) out.push_back(cfg.rules.empty() ? -1 : rule_of(cfg, catalog, node));
  return out;
}

bool routing_offers(const config::Config& cfg, const Catalog& catalog, const ir::Node& node) {
  const std::vector<Candidate> candidates =
      catalog.kernels_for ? catalog.kernels_for(node.op) : std::vector<Candidate>{};
  const int rule = rule_of(cfg, catalog, node);
  const std::vector<std::string>& backends = rule >= 0 ? cfg.rules[static_cast<size_t>(rule)].backends
                                             : cfg.default_backends.empty() ? backends_in_catalog_order(candidates)
                                                                            : cfg.default_backends;
  return std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) {
    return std::find(backends.begin(), backends.end(), c.backend) != backends.end();
  });
}

Selection select_kernel(const config::Config& cfg, const Catalog& catalog, const ir::Node& node,
                        const std::vector<const DLTensor*>& inputs) {
  return select_kernel(cfg, catalog, node, inputs, rule_of(cfg, catalog, node));
}

Selection select_kernel(const config::Config& cfg, const Catalog& catalog, const ir::Node& node,
                        const std::vector<const DLTensor*>& inputs, int rule_index) {
  Selection selection;
  selection.rule_index = rule_index;

  const std::vector<Candidate> candidates =
      catalog.kernels_for ? catalog.kernels_for(node.op) : std::vector<Candidate>{};
  std::string source;  // the first half of the winner's reason
  std::vector<std::string> backends;
  if (selection.rule_index >= 0) {
    const config::Rule& rule = cfg.rules[static_cast<size_t>(selection.rule_index)];
    backends = rule.backends;
    source = "rule #" + std::to_string(selection.rule_index + 1);
    if (!rule.pos.file.empty() || rule.pos.line > 0) source += " (" + rule.pos.str() + ")";
  } else if (!cfg.default_backends.empty()) {
    backends = cfg.default_backends;
    source = cfg.builtin_default ? "built-in routing" : "default list";
  } else {
    backends = backends_in_catalog_order(candidates);
    source = "any plugin in load order";
  }

  for (const std::string& backend : backends) {
    bool offered = false;
    // A backend may offer several kernels for one op (e.g. a view and a copy); it
    // rejects the node only when all of them decline.
    const size_t rejections_before = selection.rejected.size();
    for (const Candidate& candidate : candidates) {
      if (candidate.backend != backend || candidate.def == nullptr) continue;
      offered = true;
      std::string reason = dtype_mismatch(*candidate.def, inputs);
      if (reason.empty() && catalog.ask) reason = catalog.ask(candidate, node, inputs);
      if (reason.empty()) {
        selection.rejected.resize(rejections_before);  // its other kernels' refusals are no verdict
        selection.winner = candidate;
        selection.reason = source + " → " + backend;
        return selection;
      }
      selection.rejected.push_back(Rejection{backend, std::move(reason)});
    }
    if (offered && selection.rejected.size() > rejections_before && cfg.strict) return selection;
    // The built-in routing names every loaded plugin: one without the op is no verdict.
    if (!offered) {
      selection.rejected.push_back(Rejection{backend, "no kernel for " + node.op});
      if (cfg.strict && !(selection.rule_index < 0 && cfg.builtin_default)) return selection;
    }
  }
  return selection;
}

}  // namespace switchyard::select
