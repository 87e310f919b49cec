// What the planning run (planning_run.cpp) decides per node: its bound attributes and
// config options, a backend (selection), maybe a fused consumer (fusion.cpp), a kernel
// instance with its storages, and the kernel's cost.
#include "exec/executor.hpp"

#include "exec/fusion.hpp"
#include "exec/island.hpp"
#include "ir/sym.hpp"
#include "loader/host_api.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <type_traits>

namespace switchyard::exec {
namespace {

std::string join_rejections(const std::vector<select::Rejection>& rejected) {
  if (rejected.empty()) return " none (no loaded plugin is routed to this node)";
  std::string text;
  for (const auto& r : rejected) text += "\n  - " + r.backend + ": " + r.reason;
  return text;
}

// SY_SupportsArgs and SY_KernelCreateArgs describe a node with the same fields.
template <typename Args>
Args node_args(SY_CallContext* call, const ir::Node& node, const std::vector<const DLTensor*>& inputs) {
  static_assert(std::is_same_v<Args, SY_SupportsArgs> || std::is_same_v<Args, SY_KernelCreateArgs>);
  Args args{};
  args.struct_size =
      std::is_same_v<Args, SY_SupportsArgs> ? SY_SupportsArgs_STRUCT_SIZE : SY_KernelCreateArgs_STRUCT_SIZE;
  args.call = call;
  args.node_name = node.name.c_str();
  args.attributes = loader::as_sdk(node.attrs);
  args.inputs = inputs.data();
  args.num_inputs = inputs.size();
  args.num_outputs = node.outputs.size();
  return args;
}

// Asks a 1.1 kernel for its cost of one run at these input shapes, once per plan. A
// failure or a nonsensical number is a warning, never fatal: the roofline then uses the
// host's formula for the op.
void ask_cost(BoundKernel& bound, const std::string& node, const std::string& backend,
              const std::vector<const DLTensor*>& inputs, size_t num_outputs) {
  const SY_KernelDef* def = bound.kernel.def;
  if (!SY_STRUCT_HAS(def, SY_KernelDef, cost) || def->cost == nullptr) return;
  SY_CallContext call;
  SY_KernelCostArgs args{};
  args.struct_size = SY_KernelCostArgs_STRUCT_SIZE;
  args.call = &call;
  args.instance = bound.instance;
  args.inputs = inputs.data();
  args.num_inputs = inputs.size();
  args.num_outputs = num_outputs;
  const SY_Status s = def->cost(def->context, &args);
  std::string problem;
  if (s != SY_OK)
    problem = "its kernel's cost failed: " + loader::describe_failure(s, call);
  else if (!std::isfinite(args.flops) || !std::isfinite(args.bytes) || args.flops < 0 || args.bytes < 0)
    problem = "its kernel's cost reported flops " + std::to_string(args.flops) + " and bytes " +
              std::to_string(args.bytes) + ", which are not counts";
  if (!problem.empty()) {
    log::get().warn("{}: plugin '{}': {}; the roofline uses the host's formula for this node instead", node, backend,
                    problem);
    return;
  }
  bound.has_cost = true;
  bound.flops = args.flops;
  bound.bytes = args.bytes;
  bound.scratch_bytes = args.scratch_bytes;
}

}  // namespace

BoundKernel::~BoundKernel() {
  if (instance != nullptr) kernel.def->destroy(kernel.def->context, instance);
}

ir::Node Executor::resolve(const ir::Node& node, const Plan& plan) const {
  ir::Node out = node;
  for (auto& [name, attr] : out.attrs)
    if (attr.bound()) attr = ir::bind_scalar(plan.record.scalars[static_cast<size_t>(attr.ref)], attr.kind, node, name);
  return out;
}

const std::vector<config::RuleOption>* Executor::rule_options(size_t index) const {
  const int32_t rule = rule_of_[index];
  if (rule < 0 || config_.rules[static_cast<size_t>(rule)].options.empty()) return nullptr;
  return &config_.rules[static_cast<size_t>(rule)].options;
}

const std::vector<std::string>& Executor::routing(size_t index) const {
  const int32_t rule = rule_of_[index];
  return rule >= 0 ? config_.rules[static_cast<size_t>(rule)].backends : config_.default_backends;
}

namespace {
ir::Attribute option_attribute(const config::RuleOption& o) {
  switch (o.kind) {
    case config::RuleOption::Kind::Int: return ir::Attribute::of_int(o.i);
    case config::RuleOption::Kind::Float: return ir::Attribute::of_float(o.f);
    case config::RuleOption::Kind::String: break;
  }
  return ir::Attribute::of_string(o.s);
}
}  // namespace

void Executor::bind_node(size_t index, Plan& plan, const ir::Node& node, const std::vector<const DLTensor*>& inputs) {
  NodeDecision& np = plan.record.nodes[index];
  // A [[precision.rules]] "fp32" on a node of a model computing as-is: a float32 island
  // even where a kernel takes its dtype.
  if (compute_of_[index] == config::Compute::Float32 &&
      config_.compute.value_or(config::Compute::AsIs) == config::Compute::AsIs &&
      bind_island(index, plan, node, inputs))
    return;
  np.selection = select::select_kernel(config_, catalog_, node, inputs, rule_of_[index]);
  // An island after a rejection is a fallback: strict mode makes the rejection final.
  if (!np.selection.winner && !config_.strict && bind_island(index, plan, node, inputs)) return;
  if (!np.selection.winner) {
    std::string asked = !config_.strict                   ? ""
                        : island_dtype(inputs).lanes == 0 ? " (strict mode: the first rejection is final)"
                                                          : " (strict mode: the first rejection is final, and no "
                                                            "float32 island is formed)";
    throw Error(ErrorKind::Unsupported, "no backend can run " + describe_node(index) + asked +
                                            "; backends asked:" + join_rejections(np.selection.rejected));
  }
  np.backend = np.selection.winner->backend;
  np.bound = create_kernel(node, *np.selection.winner, inputs);
  log::get().debug("{} -> {} ({})", describe_node(index), np.backend, np.selection.reason);
}

bool Executor::bind_island(size_t index, Plan& plan, const ir::Node& node, const std::vector<const DLTensor*>& inputs) {
  const DLDataType half = island_dtype(inputs);
  if (half.lanes == 0) return false;
  NodeDecision& np = plan.record.nodes[index];
  auto twin = std::make_unique<Float32Twin>(inputs);
  const select::Selection twin_selection =
      select::select_kernel(config_, catalog_, node, twin->inputs(), rule_of_[index]);
  if (!twin_selection.winner) return false;  // the error then gives the half-precision rejections
  auto island = std::make_shared<Island>(*twin_selection.winner, half, std::move(twin));
  select::Candidate candidate = *twin_selection.winner;
  candidate.def = island->def();
  np.bound = create_kernel(node, candidate, inputs);
  BoundKernel& bound = *np.bound;
  bound.island = half;
  bound.adapter = island;
  bound.compute = DLDataType{kDLFloat, 32, 1};
  bound.compute_constant_bytes = island->twin().constant_bytes();
  bound.compute_converted_bytes = island_bytes_per_run(inputs, bound.output_descs);
  const bool asked = compute_of_[index] == config::Compute::Float32;  // by a rule (bind_node)
  bound.compute_note =
      asked ? "[[precision.rules]] asks float32 of it"
            : "no backend takes " + dtype_name(half) + "; plugin '" + candidate.backend + "' takes it in float32";
  np.backend = candidate.backend;
  np.selection.winner = candidate;
  np.selection.reason = twin_selection.reason + ", a float32 island in a " + dtype_name(half) + " model";
  if (asked) np.selection.rejected = twin_selection.rejected;
  log::get().debug("{} -> {} ({})", describe_node(index), np.backend, np.selection.reason);
  return true;
}

std::unique_ptr<BoundKernel> Executor::create_kernel(const ir::Node& node, const select::Candidate& winner,
                                                     const std::vector<const DLTensor*>& inputs) const {
  const auto* def = winner.def;
  auto bound = std::make_unique<BoundKernel>();
  bound->kernel.def = def;
  bound->kernel.plugin = plugins_.find(winner.backend);
  auto fail = [&](const std::string& what, SY_Status s, const SY_CallContext& call) {
    throw Error(
        s == SY_ERROR_OUT_OF_MEMORY ? ErrorKind::OutOfMemory : ErrorKind::Kernel,
        describe(node) + ": plugin '" + winner.backend + "' " + what + ": " + loader::describe_failure(s, call));
  };

  SY_CallContext call;
  auto args = node_args<SY_KernelCreateArgs>(&call, node, inputs);
  SY_Status s = def->create(def->context, &args);
  if (s != SY_OK) fail("failed to create its kernel", s, call);
  bound->instance = args.instance;

  if (def->infer != nullptr) {  // required for host-allocated outputs; a promise otherwise
    bound->output_descs.assign(node.outputs.size(), SY_TensorDesc{});
    for (auto& d : bound->output_descs) d.struct_size = SY_TensorDesc_STRUCT_SIZE;
    SY_KernelInferArgs infer{};
    infer.struct_size = SY_KernelInferArgs_STRUCT_SIZE;
    infer.call = &call;
    infer.instance = bound->instance;
    infer.inputs = inputs.data();
    infer.num_inputs = inputs.size();
    infer.outputs = bound->output_descs.data();
    infer.num_outputs = bound->output_descs.size();
    s = def->infer(def->context, &infer);
    if (s != SY_OK) fail("could not infer output shapes", s, call);
    for (const auto& d : bound->output_descs)
      if (d.ndim < 0 || d.ndim > SY_MAX_DIMS)
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend + "' inferred an output with " +
                                           std::to_string(d.ndim) + " dimensions");
  }

