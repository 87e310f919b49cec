// The one per-node step every run takes, planning or not, sequential or parallel: read
// the inputs, run the kernel (or a conversion), check what it made, keep the outputs,
// then the tail: node_io record, callback, frees, profile stamp. A warm step builds no
// strings, looks nothing up by name and takes no lock.
#include "exec/runner.hpp"

#include "loader/host_api.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <cmath>
#include <cstring>

namespace switchyard::exec {
namespace {

using Clock = std::chrono::steady_clock;

int64_t since(const RunState& st) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - st.start).count();
}

// The buffer a run placed storage `id`'s arena values in, or null.
const ArenaPool::Buffer* arena_for(const RunState& st, const StorageTable& storages, int32_t id) {
  if (storages.in_host_memory(id)) return st.arena.get();  // host formats share the host arena
  const Plan& plan = *st.plan;
  for (size_t i = 0; i < plan.device_arenas.size(); ++i)
    if (plan.device_arenas[i].storage == id) return st.device_arenas.size() > i ? st.device_arenas[i].get() : nullptr;
  return nullptr;
}

void raise(std::atomic<size_t>& peak, size_t now) {
  size_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
}

}  // namespace

void RunState::held(const Tensor& t) {
  raise(peak_count, ++live_count);
  raise(peak_bytes, live_bytes += t.nbytes());
}

void RunState::dropped(const Tensor& t) {
  --live_count;
  live_bytes -= t.nbytes();
}

void Runner::begin_run(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options, RunState& st,
                       RunResult& result) const {
  st.plan = &plan;
  st.options = &options;
  st.result = &result;
  st.keep_inputs = options.capture == Capture::All || options.callback != nullptr;
  // Tensors that leave the run (node_io, callbacks) or steps that overlap would break the
  // plan's lifetimes: no arena and no in-place writes for those.
  const bool private_tensors = options.capture == Capture::None && options.callback == nullptr;
  st.in_place = plan.complete && private_tensors;
  st.heap_base = options.measure_memory ? heap_bytes_in_use() : 0;
  st.start = Clock::now();
  if (plan.complete) {
    st.slots.assign(static_cast<size_t>(plan.num_slots), Tensor());
    for (size_t i = 0; i < inputs.size(); ++i) {
      st.slots[static_cast<size_t>(plan.input_slots[i])] = inputs[i];
      st.held(inputs[i]);
    }
    if (private_tensors && plan.arena) {  // a measured run takes fresh buffers, so that the arena counts
      st.arena =
          options.measure_memory ? std::make_shared<ArenaPool::Buffer>(plan.memory.arena_bytes) : plan.arena->acquire();
      result.stats.arena_bytes = plan.memory.arena_bytes;
    }
    for (const Plan::DeviceArena& d : plan.device_arenas)
      st.device_arenas.push_back(private_tensors && d.pool ? d.pool->acquire() : nullptr);
  }
  const size_t steps = plan.complete ? plan.steps.size() : 0;
  if (options.capture != Capture::None) st.records.resize(steps);
  if (options.profile) {
    st.start_ns.assign(steps, -1);
    st.end_ns.assign(steps, -1);
    st.lanes.assign(steps, 0);
  }
}

