#include "exec/executor.hpp"

#include "exec/fusion.hpp"
#include "exec/threads.hpp"

#include "loader/host_api.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <set>

namespace switchyard::exec {
namespace {

constexpr int32_t kGraphOutput = INT32_MAX;

std::string join_rejections(const std::vector<select::Rejection>& rejected) {
  if (rejected.empty()) return "no backend was asked";
  std::string text;
  for (const auto& r : rejected) text += "\n  - " + r.backend + ": " + r.reason;
  return text;
}

// SY_SupportsArgs and SY_KernelCreateArgs describe a node with the same fields.
template <typename Args>
Args node_args(SY_CallContext* call, const ir::Node& node, const std::vector<const DLTensor*>& inputs) {
  Args args{};
  args.struct_size = sizeof(args);
  args.call = call;
  args.node_name = node.name.c_str();
  args.attributes = loader::as_sdk(node.attrs);
  args.inputs = inputs.data();
  args.num_inputs = inputs.size();
  args.num_outputs = node.outputs.size();
  return args;
}

}  // namespace

BoundKernel::~BoundKernel() {
  if (instance != nullptr) kernel.def->destroy(kernel.def->context, instance);
}

std::string input_signature(const std::vector<Tensor>& inputs) {
  std::string sig;
  for (const Tensor& t : inputs) sig += dtype_name(t.dtype()) + shape_string(t.shape()) + ";";
  return sig;
}

Executor::Executor(const ir::Graph& graph, const config::Config& config,
                   const loader::PluginManager& plugins, bool fuse)
    : graph_(graph), config_(config), plugins_(plugins), fuse_(fuse && config.fuse) {
  catalog_.kernels_for = [this](const std::string& op) {
    std::vector<select::Candidate> out;
    for (const auto& ref : plugins_.kernels_for(op))
      out.push_back(select::Candidate{ref.plugin->name(), ref.def, ref.def});
    return out;
  };
  catalog_.families_for = [this](const std::string& op) {
    std::vector<std::string> out;
    for (const auto& ref : plugins_.kernels_for(op))
      if (ref.def->family != nullptr &&
          std::find(out.begin(), out.end(), ref.def->family) == out.end())
        out.emplace_back(ref.def->family);
    return out;
  };
  catalog_.ask = [](const select::Candidate& c, const ir::Node& node,
                    const std::vector<const DLTensor*>& inputs) -> std::string {
    if (c.def->supports == nullptr) return "";
    SY_CallContext call;
    auto args = node_args<SY_SupportsArgs>(&call, node, inputs);
    SY_Status s = c.def->supports(c.def->context, &args);
    if (s == SY_OK) return "";
    if (s == SY_ERROR_UNSUPPORTED)
      return call.message.empty() ? "declined (no reason given)" : call.message;
    return "capability query failed: " + loader::describe_failure(s, call);
  };

  last_use_.assign(graph_.values.size(), -1);
  for (size_t n = 0; n < graph_.nodes.size(); ++n)
    for (ir::ValueId v : graph_.nodes[n].inputs)
      if (v != ir::kNoValue) last_use_[v] = static_cast<int32_t>(n);
  for (ir::ValueId v : graph_.outputs) last_use_[v] = kGraphOutput;
  if (fuse_) fusable_ = fusable_consumers(graph_);
  init_parallel();
}

std::string Executor::describe_node(size_t index) const { return describe(graph_.nodes[index]); }

std::string Executor::describe(const ir::Node& node) const {
  std::string text = "node '" + node.name + "' (op " + node.op;
  if (!node.module_path.empty()) text += ", module " + node.module_path;
  return text + ")";
}

void Executor::check_inputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != graph_.inputs.size())
    throw Error(ErrorKind::Input, "the model takes " + std::to_string(graph_.inputs.size()) +
                                      " input(s), got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& decl = graph_.values[graph_.inputs[i]];
    const Tensor& t = inputs[i];
    const std::string which = "input " + std::to_string(i) + " '" + decl.name + "'";
    if (!t.defined()) throw Error(ErrorKind::Input, which + " is an undefined tensor");
    if (t.device().device_type != kDLCPU)
      throw Error(ErrorKind::Input, which + " must be a CPU tensor");
    if (!same_dtype(t.dtype(), decl.dtype))
      throw Error(ErrorKind::Input, which + ": expected dtype " + dtype_name(decl.dtype) +
                                        ", got " + dtype_name(t.dtype()));
    if (decl.shape.empty()) continue;  // shape not declared: anything goes
    bool ok = decl.shape.size() == t.shape().size();
    for (size_t d = 0; ok && d < decl.shape.size(); ++d)
      ok = decl.shape[d] < 0 || decl.shape[d] == t.shape()[d];
    if (!ok)
      throw Error(ErrorKind::Input, which + ": expected shape " + shape_string(decl.shape) +
                                        " (-1 = any size), got " + shape_string(t.shape()));
  }
}