  // Storages (SDK 1.1): what the instance reads and writes; a 1.0 kernel reads host memory.
  bound->input_reads.assign(inputs.size(), SY_STORAGE_MASK_HOST);
  bound->output_writes.assign(node.outputs.size(), SY_STORAGE_MASK_HOST);
  bound->output_inplace.assign(node.outputs.size(), -1);
  bound->output_inplace_tail.assign(node.outputs.size(), -1);
  if (SY_STRUCT_HAS(def, SY_KernelDef, storage) && def->storage != nullptr) {
    SY_KernelStorageArgs st{};
    st.struct_size = SY_KernelStorageArgs_STRUCT_SIZE;
    st.call = &call;
    st.instance = bound->instance;
    st.inputs = inputs.data();
    st.num_inputs = inputs.size();
    st.num_outputs = node.outputs.size();
    st.input_reads = bound->input_reads.data();
    st.output_writes = bound->output_writes.data();
    st.output_inplace = bound->output_inplace.data();
    st.output_inplace_tail = bound->output_inplace_tail.data();
    SY_ComputeReport compute{};  // what the kernel multiplies in; preset: its tensors' dtype
    compute.header.struct_size = SY_ComputeReport_STRUCT_SIZE;
    compute.header.type = SY_EXTENSION_COMPUTE_REPORT;
    st.extension_start = &compute.header;
    s = def->storage(def->context, &st);
    if (s != SY_OK) fail("could not say which storages its kernel reads and writes", s, call);
    bound->compute = compute.dtype;
    bound->compute_converted_bytes = compute.converted_bytes;
    bound->compute_constant_bytes = compute.constant_bytes;
    if (compute.note != nullptr) bound->compute_note = compute.note;
    const size_t declared =
        bound->kernel.plugin->table().struct_size >= offsetof(SY_Plugin, num_storages) + sizeof(size_t)
            ? bound->kernel.plugin->table().num_storages
            : 0;
    const SY_StorageMask valid = static_cast<SY_StorageMask>((uint64_t{2} << declared) - 1);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (bound->input_reads[i] == 0 || (bound->input_reads[i] & ~valid))
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend + "' says input " +
                                           std::to_string(i) + " reads storage mask " +
                                           std::to_string(bound->input_reads[i]) +
                                           ", which names no storage it declares");
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (bound->output_writes[o] == 0 || (bound->output_writes[o] & ~valid))
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend + "' says output " +
                                           std::to_string(o) + " writes storage mask " +
                                           std::to_string(bound->output_writes[o]) +
                                           ", which names no storage it declares");
      const int32_t i = bound->output_inplace[o];
      if (i < -1 || i >= static_cast<int32_t>(inputs.size()) || def->output_mode != SY_OUTPUT_HOST_ALLOCATED)
        bound->output_inplace[o] = -1;
      const int32_t t = bound->output_inplace_tail[o];
      if (t < -1 || t >= static_cast<int32_t>(inputs.size()) || def->output_mode != SY_OUTPUT_HOST_ALLOCATED)
        bound->output_inplace_tail[o] = -1;
    }
  }
  return bound;
}

