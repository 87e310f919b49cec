// The planning run: the first run of an input-shape signature decides as it goes. Per
// node, in graph order: a sym:: node is evaluated by the host; any other node gets its
// bound attributes filled in, a backend (selection), maybe a fused consumer, a kernel
// instance, and its storages; then it runs through the same per-node step as every later
// run, with conversions wherever a kernel cannot read a value where it is. What each value
// turned out to be (dtype, shape, owner) is recorded for finalize.cpp.
#include "exec/executor.hpp"

#include "exec/fusion.hpp"
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
  args.struct_size = std::is_same_v<Args, SY_SupportsArgs> ? SY_SupportsArgs_STRUCT_SIZE : SY_KernelCreateArgs_STRUCT_SIZE;
  args.call = call;
  args.node_name = node.name.c_str();
  args.attributes = loader::as_sdk(node.attrs);
  args.inputs = inputs.data();
  args.num_inputs = inputs.size();
  args.num_outputs = node.outputs.size();
  return args;
}

// Ops whose result is not a function of their inputs: never folded into constants.
bool is_random_op(const std::string& op) {
  for (const char* word : {"rand", "bernoulli", "dropout", "normal", "uniform", "multinomial", "poisson", "empty"})
    if (op.find(word) != std::string::npos) return true;
  return false;
}

// The lowest plugin storage in a mask (bit k + 1 is storage k), or -1.
SY_StorageIndex lowest_storage(SY_StorageMask mask) {
  for (SY_StorageIndex k = 0; k < 31; ++k)
    if (mask & SY_STORAGE_MASK(k)) return k;
  return SY_STORAGE_HOST;
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
  if (s != SY_OK) problem = "its kernel's cost failed: " + loader::describe_failure(s, call);
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
    if (attr.bound()) attr = ir::bind_scalar(plan.scalars[static_cast<size_t>(attr.ref)], attr.kind, node, name);
  return out;
}

const std::vector<config::RuleOption>* Executor::rule_options(const ir::Node& node) const {
  bool any = false;
  for (const config::Rule& r : config_.rules) any = any || !r.options.empty();
  if (!any) return nullptr;
  std::vector<std::string> families;
  if (catalog_.families_for) families = catalog_.families_for(node.op);
  const int rule = select::match_rule(config_, node, families);
  return rule >= 0 && !config_.rules[static_cast<size_t>(rule)].options.empty() ? &config_.rules[static_cast<size_t>(rule)].options
                                                                               : nullptr;
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
  NodePlan& np = plan.nodes[index];
  np.selection = select::select_kernel(config_, catalog_, node, inputs);
  if (!np.selection.winner) {
    std::string asked = config_.strict ? " (strict mode: the first rejection is final)" : "";
    throw Error(ErrorKind::Unsupported, "no backend can run " + describe_node(index) + asked +
                                            "; backends asked:" + join_rejections(np.selection.rejected));
  }
  np.backend = np.selection.winner->backend;
  np.bound = create_kernel(node, *np.selection.winner, inputs);
  log::get().debug("{} -> {} ({})", describe_node(index), np.backend, np.selection.reason);
}