Plan& Executor::plan_for(const std::string& signature) {
  auto& slot = plans_[signature];
  if (!slot) {
    slot = std::make_unique<Plan>();
    slot->nodes.resize(graph_.nodes.size());
  }
  return *slot;
}

const Plan* Executor::cached_plan(const std::vector<Tensor>& inputs) const {
  std::lock_guard<std::mutex> lock(plans_mutex_);
  auto it = plans_.find(input_signature(inputs));
  return (it != plans_.end() && it->second->complete) ? it->second.get() : nullptr;
}

void Executor::bind_node(size_t index, NodePlan& np, const std::vector<const DLTensor*>& inputs) {
  const ir::Node& node = graph_.nodes[index];
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

  SY_CallContext call;
  auto args = node_args<SY_KernelCreateArgs>(&call, node, inputs);
  SY_Status s = def->create(def->context, &args);
  if (s != SY_OK)
    throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend +
                                       "' failed to create its kernel: " + loader::describe_failure(s, call));
  bound->instance = args.instance;

  if (def->infer != nullptr) {  // required for host-allocated outputs; a promise otherwise
    bound->output_descs.assign(node.outputs.size(), SY_TensorDesc{});
    for (auto& d : bound->output_descs) d.struct_size = sizeof(SY_TensorDesc);
    SY_KernelInferArgs infer{};
    infer.struct_size = sizeof(infer);
    infer.call = &call;
    infer.instance = bound->instance;
    infer.inputs = inputs.data();
    infer.num_inputs = inputs.size();
    infer.outputs = bound->output_descs.data();
    infer.num_outputs = bound->output_descs.size();
    s = def->infer(def->context, &infer);
    if (s != SY_OK)
      throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend +
                                         "' could not infer output shapes: " + loader::describe_failure(s, call));
    for (const auto& d : bound->output_descs)
      if (d.ndim < 0 || d.ndim > SY_MAX_DIMS)
        throw Error(ErrorKind::Kernel, describe(node) + ": plugin '" + winner.backend +
                                           "' inferred an output with " + std::to_string(d.ndim) + " dimensions");
  }
  return bound;
}

void Executor::try_fuse(size_t index, Plan& plan, const std::vector<const DLTensor*>& inputs) {
  NodePlan& np = plan.nodes[index];
  const int32_t next = fuse_ ? fusable_[index] : -1;
  if (next < 0) return;
  const ir::Node& producer = graph_.nodes[index];
  const ir::Node& consumer = graph_.nodes[next];
  const std::string op = fused_op(producer, consumer);
  const std::vector<select::Candidate> offers = catalog_.kernels_for(op);
  if (offers.empty()) return;
  // The consumer's own routing (its rule, else the default list) must allow this backend.
  std::vector<std::string> families;
  if (catalog_.families_for) families = catalog_.families_for(consumer.op);
  const int rule = select::match_rule(config_, consumer, families);
  const std::vector<std::string>& allowed = rule >= 0 ? config_.rules[rule].backends : config_.default_backends;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), np.backend) == allowed.end()) return;

  ir::Node fused = fused_node(producer, consumer);
  std::vector<const DLTensor*> fused_inputs = inputs;
  for (size_t i = 1; i < consumer.inputs.size(); ++i) {
    const ir::ValueId v = consumer.inputs[i];
    fused_inputs.push_back(v == ir::kNoValue ? nullptr : &graph_.values[v].constant.dl());
  }
  for (const select::Candidate& c : offers) {
    if (c.backend != np.backend) continue;
    if (!select::dtype_mismatch(*c.def, fused_inputs).empty() || !catalog_.ask(c, fused, fused_inputs).empty()) continue;
    np.bound = create_kernel(fused, c, fused_inputs);
    np.selection.reason += "; fused with '" + consumer.name + "' as " + op;
    np.fused = std::make_unique<ir::Node>(std::move(fused));
    NodePlan& folded = plan.nodes[next];
    folded.folded_into = static_cast<int32_t>(index);
    folded.backend = np.backend;
    folded.selection.reason = "fused into '" + producer.name + "' (" + op + ")";
    log::get().debug("{} and {} -> {} as {}", describe_node(index), describe_node(next), np.backend, op);
    return;
  }
}