void Runner::end_run(RunState& st) const {
  const Plan& plan = *st.plan;
  RunResult& result = *st.result;
  result.stats.nodes_run = st.nodes_run.load();
  result.stats.peak_live_tensors = st.peak_count.load();
  result.stats.peak_live_bytes = st.peak_bytes.load();
  if (st.options->capture != Capture::None)
    for (NodeIO& rec : st.records)
      if (!rec.node.empty()) result.node_io.push_back(std::move(rec));
  if (st.options->profile) {
    const std::vector<Step>& steps = plan.complete ? plan.steps : plan.record.steps;
    if (st.options->recycled_profile != nullptr) {  // a fresh block per run would cost more than the copies
      result.profile.swap(*st.options->recycled_profile);
      result.profile.clear();
    }
    result.profile.reserve(steps.size());
    for (size_t i = 0; i < steps.size() && i < st.end_ns.size(); ++i) {
      if (st.end_ns[i] < 0) continue;
      const Step& s = steps[i];
      NodeProfile p;
      if (s.kind == Step::Kind::Kernel) {
        p = NodeProfile{s.run_node->name, s.run_node->op, *s.backend, s.run_node->module_path, 0, 0, st.lanes[i]};
      } else {
        p.node = graph_.values[static_cast<size_t>(s.value)].name + " -> " + storages_.name_of(s.to);
        p.op = "convert";
        p.backend = s.to != kHost ? storages_.kind(s.to).plugin->name() : storages_.kind(s.from).plugin->name();
        p.lane = st.lanes[i];
      }
      // Sequential: a step's span starts where the one before it ended (host work included).
      const int64_t begin = st.start_ns[i] >= 0 ? st.start_ns[i] : 0;
      p.start_ms = begin * 1e-6;
      p.duration_ms = (st.end_ns[i] - begin) * 1e-6;
      result.profile.push_back(std::move(p));
    }
  }
  if (!plan.complete) return;
  for (const InputRef& r : plan.outputs)
    result.outputs.push_back(r.constant != nullptr ? *r.constant : st.slots[static_cast<size_t>(r.slot)]);
  st.slots.clear();
  // Every tensor placed in an arena is gone now: the next run may take the buffers.
  if (st.arena && !st.options->measure_memory) plan.arena->release(std::move(st.arena));
  for (size_t i = 0; i < st.device_arenas.size(); ++i)
    if (st.device_arenas[i]) plan.device_arenas[i].pool->release(std::move(st.device_arenas[i]));
}

RunResult Runner::run_sequential(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const {
  RunResult result;
  RunState st;
  // The slots and profile stamps of this thread's last run: blocks malloc would otherwise
  // take and give back on every run, and a large request after many small frees makes
  // glibc consolidate its free lists, which then costs every small allocation of the run.
  thread_local std::vector<Tensor> kept_slots;
  thread_local std::vector<int64_t> kept_start_ns, kept_end_ns;
  thread_local std::vector<int32_t> kept_lanes;
  st.slots.swap(kept_slots);
  st.start_ns.swap(kept_start_ns);
  st.end_ns.swap(kept_end_ns);
  st.lanes.swap(kept_lanes);
  begin_run(plan, inputs, options, st, result);
  Scratch scratch;
  int64_t previous_end = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (options.profile) st.start_ns[i] = previous_end;
    run_step(plan.steps[i], i, st, scratch);
    if (options.profile) previous_end = st.end_ns[i];
  }
  end_run(st);
  st.slots.swap(kept_slots);
  st.start_ns.swap(kept_start_ns);
  st.end_ns.swap(kept_end_ns);
  st.lanes.swap(kept_lanes);
  return result;
}