void Executor::try_fuse(size_t index, Plan& plan, const MetadataOf& metadata) {
  NodeDecision& np = plan.record.nodes[index];
  if (!fuse_ || fusable_[index] < 0) return;
  const ir::Node& producer = np.as_run(graph_.nodes[index]);
  const std::vector<int32_t> chain = fusion_chain(graph_, fusable_, index);
  // A node's routing (empty: any backend) allows the backend.
  auto allows = [&](int32_t node, const std::string& backend) {
    const std::vector<std::string>& allowed = routing(static_cast<size_t>(node));
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), backend) != allowed.end();
  };
  // Where a fused kernel may come from: the head's backend first, then the rest of the
  // head's routing in order, so a family offering the whole chain (attention's
  // bmm+softmax+bmm) takes it over from one that offers only the head (linalg's bmm).
  std::vector<std::string> backends{np.backend};
  for (const std::string& b : routing(index))
    if (b != np.backend) backends.push_back(b);
  // The longest chain a backend offers a kernel for, and that every node's routing allows.
  for (size_t len = chain.size(); len >= 2; --len) {
    const std::vector<int32_t> part(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(len));
    const std::string op = fused_op(graph_, part);
    const std::vector<select::Candidate> offers = catalog_.kernels_for(op);
    if (offers.empty()) continue;
    ir::Node fused = fused_node(graph_, part, &producer);
    const std::vector<const DLTensor*> fused_inputs = metadata(fused.inputs);
    for (const std::string& backend : backends) {
      bool routed = true;  // ... and the chain asks one compute dtype
      for (size_t k = 1; k < len; ++k) routed &= allows(part[k], backend) && compute_of_[part[k]] == compute_of_[index];
      if (!routed) continue;
      for (const select::Candidate& c : offers) {
        if (c.backend != backend) continue;
        if (!select::dtype_mismatch(*c.def, fused_inputs).empty() || !catalog_.ask(c, fused, fused_inputs).empty())
          continue;
        np.bound = create_kernel(fused, c, fused_inputs);
        if (backend != np.backend) {
          np.selection.reason += "; '" + backend + "' offers " + op + " (" + np.backend + " does not)";
          np.selection.winner = c;
          np.backend = backend;
        }
        std::string names;
        for (size_t k = 1; k < len; ++k) {
          const ir::Node& consumer = graph_.nodes[static_cast<size_t>(part[k])];
          names += (k > 1 ? "', '" : "") + consumer.name;
          NodeDecision& folded = plan.record.nodes[static_cast<size_t>(part[k])];
          folded.folded_into = static_cast<int32_t>(index);
          folded.backend = np.backend;
          folded.selection.reason = "fused into '" + producer.name + "' (" + op + ")";
        }
        np.selection.reason += "; fused with '" + names + "' as " + op;
        np.fused = std::make_unique<ir::Node>(std::move(fused));
        np.fused_last = part.back();
        log::get().debug("{} and '{}' -> {} as {}", describe_node(index), names, np.backend, op);
        return;
      }
    }
  }
}