std::unique_ptr<BoundKernel> Executor::create_kernel(const ir::Node& node, const select::Candidate& winner,
                                                     const std::vector<const DLTensor*>& inputs) const {
  const auto* def = winner.def;
  auto bound = std::make_unique<BoundKernel>();
  bound->kernel.def = def;
  bound->kernel.plugin = plugins_.find(winner.backend);
  auto fail = [&](const std::string& what, SY_Status s, const SY_CallContext& call) {
    throw Error(s == SY_ERROR_OUT_OF_MEMORY ? ErrorKind::OutOfMemory : ErrorKind::Kernel,
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
    s = def->storage(def->context, &st);
    if (s != SY_OK) fail("could not say which storages its kernel reads and writes", s, call);
    const size_t declared = bound->kernel.plugin->table().struct_size >= offsetof(SY_Plugin, num_storages) + sizeof(size_t)
                                ? bound->kernel.plugin->table().num_storages
                                : 0;
    const SY_StorageMask valid = static_cast<SY_StorageMask>((uint64_t{2} << declared) - 1);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (bound->input_reads[i] == 0 || (bound->input_reads[i] & ~valid))
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend + "' says input " +
                                           std::to_string(i) + " reads storage mask " +
                                           std::to_string(bound->input_reads[i]) + ", which names no storage it declares");
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (bound->output_writes[o] == 0 || (bound->output_writes[o] & ~valid))
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend + "' says output " +
                                           std::to_string(o) + " writes storage mask " +
                                           std::to_string(bound->output_writes[o]) + ", which names no storage it declares");
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
  NodePlan& np = plan.nodes[index];
  if (!fuse_ || fusable_[index] < 0) return;
  const ir::Node& producer = np.as_run(graph_.nodes[index]);
  const std::vector<int32_t> chain = fusion_chain(graph_, fusable_, index);
  // A node's routing: its rule's backends, else the default list (empty: any backend).
  auto routing = [&](const ir::Node& node) -> const std::vector<std::string>& {
    std::vector<std::string> families;
    if (catalog_.families_for) families = catalog_.families_for(node.op);
    const int rule = select::match_rule(config_, node, families);
    return rule >= 0 ? config_.rules[static_cast<size_t>(rule)].backends : config_.default_backends;
  };
  auto allows = [&](const ir::Node& node, const std::string& backend) {
    const std::vector<std::string>& allowed = routing(node);
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), backend) != allowed.end();
  };
  // Where a fused kernel may come from: the head's backend first, then the rest of the
  // head's routing in order, so a family offering the whole chain (attention's
  // bmm+softmax+bmm) takes it over from one that offers only the head (linalg's bmm).
  std::vector<std::string> backends{np.backend};
  for (const std::string& b : routing(graph_.nodes[index]))
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
      bool routed = true;
      for (size_t k = 1; k < len; ++k) routed &= allows(graph_.nodes[static_cast<size_t>(part[k])], backend);
      if (!routed) continue;
      for (const select::Candidate& c : offers) {
        if (c.backend != backend) continue;
        if (!select::dtype_mismatch(*c.def, fused_inputs).empty() || !catalog_.ask(c, fused, fused_inputs).empty()) continue;
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
          NodePlan& folded = plan.nodes[static_cast<size_t>(part[k])];
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

namespace {

// The planning run's bookkeeping: where each value is, and its converted copies.
struct Planning {
  std::vector<int32_t> where;                          // per value: the storage of slot v
  std::map<std::pair<int32_t, int32_t>, int32_t> copies;  // (value, storage) -> slot
  std::vector<std::vector<int32_t>> slots_of;          // per value: its copies' slots
  std::vector<char> shape_read;                        // per value: a sym node read its shape
  std::vector<DLTensor> proxies;                       // metadata of values not in host memory
};

}  // namespace

RunResult Executor::plan_and_run(Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) {
  const size_t num_values = graph_.values.size();
  plan.nodes.resize(graph_.nodes.size());
  plan.scalars.resize(num_values);
  plan.value_fixed.resize(num_values);
  plan.infos.resize(num_values);
  RunResult result;
  RunState st;
  begin_run(plan, inputs, options, st, result);
  st.slots.resize(num_values);
  for (size_t i = 0; i < inputs.size(); ++i) {
    st.slots[static_cast<size_t>(graph_.inputs[i])] = inputs[i];
    st.held(inputs[i]);
    ValueInfo& info = plan.infos[static_cast<size_t>(graph_.inputs[i])];
    info.dtype = inputs[i].dtype();
    info.shape = inputs[i].shape();
  }
  Planning pl;
  pl.where.assign(num_values, kHost);
  pl.slots_of.resize(num_values);
  pl.shape_read.assign(num_values, 0);
  Scratch scratch;
  std::vector<Step>& steps = plan.planning_steps;

  auto tensor_of = [&](ir::ValueId v) -> const Tensor& {
    const ir::Value& val = graph_.values[static_cast<size_t>(v)];
    if (val.kind == ir::ValueKind::Constant) return val.constant;
    if (plan.value_fixed[static_cast<size_t>(v)].fixed != nullptr) return *plan.value_fixed[static_cast<size_t>(v)].fixed;
    return st.slots[static_cast<size_t>(v)];
  };
  auto storage_of = [&](ir::ValueId v) {
    const ir::Value& val = graph_.values[static_cast<size_t>(v)];
    if (val.kind == ir::ValueKind::Constant || plan.value_fixed[static_cast<size_t>(v)].fixed != nullptr) return kHost;
    return pl.where[static_cast<size_t>(v)];
  };
  // Metadata a kernel is asked about (sdk.h: data only for constants): a constant itself; a
  // run-time value in host memory without its data, else a plain-host description of it
  // (device kCPU, compact, no data): where it lives is storage's business. With the
  // planning run's data, kernels kept run-time weights as constants.
  auto metadata = [&](const std::vector<ir::ValueId>& ids) {
    std::vector<const DLTensor*> out;
    pl.proxies.clear();
    pl.proxies.reserve(ids.size());
    for (ir::ValueId v : ids) {
      if (v == ir::kNoValue) {
        out.push_back(nullptr);
        continue;
      }
      const Tensor& t = tensor_of(v);
      const bool host = storage_of(v) == kHost;
      if (host && (graph_.values[static_cast<size_t>(v)].kind == ir::ValueKind::Constant ||
                   plan.value_fixed[static_cast<size_t>(v)].fixed != nullptr)) {
        out.push_back(&t.dl());
        continue;
      }
      DLTensor proxy = t.dl();
      proxy.data = nullptr;
      proxy.byte_offset = 0;
      if (!host) {
        proxy.device = DLDevice{kDLCPU, 0};
        proxy.strides = nullptr;
      }
      pl.proxies.push_back(proxy);
      out.push_back(&pl.proxies.back());
    }
    return out;
  };
  // Runs a conversion step now and returns the slot holding value v in storage `to`.
  std::function<int32_t(ir::ValueId, int32_t, int32_t)> copy_to = [&](ir::ValueId v, int32_t to, int32_t reader) -> int32_t {
    const int32_t from = pl.where[static_cast<size_t>(v)];
    if (from == to) return v;
    auto found = pl.copies.find({v, to});
    if (found != pl.copies.end()) return found->second;
    const int32_t src = from != kHost && to != kHost ? copy_to(v, kHost, reader) : v;
    Step c;
    c.kind = Step::Kind::Convert;
    c.node = reader;
    c.src = src;
    c.from = src == v ? from : kHost;
    c.to = to;
    c.value = v;
    c.dst = static_cast<int32_t>(st.slots.size());
    st.slots.emplace_back();
    steps.push_back(c);
    run_step(steps.back(), steps.size() - 1, st, scratch);
    pl.copies[{v, to}] = c.dst;
    pl.slots_of[static_cast<size_t>(v)].push_back(c.dst);
    return c.dst;
  };
  auto free_slot = [&](int32_t slot) {
    Tensor& t = st.slots[static_cast<size_t>(slot)];
    if (!t.defined()) return;
    st.dropped(t);
    t = Tensor();
  };
  auto free_value = [&](ir::ValueId v) {
    free_slot(v);
    for (int32_t s : pl.slots_of[static_cast<size_t>(v)]) free_slot(s);
  };

  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    const ir::Node& node = graph_.nodes[n];
    NodePlan& np = plan.nodes[n];
    if (np.folded_into >= 0) continue;  // runs inside its producer's fused kernel

    if (ir::is_sym_op(node.op)) {  // the host's own shape arithmetic
      np.backend = "host";
      np.selection.reason = "sym op: evaluated by the host once per input-shape signature";
      std::vector<ir::SymArg> args;
      std::vector<Tensor> host_copies;
      host_copies.reserve(node.inputs.size());
      for (ir::ValueId v : node.inputs) {
        if (graph_.values[static_cast<size_t>(v)].type == ir::ValueType::Scalar) {
          args.push_back(ir::SymArg{&plan.scalars[static_cast<size_t>(v)], nullptr});
          continue;
        }
        if (graph_.values[static_cast<size_t>(v)].kind == ir::ValueKind::NodeOutput &&
            plan.value_fixed[static_cast<size_t>(v)].fixed == nullptr)
          pl.shape_read[static_cast<size_t>(v)] = 1;
        const Tensor& t = tensor_of(v);
        host_copies.push_back(node.op == "sym::item" ? storages_.to_host(storage_of(v), t, "value '" + graph_.values[v].name + "'") : t);
        args.push_back(ir::SymArg{nullptr, &host_copies.back()});
      }
      const ir::ValueId out = node.outputs[0];
      if (node.op == "sym::tensor") {
        plan.fixed.push_back(ir::eval_sym_tensor(node, *args[0].scalar));
        plan.value_fixed[static_cast<size_t>(out)] = InputRef{-1, &plan.fixed.back(), kHost};
      } else {
        plan.scalars[static_cast<size_t>(out)] = ir::eval_sym(node, args);
      }
      for (ir::ValueId v : node.inputs)
        if (last_use_[static_cast<size_t>(v)] == static_cast<int32_t>(n) && graph_.values[v].kind == ir::ValueKind::NodeOutput) free_value(v);
      continue;
    }

    if (ir::has_bound_attrs(node)) np.resolved = std::make_unique<ir::Node>(resolve(node, plan));
    if (const std::vector<config::RuleOption>* options = rule_options(node)) {  // "@key" attributes
      if (!np.resolved) np.resolved = std::make_unique<ir::Node>(node);
      for (const config::RuleOption& o : *options) np.resolved->attrs.emplace_back("@" + o.key, option_attribute(o));
    }
    const ir::Node& resolved = np.resolved ? *np.resolved : node;
    {
      const std::vector<const DLTensor*> meta = metadata(resolved.inputs);
      bind_node(n, plan, resolved, meta);
      try_fuse(n, plan, metadata);
    }
    const ir::Node& run_node = np.as_run(node);
    // Asked of the kernel that runs (fused or not), after fusion decided.
    ask_cost(*np.bound, describe(run_node), np.backend, metadata(run_node.inputs), run_node.outputs.size());
    const BoundKernel& bk = *np.bound;
    const loader::LoadedPlugin* plugin = bk.kernel.plugin.get();
    const int32_t end = np.fused ? np.fused_last : static_cast<int32_t>(n);  // the last node it runs

    Step s;
    s.kind = Step::Kind::Kernel;
    s.node = static_cast<int32_t>(n);
    s.run_node = &run_node;
    s.kernel = &bk;
    s.backend = &np.backend;
    s.pass_storages = SY_STRUCT_HAS(bk.kernel.def, SY_KernelDef, storage) && bk.kernel.def->storage != nullptr;
    for (size_t i = 0; i < run_node.inputs.size(); ++i) {
      const ir::ValueId v = run_node.inputs[i];
      if (v == ir::kNoValue) {
        s.inputs.push_back(InputRef{});
        s.input_storage.push_back(SY_STORAGE_HOST);
        continue;
      }
      const int32_t cur = storage_of(v);
      const SY_StorageIndex local = storages_.local_of(cur, plugin);
      const SY_StorageMask reads = bk.input_reads[i];
      const bool direct = local == SY_STORAGE_HOST ? (reads & SY_STORAGE_MASK_HOST) != 0
                                                   : local >= 0 && (reads & SY_STORAGE_MASK(local)) != 0;
      if (direct) {
        const Tensor& t = tensor_of(v);
        s.inputs.push_back(&t == &st.slots[static_cast<size_t>(v)] ? InputRef{v, nullptr, cur} : InputRef{-1, &t, cur});
        s.input_storage.push_back(local);
        continue;
      }
      const int32_t to = (reads & SY_STORAGE_MASK_HOST) ? kHost : storages_.id_of(plugin, lowest_storage(reads));
      if (storage_of(v) == kHost && &tensor_of(v) != &st.slots[static_cast<size_t>(v)]) {
        // A constant (or sym::tensor) this kernel reads elsewhere: converted once, here.
        const Tensor*& copy = plan.fixed_copies[{v, to}];
        if (copy == nullptr) {
          plan.fixed.push_back(storages_.from_host(to, tensor_of(v), "constant '" + graph_.values[v].name + "'"));
          copy = &plan.fixed.back();
        }
        s.inputs.push_back(InputRef{-1, copy, to});
      } else {
        s.inputs.push_back(InputRef{copy_to(v, to, static_cast<int32_t>(n)), nullptr, to});
      }
      s.input_storage.push_back(storages_.local_of(to, plugin));
    }
    for (size_t o = 0; o < run_node.outputs.size(); ++o) {
      const ir::ValueId v = run_node.outputs[o];
      const SY_StorageMask writes = bk.output_writes[o];
      OutputPlan out;
      out.storage = (writes & SY_STORAGE_MASK_HOST) ? kHost : storages_.id_of(plugin, lowest_storage(writes));
      out.local = storages_.local_of(out.storage, plugin);
      out.slot = v;  // kept for recording; freed below if nobody reads it
      s.outputs.push_back(out);
      pl.where[static_cast<size_t>(v)] = out.storage;
    }
    // A node of constants alone (a weight's transpose, a mask built from sizes) is
    // computed here, once per plan, and its outputs kept as constants.
    bool fold = !is_random_op(run_node.op);
    for (const InputRef& r : s.inputs) fold = fold && (r.absent() || r.fixed != nullptr);
    for (const OutputPlan& o : s.outputs) fold = fold && o.storage == kHost;
    steps.push_back(std::move(s));
    run_step(steps.back(), steps.size() - 1, st, scratch);
    if (fold) {
      steps.back().folded = true;
      for (ir::ValueId v : run_node.outputs) {
        plan.fixed.push_back(st.slots[static_cast<size_t>(v)]);
        plan.value_fixed[static_cast<size_t>(v)] = InputRef{-1, &plan.fixed.back(), kHost};
        free_slot(v);
      }
      continue;
    }
    for (size_t o = 0; o < run_node.outputs.size(); ++o) {
      const ir::ValueId v = run_node.outputs[o];
      ValueInfo& info = plan.infos[static_cast<size_t>(v)];
      const Tensor& t = st.slots[static_cast<size_t>(v)];
      info.dtype = t.dtype();
      info.shape = t.shape();
      info.produced = true;
      info.host_allocated = bk.kernel.def->output_mode == SY_OUTPUT_HOST_ALLOCATED;
      if (!info.host_allocated && t.numel() > 0 && storage_of(v) == kHost)
        for (ir::ValueId in : run_node.inputs) {  // a kernel's output may be a view of an input
          if (in == ir::kNoValue || storage_of(in) != kHost || !points_into(t.raw_data(), tensor_of(in))) continue;
          info.view_of = graph_.values[static_cast<size_t>(in)].kind == ir::ValueKind::NodeOutput ? in : ir::kNoValue;
          info.view_of_outside = info.view_of == ir::kNoValue;
          break;
        }
      if (last_use_[static_cast<size_t>(v)] == -1) free_slot(v);
    }
    for (ir::ValueId v : run_node.inputs)  // inputs whose last reader this was
      if (v != ir::kNoValue && graph_.values[v].kind == ir::ValueKind::NodeOutput && last_use_[v] != kForever &&
          last_use_[v] <= end && last_use_[v] >= static_cast<int32_t>(n))
        free_value(v);
  }

  for (size_t v = 0; v < num_values; ++v)
    if (pl.shape_read[v]) plan.shape_reads.push_back(static_cast<ir::ValueId>(v));
  result.outputs.clear();
  for (ir::ValueId v : graph_.outputs) {
    const ir::Value& val = graph_.values[static_cast<size_t>(v)];
    if (val.kind == ir::ValueKind::Constant) result.outputs.push_back(val.constant);
    else result.outputs.push_back(storages_.to_host(storage_of(v), tensor_of(v), "output '" + val.name + "'"));
  }
  end_run(st);
  return result;
}

}  // namespace switchyard::exec