RunResult Runner::run(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const {
  return plan.schedule ? run_parallel(plan, inputs, options) : run_sequential(plan, inputs, options);
}

std::string Runner::describe_step(const Step& step) const {
  return describe(graph_.nodes[static_cast<size_t>(step.node)]);
}

// Out of memory anywhere in a step (host allocation, std::bad_alloc) is reported as that,
// with the node, op and plugin it happened in; zero-cost when nothing throws.
void Runner::run_step(const Step& step, size_t index, RunState& st, Scratch& sc) const {
  auto where = [&] {
    if (step.kind == Step::Kind::Convert)
      return "copying value '" + graph_.values[static_cast<size_t>(step.value)].name + "' from " +
             storages_.name_of(step.from) + " to " + storages_.name_of(step.to) + " memory";
    return describe_step(step) + " on plugin '" + *step.backend + "'";
  };
  try {
    run_step_body(step, index, st, sc);
  } catch (const Error& e) {
    // Host allocations say what and how much ("out of memory: ..."); add where.
    if (e.kind() != ErrorKind::OutOfMemory || std::strncmp(e.what(), "out of memory:", 14) != 0) throw;
    throw Error(ErrorKind::OutOfMemory, where() + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory, where() + ": out of memory: a host allocation failed (std::bad_alloc)");
  }
}

void RunState::hold(int32_t slot, Tensor t) {
  if (slot < 0) return;
  held(t);
  slots[static_cast<size_t>(slot)] = std::move(t);
}

// What every step ends with: the memory sample, the frees, the profile stamp.
void Runner::finish_step(const Step& step, size_t index, RunState& st) const {
  const RunOptions& options = *st.options;
  if (options.measure_memory) {  // now: the outputs exist and the inputs are not yet freed
    const size_t in_use = heap_bytes_in_use();
    RunStats& stats = st.result->stats;
    if (in_use > st.heap_base) stats.measured_peak_bytes = std::max(stats.measured_peak_bytes, in_use - st.heap_base);
  }
  for (int32_t s : step.frees) {
    if (st.parallel) break;
    Tensor& t = st.slots[static_cast<size_t>(s)];
    if (!t.defined()) continue;
    st.dropped(t);
    t = Tensor();
  }
  if (options.profile) {
    if (index >= st.end_ns.size()) {  // the planning run learns its steps as it goes
      st.start_ns.resize(index + 1, -1);
      st.end_ns.resize(index + 1, -1);
      st.lanes.resize(index + 1, 0);
    }
    st.end_ns[index] = since(st);
    if (index > 0 && st.start_ns[index] < 0) st.start_ns[index] = st.end_ns[index - 1];
  }
}

void Runner::run_conversion(const Step& step, RunState& st) const {
  const Tensor& src = st.slots[static_cast<size_t>(step.src)];
  const std::string what = "value '" + graph_.values[static_cast<size_t>(step.value)].name + "'";
  Tensor dst;
  if (step.arena_offset >= 0)
    if (const ArenaPool::Buffer* a = arena_for(st, storages_, step.to))
      dst = storages_.place(step.to, a->data + step.arena_offset, src.dtype(), src.shape(), nullptr);
  if (step.from != kHost && step.to != kHost)
    dst = storages_.from_host(step.to, storages_.to_host(step.from, src, what), what, dst);
  else if (step.to == kHost)
    dst = storages_.to_host(step.from, src, what, dst);
  else
    dst = storages_.from_host(step.to, src, what, dst);
  st.hold(step.dst, std::move(dst));
}

void Runner::run_step_body(const Step& step, size_t index, RunState& st, Scratch& sc) const {
  const RunOptions& options = *st.options;
  if (step.kind == Step::Kind::Convert) {
    run_conversion(step, st);
    return finish_step(step, index, st);
  }

  const ir::Node& node = *step.run_node;
  const bool records = options.callback != nullptr || options.capture != Capture::None;
  const bool folded = step.folded && st.plan->complete;  // a constant since planning: only records see it
  if (folded) {
    if (!records) return finish_step(step, index, st);
    sc.outs.clear();
    for (ir::ValueId v : node.outputs) sc.outs.push_back(*st.plan->value_constant[static_cast<size_t>(v)].constant);
  }

  // ---- inputs
  sc.in_ptrs.clear();
  sc.in_tensors.clear();
  for (const InputRef& r : step.inputs) {
    if (r.absent()) {
      sc.in_ptrs.push_back(nullptr);
      if (st.keep_inputs) sc.in_tensors.emplace_back();
      continue;
    }
    const Tensor& t = r.constant != nullptr ? *r.constant : st.slots[static_cast<size_t>(r.slot)];
    sc.in_ptrs.push_back(&t.dl());
    if (st.keep_inputs) sc.in_tensors.push_back(t);
  }

  // ---- the kernel (a folded one ran when planning: its outputs are the plan's constants;
  // an elided join's inputs are already in its output)
  if (!folded && !(step.elided && join_in_place(step, st, sc))) run_kernel(step, st, sc);

  // ---- the tail
  std::vector<Tensor>& outs = sc.outs;
  for (size_t o = 0; o < step.outputs.size(); ++o)
    st.hold(step.outputs[o].slot, records ? outs[o] : std::move(outs[o]));
  ++st.nodes_run;
  if (records) record_step(step, index, st, sc);
  finish_step(step, index, st);
}

// node_io and the node callback: what a step read and made, as plain host tensors.
void Runner::record_step(const Step& step, size_t index, RunState& st, Scratch& sc) const {
  const RunOptions& options = *st.options;
  const ir::Node& node = *step.run_node;
  for (size_t i = 0; st.keep_inputs && i < sc.in_tensors.size(); ++i)
    if (sc.in_tensors[i].defined() && step.inputs[i].storage != kHost)
      sc.in_tensors[i] = storages_.to_host(step.inputs[i].storage, sc.in_tensors[i], "an input of " + node.name);
  std::vector<Tensor> host_outs = sc.outs;
  for (size_t o = 0; o < host_outs.size(); ++o)
    if (step.outputs[o].storage != kHost)
      host_outs[o] = storages_.to_host(step.outputs[o].storage, sc.outs[o], "an output of " + node.name);
  if (options.callback != nullptr && *options.callback) {
    std::lock_guard<std::mutex> lock(st.callback_mutex);  // one call at a time, in parallel runs too
    const NodeDecision& np = *step.decided;
    const NodeEvent ev{node.name,
                       node.op,
                       *step.backend,
                       node.module_path,
                       sc.in_tensors,
                       host_outs,
                       &np.input_sources,
                       static_cast<size_t>(step.node),
                       np.fused ? &np.fused_members : nullptr};
    (*options.callback)(ev);
  }
  if (options.capture != Capture::None) {
    if (index >= st.records.size()) st.records.resize(index + 1);
    NodeIO& rec = st.records[index];
    rec.node = node.name;
    rec.op = node.op;
    rec.backend = *step.backend;
    rec.module_path = node.module_path;
    rec.input_sources = step.decided->input_sources;
    if (options.capture == Capture::All) rec.inputs = sc.in_tensors;
    rec.outputs = std::move(host_outs);
  }
}

// The buffers a host-allocated kernel writes: over an input that dies here, in the arena,
// or fresh memory.
void Runner::host_outputs(const Step& step, RunState& st, Scratch& sc) const {
  const BoundKernel& bk = *step.kernel;
  for (size_t o = 0; o < step.outputs.size(); ++o) {
    const SY_TensorDesc& d = bk.output_descs[o];
    const OutputPlace& op = step.outputs[o];
    std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
    if (st.in_place && op.inplace_input >= 0) {  // the input dies here: write over it
      const Tensor& in = st.slots[static_cast<size_t>(step.inputs[static_cast<size_t>(op.inplace_input)].slot)];
      sc.outs.push_back(storages_.place(op.storage, in.raw_data(), d.dtype, std::move(shape), in.memory_owner()));
    } else if (const ArenaPool::Buffer* a = op.arena_offset >= 0 ? arena_for(st, storages_, op.storage) : nullptr) {
      // A graph output in the arena keeps it: the next run takes another buffer.
      std::shared_ptr<void> keeps = op.holds_arena && st.arena ? std::shared_ptr<void>(st.arena, a->data) : nullptr;
      sc.outs.push_back(
          storages_.place(op.storage, a->data + op.arena_offset, d.dtype, std::move(shape), std::move(keeps)));
    } else {
      sc.outs.push_back(storages_.allocate(op.storage, d.dtype, shape));
    }
    sc.out_ptrs.push_back(const_cast<DLTensor*>(&sc.outs.back().dl()));
  }
}

// An elided join's output: the arena bytes its inputs' producers wrote. A run without the
// arena (a node callback, node_io) placed them apart: then the kernel joins them.
bool Runner::join_in_place(const Step& step, RunState& st, Scratch& sc) const {
  const ArenaPool::Buffer* a = arena_for(st, storages_, kHost);
  if (a == nullptr) return false;
  sc.outs.clear();
  for (size_t o = 0; o < step.outputs.size(); ++o) {
    const ValueInfo& info = st.plan->record.infos[static_cast<size_t>(step.run_node->outputs[o])];
    sc.outs.push_back(storages_.place(kHost, a->data + step.outputs[o].arena_offset, info.dtype, info.shape, nullptr));
  }
  return true;
}

// Hands back what a failed kernel produced and throws, naming the node and plugin.
void Runner::kernel_failed(const Step& step, SY_Status s, const SY_CallContext& call, Scratch& sc) const {
  for (DLManagedTensor* m : sc.produced)
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  const BoundKernel& bk = *step.kernel;
  if (s != SY_ERROR_OUT_OF_MEMORY)
    throw Error(ErrorKind::Kernel, describe_step(step) + " failed in plugin '" + *step.backend +
                                       "': " + loader::describe_failure(s, call));
  uint64_t out_bytes = 0;
  for (const SY_TensorDesc& d : bk.output_descs) {
    uint64_t n = dtype_size(d.dtype);
    for (int32_t k = 0; k < d.ndim; ++k) n *= static_cast<uint64_t>(std::max<int64_t>(d.shape[k], 0));
    out_bytes += n;
  }
  throw Error(
      ErrorKind::OutOfMemory,
      describe_step(step) + " on plugin '" + *step.backend + "': " + loader::describe_failure(s, call) +
          (bk.output_descs.empty() ? std::string() : " (its outputs take " + std::to_string(out_bytes) + " bytes)"));
}

// The tensors a kernel-allocated kernel returned, adopted; a view of an input keeps that
// input's memory alive as long as it lives.
void Runner::adopt_outputs(const Step& step, RunState& st, Scratch& sc) const {
  for (size_t o = 0; o < step.outputs.size(); ++o) {
    if (sc.produced[o] == nullptr) {
      for (DLManagedTensor* m : sc.produced)
        if (m != nullptr && m->deleter != nullptr) m->deleter(m);
      throw Error(ErrorKind::Kernel, describe_step(step) + ": plugin '" + *step.backend +
                                         "' returned OK but produced no tensor for output " + std::to_string(o));
    }
    Tensor t = Tensor::adopt(sc.produced[o], step.kernel->kernel.plugin);
    sc.produced[o] = nullptr;
    if (step.outputs[o].storage == kHost && t.numel() > 0)
      for (size_t i = 0; i < sc.in_ptrs.size(); ++i) {
        const InputRef& r = step.inputs[i];
        if (r.absent() || r.storage != kHost) continue;
        const Tensor& src = r.constant != nullptr ? *r.constant : st.slots[static_cast<size_t>(r.slot)];
        if (points_into(t.raw_data(), src)) t.keep_alive(src.memory_owner());
      }
    if (st.arena && t.numel() > 0 && step.outputs[o].storage == kHost) t = guard_arena_view(step, o, std::move(t), st);
    sc.outs.push_back(std::move(t));
  }
}

// Runs a kernel step's kernel on the inputs in `sc.in_ptrs`; its checked outputs go to sc.outs.
void Runner::run_kernel(const Step& step, RunState& st, Scratch& sc) const {
  const BoundKernel& bk = *step.kernel;
  const SY_KernelDef* def = bk.kernel.def;
  sc.outs.clear();
  sc.produced.clear();
  sc.out_ptrs.clear();
  thread_local std::vector<SY_StorageIndex> out_storage;
  SY_CallContext call;
  SY_KernelRunArgs args{};
  args.struct_size = SY_KernelRunArgs_STRUCT_SIZE;
  args.call = &call;
  args.instance = bk.instance;
  args.inputs = sc.in_ptrs.data();
  args.num_inputs = sc.in_ptrs.size();
  args.num_outputs = step.outputs.size();
  if (step.pass_storages) {
    out_storage.clear();
    for (const OutputPlace& o : step.outputs) out_storage.push_back(o.local);
    args.input_storage = step.input_storage.data();
    args.output_storage = out_storage.data();
  }
  if (def->output_mode == SY_OUTPUT_HOST_ALLOCATED) {
    host_outputs(step, st, sc);
    args.outputs = sc.out_ptrs.data();
  } else {
    sc.produced.assign(step.outputs.size(), nullptr);
    args.produced = sc.produced.data();
  }
  const SY_Status s = def->run(def->context, &args);
  if (s != SY_OK) kernel_failed(step, s, call, sc);
  if (def->output_mode == SY_OUTPUT_KERNEL_ALLOCATED) adopt_outputs(step, st, sc);
  check_outputs(step, sc.outs);
  if (st.options->check_finite) check_finite(step, sc.outs);
  for (const auto& [slot, g] : step.guards) {
    const std::vector<int64_t>& want = st.plan->guard_shapes[static_cast<size_t>(g)];
    const Tensor& t = sc.outs[static_cast<size_t>(slot)];  // the output index
    if (t.shape() != want)
      throw Error(ErrorKind::Unsupported,
                  describe_step(step) + " produced shape " + shape_string(t.shape()) +
                      " where the first run with these input shapes produced " + shape_string(want) +
                      "; sizes computed from it were fixed then (a size that depends on tensor data is not supported)");
  }
}

// Cheap checks after every kernel: a broken plugin is reported, never passed on.
void Runner::check_outputs(const Step& step, const std::vector<Tensor>& outs) const {
  const BoundKernel& bk = *step.kernel;
  auto fail = [&](size_t o, const std::string& what) {
    throw Error(ErrorKind::Kernel, describe_step(step) + ": plugin '" + *step.backend + "' " + what + " (output " +
                                       std::to_string(o) + ")");
  };
  for (size_t o = 0; o < outs.size(); ++o) {
    const DLTensor& dl = outs[o].dl();
    const int32_t storage = step.outputs[o].storage;
    const DLDevice want_device = storage == kHost ? DLDevice{kDLCPU, 0} : storages_.kind(storage).def->device;
    const bool host_like = dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost;
    if (storage == kHost ? !host_like : dl.device.device_type != want_device.device_type)
      fail(o, "produced a tensor on device type " + std::to_string(dl.device.device_type) + " where " +
                  storages_.name_of(storage) + " memory was expected");
    if (dl.ndim < 0 || dl.ndim > SY_MAX_DIMS)
      fail(o, "produced a tensor with " + std::to_string(dl.ndim) + " dimensions");
    if (dl.data == nullptr && outs[o].numel() > 0) fail(o, "produced a tensor with no data");
    if (bk.output_descs.empty()) continue;
    const SY_TensorDesc& want = bk.output_descs[o];
    // Compared in place: this runs after every node, and vectors would cost two allocations.
    if (!same_dtype(dl.dtype, want.dtype) || dl.ndim != want.ndim ||
        !std::equal(want.shape, want.shape + want.ndim, dl.shape))
      fail(o, "produced " + dtype_name(dl.dtype) + " " + shape_string({dl.shape, dl.shape + dl.ndim}) +
                  " but its infer promised " + dtype_name(want.dtype) + " " +
                  shape_string({want.shape, want.shape + want.ndim}));
  }
}

void Runner::check_finite(const Step& step, const std::vector<Tensor>& outs) const {
  for (size_t o = 0; o < outs.size(); ++o) {
    const Tensor t = storages_.to_host(step.outputs[o].storage, outs[o], "an output").contiguous();
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
      throw Error(ErrorKind::Kernel, "check-finite: " + describe_step(step) + " on plugin '" + *step.backend +
                                         "' is the first node to produce a non-finite value (output " +
                                         std::to_string(o) + ", element " + std::to_string(bad) + ")");
  }
}

}  // namespace switchyard::exec