// A node's binding in the planning run: its bound attributes filled in and the rule's
// "@key" options added, then a kernel (selection), maybe a fused consumer, and the cost of
// the kernel that runs. Returns the node that runs (the fused one, if fused).
const ir::Node& Executor::prepare_node(size_t n, Plan& plan, const MetadataOf& metadata) {
  const ir::Node& node = graph_.nodes[n];
  NodeDecision& np = plan.record.nodes[n];
  if (ir::has_bound_attrs(node)) np.resolved = std::make_unique<ir::Node>(resolve(node, plan));
  if (const std::vector<config::RuleOption>* options = rule_options(n)) {
    if (!np.resolved) np.resolved = std::make_unique<ir::Node>(node);
    for (const config::RuleOption& o : *options) np.resolved->attrs.emplace_back("@" + o.key, option_attribute(o));
  }
  np.bf16_asked = compute_of_[n] == config::Compute::BFloat16;
  if (np.bf16_asked) {  // [precision]: the kernel reads the option, and answers in SY_ComputeReport
    if (!np.resolved) np.resolved = std::make_unique<ir::Node>(node);
    np.resolved->attrs.emplace_back("@compute", ir::Attribute::of_string("bf16"));
  }
  const ir::Node& resolved = np.resolved ? *np.resolved : node;
  bind_node(n, plan, resolved, metadata(resolved.inputs));
  try_fuse(n, plan, metadata);
  const ir::Node& run_node = np.as_run(node);
  for (ir::ValueId v : run_node.inputs) np.input_sources.push_back(v == ir::kNoValue ? "" : graph_.values[v].name);
  if (np.fused)
    for (int32_t m = static_cast<int32_t>(n); m <= np.fused_last; ++m)
      if (m == static_cast<int32_t>(n) ||
          plan.record.nodes[static_cast<size_t>(m)].folded_into == static_cast<int32_t>(n))
        np.fused_members.push_back(graph_.nodes[static_cast<size_t>(m)].name);
  // Asked of the kernel that runs (fused or not), after fusion decided.
  ask_cost(*np.bound, describe(run_node), np.backend, metadata(run_node.inputs), run_node.outputs.size());
  return run_node;
}

