#include "exec/executor.hpp"

#include "exec/finalize.hpp"
#include "exec/fusion.hpp"
#include "ir/input_spec.hpp"
#include "loader/host_api.hpp"

#include <switchyard/error.hpp>

#include <algorithm>

namespace switchyard::exec {

select::Catalog plugin_catalog(const loader::PluginManager& plugins) {
  select::Catalog catalog;
  catalog.kernels_for = [&plugins](const std::string& op) {
    std::vector<select::Candidate> out;
    for (const auto& ref : plugins.kernels_for(op))
      out.push_back(select::Candidate{ref.plugin->name(), ref.def, ref.def});
    return out;
  };
  catalog.families_for = [&plugins](const std::string& op) {
    std::vector<std::string> out;
    for (const auto& ref : plugins.kernels_for(op))
      if (ref.def->family != nullptr && std::find(out.begin(), out.end(), ref.def->family) == out.end())
        out.emplace_back(ref.def->family);
    return out;
  };
  catalog.ask = [](const select::Candidate& c, const ir::Node& node,
                   const std::vector<const DLTensor*>& inputs) -> std::string {
    if (c.def->supports == nullptr) return "";
    SY_CallContext call;
    SY_SupportsArgs args{};
    args.struct_size = SY_SupportsArgs_STRUCT_SIZE;
    args.call = &call;
    args.node_name = node.name.c_str();
    args.attributes = loader::as_sdk(node.attrs);
    args.inputs = inputs.data();
    args.num_inputs = inputs.size();
    args.num_outputs = node.outputs.size();
    const SY_Status s = c.def->supports(c.def->context, &args);
    if (s == SY_OK) return "";
    if (s == SY_ERROR_UNSUPPORTED) return call.message.empty() ? "declined (no reason given)" : call.message;
    return "capability query failed: " + loader::describe_failure(s, call);
  };

  return catalog;
}

Executor::Executor(const ir::Graph& graph, const config::Config& config, const loader::PluginManager& plugins,
                   bool fuse)
    : graph_(graph),
      config_(config),
      plugins_(plugins),
      storages_(plugins),
      fuse_(fuse && config.fuse),
      runner_(graph, storages_, config),
      cache_(static_cast<size_t>(std::max(1, config.plan_cache))) {
  if (!config.prefer_storage.empty()) {
    preferred_storage_ = storages_.find(config.prefer_storage);
    if (preferred_storage_ == -2)
      throw Error(ErrorKind::Config, config.prefer_storage_pos.str() +
                                         ": [runtime] prefer_storage: no loaded plugin declares '" +
                                         config.prefer_storage + "' (storages: " + storages_.names() + ")");
  }
  catalog_ = plugin_catalog(plugins_);
  rule_of_ = select::match_rules(config_, catalog_, graph_);
  compute_of_ = select::match_compute(config_, catalog_, graph_);
  last_use_.assign(graph_.values.size(), -1);
  for (size_t n = 0; n < graph_.nodes.size(); ++n)
    for (ir::ValueId v : graph_.nodes[n].inputs)
      if (v != ir::kNoValue) last_use_[static_cast<size_t>(v)] = static_cast<int32_t>(n);
  for (ir::ValueId v : graph_.outputs) last_use_[static_cast<size_t>(v)] = kForever;
  if (fuse_) fusable_ = fusable_consumers(graph_);
}

Executor::~Executor() = default;

RunResult Executor::run(const std::vector<Tensor>& inputs, const RunOptions& options) {
  check_inputs(inputs);
  auto run_planned = [&](const Plan& plan) { return runner_.run(plan, inputs, options); };
  if (std::shared_ptr<Plan> plan = cache_.find(inputs)) return run_planned(*plan);
  // A new signature: plan by running once (sequentially), then keep the plan.
  std::lock_guard<std::mutex> lock(planning_mutex_);
  if (std::shared_ptr<Plan> plan = cache_.find(inputs)) return run_planned(*plan);  // planned meanwhile
  // Refused before any kernel runs, naming the input, its symbolic shape and the given one.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (std::string why = ir::check_input_shape(graph_, i, inputs[i].shape()); !why.empty())
      throw Error(ErrorKind::Input, why);
  if (config_.preflight) preflight(inputs);
  auto plan = std::make_shared<Plan>();
  RunResult result = plan_and_run(*plan, inputs, options);
  result.stats.planned = true;
  finalize(*plan);
  cache_.insert(inputs, std::move(plan));
  return result;
}

void Executor::finalize(Plan& plan) const {
  finalize_plan(FinalizeInputs{graph_, config_, storages_, last_use_, preferred_storage_, runner_.parallel()}, plan);
  if (runner_.parallel()) plan.schedule = std::make_unique<Schedule>(runner_.make_schedule(plan));
}

std::shared_ptr<const Plan> Executor::cached_plan(const std::vector<Tensor>& inputs) const {
  return cache_.find(inputs);
}

std::string describe(const ir::Node& node) {
  std::string text = "node '" + node.name + "' (op " + node.op;
  if (!node.module_path.empty()) text += ", module " + node.module_path;
  return text + ")";
}

void Executor::check_inputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != graph_.inputs.size())
    throw Error(ErrorKind::Input, "the model takes " + std::to_string(graph_.inputs.size()) + " input(s), got " +
                                      std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& decl = graph_.values[static_cast<size_t>(graph_.inputs[i])];
    const Tensor& t = inputs[i];
    const std::string which = "input " + std::to_string(i) + " '" + decl.name + "'";
    if (!t.defined()) throw Error(ErrorKind::Input, which + " is an undefined tensor");
    if (t.device().device_type != kDLCPU) throw Error(ErrorKind::Input, which + " must be a CPU tensor");
    // kAnyDtype: the model does not pin this input's dtype; its ops take (and promote) any.
    if (!accepts_dtype(decl.dtype, t.dtype()))
      throw Error(ErrorKind::Input,
                  which + ": expected dtype " + dtype_name(decl.dtype) + ", got " + dtype_name(t.dtype()));
    // Shapes are checked once per signature, before planning (run()).
  }
}

}  // namespace switchyard::exec