// Cheap checks after every kernel: a broken plugin is reported, never passed on.
void Executor::check_outputs(size_t n, const NodePlan& np, const std::vector<Tensor>& outs) const {
  const BoundKernel& bk = *np.bound;
  auto fail = [&](size_t o, const std::string& what) {
    throw Error(ErrorKind::Kernel, describe_node(n) + ": plugin '" + np.backend + "' " + what +
                                       " (output " + std::to_string(o) + ")");
  };
  for (size_t o = 0; o < outs.size(); ++o) {
    const DLTensor& dl = outs[o].dl();
    if (dl.device.device_type != kDLCPU) fail(o, "produced a tensor on a non-CPU device");
    if (dl.ndim < 0 || dl.ndim > SY_MAX_DIMS) fail(o, "produced a tensor with " + std::to_string(dl.ndim) + " dimensions");
    if (dl.data == nullptr && outs[o].numel() > 0) fail(o, "produced a tensor with no data");
    if (bk.output_descs.empty()) continue;
    const SY_TensorDesc& want = bk.output_descs[o];
    // Compared in place: this runs after every node, and vectors would cost two allocations.
    if (!same_dtype(dl.dtype, want.dtype) || dl.ndim != want.ndim || !std::equal(want.shape, want.shape + want.ndim, dl.shape))
      fail(o, "produced " + dtype_name(dl.dtype) + " " + shape_string({dl.shape, dl.shape + dl.ndim}) +
                  " but its infer promised " + dtype_name(want.dtype) + " " +
                  shape_string({want.shape, want.shape + want.ndim}));
  }
}

void Executor::check_finite(size_t n, const NodePlan& np, const std::vector<Tensor>& outs) const {
  for (size_t o = 0; o < outs.size(); ++o) {
    const Tensor t = outs[o].contiguous();
    const DLDataType d = t.dtype();
    int64_t bad = -1;
    if (d.code == kDLFloat && d.bits == 32) {
      const float* p = t.data<float>();
      for (int64_t i = 0, e = t.numel(); i < e && bad < 0; ++i) bad = std::isfinite(p[i]) ? -1 : i;
    } else if (d.code == kDLFloat && d.bits == 64) {
      const double* p = t.data<double>();
      for (int64_t i = 0, e = t.numel(); i < e && bad < 0; ++i) bad = std::isfinite(p[i]) ? -1 : i;
    }
    if (bad >= 0)
      throw Error(ErrorKind::Kernel, "check-finite: " + describe_node(n) + " on plugin '" + np.backend +
                                         "' is the first node to produce a non-finite value (output " +
                                         std::to_string(o) + ", element " + std::to_string(bad) + ")");
  }
}

std::vector<NodeProfile> Executor::make_profile(const Plan& plan, const std::vector<int64_t>& end_ns,
                                                const std::vector<int64_t>* start_ns,
                                                const std::vector<int32_t>* lanes) const {
  std::vector<NodeProfile> out;
  int64_t start = 0;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    if (end_ns[n] < 0) continue;  // not run (e.g. folded into another node)
    if (start_ns != nullptr) start = (*start_ns)[n];
    const ir::Node& node = plan.nodes[n].fused ? *plan.nodes[n].fused : graph_.nodes[n];
    out.push_back(NodeProfile{node.name, node.op, plan.nodes[n].backend, node.module_path, start * 1e-6,
                              (end_ns[n] - start) * 1e-6, lanes != nullptr ? (*lanes)[n] : 0});
    start = end_ns[n];
  }
  return out;
}