void Executor::log_compute(const Plan& plan) {
  if (compute_logged_) return;
  compute_logged_ = true;
  log_islands(plan, graph_);
  if (std::find(compute_of_.begin(), compute_of_.end(), config::Compute::BFloat16) == compute_of_.end()) return;
  size_t asked = 0, bf16 = 0;
  uint64_t once = 0, per_run = 0;
  std::map<std::string, std::vector<std::string>> float32_because;  // reason -> nodes
  for (size_t n = 0; n < plan.record.nodes.size(); ++n) {
    const NodeDecision& np = plan.record.nodes[n];
    if (!np.bf16_asked || !np.bound) continue;
    ++asked;
    if (np.bound->compute.code == kDLBfloat) {
      ++bf16;
      once += np.bound->compute_constant_bytes;
      per_run += np.bound->compute_converted_bytes;
      continue;
    }
    const std::string why = !np.bound->compute_note.empty() ? np.bound->compute_note
                            : np.bound->compute.lanes != 0
                                ? "its kernel computes in " + dtype_name(np.bound->compute)
                                : "plugin '" + np.backend + "' has no bfloat16 kernel for it";
    float32_because[why].push_back(graph_.nodes[n].name);
  }
  log::get().info(
      "[precision] bf16: {} of {} node(s) asked compute in bfloat16 ({} bytes of weights converted once, "
      "at most {} bytes of inputs converted per run, less what arrives in bfloat16); `switchyard plan` shows each",
      bf16, asked, once, per_run);
  for (const auto& [why, nodes] : float32_because) {
    std::string some;
    for (size_t i = 0; i < nodes.size() && i < 3; ++i) some += (i ? ", '" : "'") + nodes[i] + "'";
    if (nodes.size() > 3) some += ", ...";
    if (bf16 == 0)  // the whole policy fell back: that deserves more than info
      log::get().warn("[precision] bf16: {} node(s) compute in float32 instead: {} ({})", nodes.size(), why, some);
    else
      log::get().info("[precision] bf16: {} node(s) compute in float32 instead: {} ({})", nodes.size(), why, some);
  }
}

}  // namespace switchyard::exec