void Executor::invoke(size_t n, const NodePlan& np, const ir::Node& node, const std::vector<const DLTensor*>& in_ptrs,
                      const std::vector<Tensor>& live, bool check_finite_outputs, Scratch& scratch,
                      std::vector<Tensor>& outs, const RunArena* arena) const {
  const BoundKernel& bk = *np.bound;
  const SY_KernelDef* def = bk.kernel.def;
  const size_t num_out = node.outputs.size();
  std::vector<DLManagedTensor*>& produced = scratch.produced;

  SY_CallContext call;
  SY_KernelRunArgs args{};
  args.struct_size = sizeof(args);
  args.call = &call;
  args.instance = bk.instance;
  args.inputs = in_ptrs.data();
  args.num_inputs = in_ptrs.size();
  args.num_outputs = num_out;
  outs.clear();
  produced.clear();
  if (def->output_mode == SY_OUTPUT_HOST_ALLOCATED) {
    scratch.out_ptrs.clear();
    for (size_t o = 0; o < num_out; ++o) {
      const SY_TensorDesc& d = bk.output_descs[o];
      std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
      const int64_t offset = arena != nullptr ? arena->plan->offset[node.outputs[o]] : -1;
      if (offset >= 0)  // the run's arena buffer outlives every tensor placed in it
        outs.push_back(Tensor::from_blob(arena->buffer->data + offset, d.dtype, std::move(shape), {},
                                         [keep = arena->buffer] {}));
      else
        outs.push_back(Tensor::uninitialized(d.dtype, std::move(shape)));
      scratch.out_ptrs.push_back(const_cast<DLTensor*>(&outs.back().dl()));
    }
    args.outputs = scratch.out_ptrs.data();
  } else {
    produced.assign(num_out, nullptr);
    args.produced = produced.data();
  }

  SY_Status s = def->run(def->context, &args);
  if (s != SY_OK) {
    for (DLManagedTensor* m : produced)  // hand back anything produced before the failure
      if (m != nullptr && m->deleter != nullptr) m->deleter(m);
    throw Error(ErrorKind::Kernel, describe_node(n) + " failed in plugin '" + np.backend +
                                       "': " + loader::describe_failure(s, call));
  }
  if (def->output_mode == SY_OUTPUT_KERNEL_ALLOCATED) {
    for (size_t o = 0; o < num_out; ++o) {
      if (produced[o] == nullptr) {
        for (DLManagedTensor* m : produced)
          if (m != nullptr && m->deleter != nullptr) m->deleter(m);
        throw Error(ErrorKind::Kernel, describe_node(n) + ": plugin '" + np.backend +
                                           "' returned OK but produced no tensor for output " + std::to_string(o));
      }
      Tensor t = Tensor::adopt(produced[o], bk.kernel.plugin);
      produced[o] = nullptr;
      // A view of an input keeps that input's memory alive as long as it lives.
      for (size_t i = 0; i < in_ptrs.size(); ++i) {
        if (in_ptrs[i] == nullptr || t.numel() == 0) continue;
        ir::ValueId v = node.inputs[i];
        const Tensor& src = graph_.values[v].kind == ir::ValueKind::Constant ? graph_.values[v].constant : live[v];
        if (points_into(t.raw_data(), src)) t.keep_alive(src.owner());
      }
      if (arena != nullptr && t.numel() > 0 && arena->contains(t.raw_data())) t = guard_arena_view(np, node, o, std::move(t), *arena, live);
      outs.push_back(std::move(t));
    }
  }
  check_outputs(n, np, outs);
  if (check_finite_outputs) check_finite(n, np, outs);
}

void Executor::gather(const ir::Node& node, const std::vector<Tensor>& live, bool keep_tensors,
                      std::vector<const DLTensor*>& in_ptrs, std::vector<Tensor>& in_tensors) const {
  in_ptrs.clear();
  in_tensors.clear();
  for (ir::ValueId v : node.inputs) {
    if (v == ir::kNoValue) {
      in_ptrs.push_back(nullptr);
      if (keep_tensors) in_tensors.emplace_back();
      continue;
    }
    const Tensor& t = graph_.values[v].kind == ir::ValueKind::Constant ? graph_.values[v].constant : live[v];
    in_ptrs.push_back(&t.dl());
    if (keep_tensors) in_tensors.push_back(t);
  }
}

RunResult Executor::run(const std::vector<Tensor>& inputs, const RunOptions& options) {
  check_inputs(inputs);
  const std::string signature = input_signature(inputs);

  // A complete plan runs lock-free; building one holds the lock for the whole run.
  std::unique_lock<std::mutex> lock(plans_mutex_);
  Plan& plan = plan_for(signature);
  if (plan.complete) lock.unlock();
  if (plan.complete && plan.schedule) return run_parallel(plan, inputs, options);  // the planning run is sequential
  if (deterministic_threads_ > 0) set_this_thread_openmp(deterministic_threads_);  // whichever thread calls

  // Declared before every tensor of the run, so that it outlives them all.
  const size_t heap_base = options.measure_memory ? heap_bytes_in_use() : 0;
  RunArena arena;
  const bool use_arena = plan.complete && plan.arena && options.capture == Capture::None && options.callback == nullptr;
  if (use_arena) {
    arena.plan = &plan.memory;
    arena.lives = &plan.lives;
    arena.bytes = plan.memory.arena_bytes;
    // A measured run takes a fresh buffer, so that the arena is among the bytes it counts.
    arena.buffer = options.measure_memory ? std::make_shared<ArenaPool::Buffer>(arena.bytes) : plan.arena->acquire();
  }
  const bool planning = lock.owns_lock();

  RunResult result;
  result.stats.arena_bytes = use_arena ? arena.bytes : 0;
  std::vector<Tensor> live(graph_.values.size());
  size_t live_count = 0, live_bytes = 0;
  auto hold = [&](ir::ValueId v, Tensor t) {
    live_bytes += t.nbytes();
    ++live_count;
    live[v] = std::move(t);
    result.stats.peak_live_tensors = std::max(result.stats.peak_live_tensors, live_count);
    result.stats.peak_live_bytes = std::max(result.stats.peak_live_bytes, live_bytes);
  };
  for (size_t i = 0; i < inputs.size(); ++i) hold(graph_.inputs[i], inputs[i]);

  std::vector<const DLTensor*> in_ptrs;
  std::vector<Tensor> in_tensors, out_tensors;
  Scratch scratch;
  const bool keep_inputs = options.capture == Capture::All || options.callback != nullptr;
  // Profiling: one clock read at the end of each node; nothing when off.
  using Clock = std::chrono::steady_clock;
  std::vector<int64_t> end_ns;
  Clock::time_point run_start;
  if (options.profile) {
    end_ns.assign(graph_.nodes.size(), -1);
    run_start = Clock::now();
  }

  auto gather_inputs = [&](const ir::Node& node) { gather(node, live, keep_inputs, in_ptrs, in_tensors); };

  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    NodePlan& np = plan.nodes[n];
    if (np.folded_into >= 0) continue;  // ran inside its producer's fused kernel
    gather_inputs(np.fused ? *np.fused : graph_.nodes[n]);
    if (!np.bound) {
      bind_node(n, np, in_ptrs);
      try_fuse(n, plan, in_ptrs);
      if (np.fused) gather_inputs(*np.fused);
    }
    const ir::Node& node = np.fused ? *np.fused : graph_.nodes[n];
    const size_t num_out = node.outputs.size();
    invoke(n, np, node, in_ptrs, live, options.check_finite, scratch, out_tensors, use_arena ? &arena : nullptr);
    if (planning) record_lives(n, np, node, out_tensors, live, plan);
    if (options.measure_memory) {  // now: its outputs exist and its inputs are not yet freed
      const size_t in_use = heap_bytes_in_use();
      if (in_use > heap_base) result.stats.measured_peak_bytes = std::max(result.stats.measured_peak_bytes, in_use - heap_base);
    }

    for (size_t o = 0; o < num_out; ++o)  // outputs nobody reads are dropped at once
      if (last_use_[node.outputs[o]] != -1) hold(node.outputs[o], out_tensors[o]);
    ++result.stats.nodes_run;

    if (options.callback != nullptr && *options.callback) {
      NodeEvent ev{node.name, node.op, np.backend, node.module_path, in_tensors, out_tensors};
      (*options.callback)(ev);
    }
    if (options.capture != Capture::None) {
      NodeIO io;
      io.node = node.name;
      io.op = node.op;
      io.backend = np.backend;
      io.module_path = node.module_path;
      for (ir::ValueId v : node.inputs) io.input_sources.push_back(v == ir::kNoValue ? "" : graph_.values[v].name);
      if (options.capture == Capture::All) io.inputs = in_tensors;
      io.outputs = out_tensors;
      result.node_io.push_back(std::move(io));
    }

    // Free each input whose last consumer was this node (captured copies keep theirs).
    for (ir::ValueId v : node.inputs) {
      if (v == ir::kNoValue || last_use_[v] != static_cast<int32_t>(n) || !live[v].defined()) continue;
      live_bytes -= live[v].nbytes();
      --live_count;
      live[v] = Tensor();
    }
    if (options.profile)
      end_ns[n] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - run_start).count();
  }
  if (options.profile) result.profile = make_profile(plan, end_ns);
  if (planning) {  // only the planning run (others read these under the lock)
    if (parallel_) plan.schedule = std::make_unique<Schedule>(make_schedule(plan));
    finish_memory_plan(plan);
    plan.complete = true;
  }

  for (ir::ValueId v : graph_.outputs) {
    const ir::Value& val = graph_.values[v];
    result.outputs.push_back(val.kind == ir::ValueKind::Constant ? val.constant : live[v]);
  }
  if (use_arena && !options.measure_memory) {  // every tensor in it is gone: the next run may take it
    live.clear();
    in_tensors.clear();
    out_tensors.clear();
    plan.arena->release(std::move(arena.buffer));
  }
  return result;
}

}  // namespace switchyard::exec
