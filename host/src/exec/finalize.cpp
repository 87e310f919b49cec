// After the planning run: with every kernel, its storages and every value's dtype and
// shape known, fix where each value lives and lay the run out as steps.
//   1. Storage per value: the producer's preferred storage that every reader can read
//      (graph outputs need host memory), else host memory if the producer writes it,
//      else the producer's first storage; readers that cannot read it get a converted
//      copy, made once per (value, storage) just before its first reader.
//   2. Slots: value v is slot v; each converted copy gets a slot of its own.
//   3. In-place: an output may take an input's buffer when the kernel allows it and the
//      input is an owned buffer of the same bytes and storage, read by this step only.
//   4. Memory: each slot's life in step order; one arena per memory (host memory, and
//      each device storage), placed by the planner in memory_plan.cpp.
#include "exec/executor.hpp"

#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <map>

namespace switchyard::exec {
namespace {

SY_StorageIndex lowest_storage(SY_StorageMask mask) {
  for (SY_StorageIndex k = 0; k < 31; ++k)
    if (mask & SY_STORAGE_MASK(k)) return k;
  return SY_STORAGE_HOST;
}

bool reads_local(SY_StorageMask mask, SY_StorageIndex local) {
  if (local == SY_STORAGE_HOST) return (mask & SY_STORAGE_MASK_HOST) != 0;
  return local >= 0 && (mask & SY_STORAGE_MASK(local)) != 0;
}

uint64_t dense_bytes(const ValueInfo& info) {
  uint64_t n = 1;
  for (int64_t d : info.shape) n *= static_cast<uint64_t>(d);
  return n * dtype_size(info.dtype);
}

}  // namespace

void Executor::finalize(Plan& plan) const {
  const size_t num_values = graph_.values.size();
  std::vector<const Step*> kernels;
  for (const Step& s : plan.planning_steps)
    if (s.kind == Step::Kind::Kernel) kernels.push_back(&s);

  // ---- 1. storage per value
  struct Read {
    size_t kernel, input;
  };
  std::vector<std::vector<Read>> readers(num_values);
  std::vector<int32_t> producer(num_values, -1);
  auto fixed_of = [&](ir::ValueId v) -> const Tensor* {
    if (graph_.values[static_cast<size_t>(v)].kind == ir::ValueKind::Constant) return &graph_.values[static_cast<size_t>(v)].constant;
    return plan.value_fixed[static_cast<size_t>(v)].fixed;
  };
  for (size_t k = 0; k < kernels.size(); ++k) {
    const ir::Node& node = *kernels[k]->run_node;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != ir::kNoValue && fixed_of(node.inputs[i]) == nullptr)
        readers[static_cast<size_t>(node.inputs[i])].push_back(Read{k, i});
    if (!kernels[k]->folded)
      for (ir::ValueId v : node.outputs) producer[static_cast<size_t>(v)] = static_cast<int32_t>(k);
  }
  std::vector<char> is_output(num_values, 0);
  for (ir::ValueId v : graph_.outputs) is_output[static_cast<size_t>(v)] = 1;

  std::vector<int32_t>& where = plan.value_storage;
  where.assign(num_values, kHost);
  for (size_t v = 0; v < num_values; ++v) {
    if (producer[v] < 0) continue;
    const Step& p = *kernels[static_cast<size_t>(producer[v])];
    const loader::LoadedPlugin* plugin = p.kernel->kernel.plugin.get();
    size_t o = 0;
    while (p.run_node->outputs[o] != static_cast<ir::ValueId>(v)) ++o;
    const SY_StorageMask writes = p.kernel->output_writes[o];
    int32_t chosen = -2;
    const SY_StorageIndex preferred = storages_.local_of(preferred_storage_, plugin);  // >= 0: this plugin's
    if (preferred >= 0 && (writes & SY_STORAGE_MASK(preferred)))
      chosen = preferred_storage_;  // [runtime] prefer_storage: there, whoever reads it
    for (SY_StorageIndex k = 0; k < 31 && chosen == -2 && !is_output[v]; ++k) {
      if (!(writes & SY_STORAGE_MASK(k))) continue;
      bool all = true;
      for (const Read& r : readers[v])
        all = all && kernels[r.kernel]->kernel->kernel.plugin.get() == plugin &&
              reads_local(kernels[r.kernel]->kernel->input_reads[r.input], k);
      if (all) chosen = storages_.id_of(plugin, k);
    }
    if (chosen == -2) chosen = (writes & SY_STORAGE_MASK_HOST) ? kHost : storages_.id_of(plugin, lowest_storage(writes));
    where[v] = chosen;
  }
  std::map<int32_t, size_t> kept;  // values that stay in a plugin's storage (a device, a layout)
  for (int32_t w : where)
    if (w != kHost) ++kept[w];
  for (const auto& [storage, count] : kept)
    log::get().debug("plan: {} value(s) stay in storage {}", count, storages_.name_of(storage));

  // ---- 2. steps and slots
  std::vector<Step> steps;
  std::map<std::pair<ir::ValueId, int32_t>, int32_t> copies;  // (value, storage) -> slot
  plan.slot_storage = where;
  plan.slot_names.clear();
  for (const ir::Value& v : graph_.values) plan.slot_names.push_back(v.name);
  std::vector<ir::ValueId> slot_value(num_values);
  for (size_t v = 0; v < num_values; ++v) slot_value[v] = static_cast<ir::ValueId>(v);
  plan.crossings.clear();
  plan.crossing_bytes = plan.moved_bytes = 0;
  auto value_bytes = [&](ir::ValueId v) { return dense_bytes(plan.infos[static_cast<size_t>(v)]); };
  std::function<int32_t(ir::ValueId, int32_t, const std::string&)> copy_to = [&](ir::ValueId v, int32_t to,
                                                                                  const std::string& reader) -> int32_t {
    const int32_t from = where[static_cast<size_t>(v)];
    if (from == to) return v;
    auto found = copies.find({v, to});
    if (found != copies.end()) return found->second;
    const int32_t src = from != kHost && to != kHost ? copy_to(v, kHost, reader) : v;
    Step c;
    c.kind = Step::Kind::Convert;
    c.node = producer[static_cast<size_t>(v)] >= 0 ? kernels[static_cast<size_t>(producer[static_cast<size_t>(v)])]->node : -1;
    c.value = v;
    c.src = src;
    c.from = src == v ? from : kHost;
    c.to = to;
    c.dst = static_cast<int32_t>(plan.slot_storage.size());
    plan.slot_storage.push_back(to);
    plan.slot_names.push_back(graph_.values[static_cast<size_t>(v)].name + "@" + storages_.name_of(to));
    slot_value.push_back(v);
    steps.push_back(c);
    copies[{v, to}] = c.dst;
    plan.crossings.push_back(Crossing{graph_.values[static_cast<size_t>(v)].name, storages_.name_of(c.from),
                                      storages_.name_of(to), reader, value_bytes(v), false});
    plan.crossing_bytes += value_bytes(v);
    return c.dst;
  };
  for (auto& [key, tensor] : plan.fixed_copies)
    plan.crossings.push_back(Crossing{graph_.values[static_cast<size_t>(key.first)].name, "host", storages_.name_of(key.second),
                                      "", tensor->nbytes(), true});

  plan.input_slots.assign(graph_.inputs.begin(), graph_.inputs.end());
  for (const Step* k : kernels) {
    Step s = *k;  // the planning run's kernel step, with its inputs redirected
    const ir::Node& node = *s.run_node;
    if (s.folded) {  // computed when planning; kept so that node_io and callbacks still see it
      for (OutputPlan& o : s.outputs) o = OutputPlan{};
      s.frees.clear();
      steps.push_back(std::move(s));
      continue;
    }
    const loader::LoadedPlugin* plugin = s.kernel->kernel.plugin.get();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::ValueId v = node.inputs[i];
      if (v == ir::kNoValue) continue;
      const SY_StorageMask reads = s.kernel->input_reads[i];
      if (const Tensor* fixed = fixed_of(v)) {  // constants: host, or converted once at plan time
        if (reads & SY_STORAGE_MASK_HOST) {
          s.inputs[i] = InputRef{-1, fixed, kHost};
          s.input_storage[i] = SY_STORAGE_HOST;
          continue;
        }
        const int32_t to = storages_.id_of(plugin, lowest_storage(reads));
        const Tensor*& copy = plan.fixed_copies[{v, to}];
        if (copy == nullptr) {
          plan.fixed.push_back(storages_.from_host(to, *fixed, "constant '" + graph_.values[v].name + "'"));
          copy = &plan.fixed.back();
        }
        s.inputs[i] = InputRef{-1, copy, to};
        s.input_storage[i] = storages_.local_of(to, plugin);
        continue;
      }
      const int32_t cur = where[static_cast<size_t>(v)];
      const SY_StorageIndex local = storages_.local_of(cur, plugin);
      const SY_StorageIndex preferred = storages_.local_of(preferred_storage_, plugin);
      if (preferred >= 0 && cur != preferred_storage_ && reads_local(reads, preferred)) {
        s.inputs[i] = InputRef{copy_to(v, preferred_storage_, node.name), nullptr, preferred_storage_};
        s.input_storage[i] = preferred;
        continue;
      }
      if (local != -2 && reads_local(reads, local)) {
        s.inputs[i] = InputRef{v, nullptr, cur};
        s.input_storage[i] = local;
        continue;
      }
      const int32_t to = (reads & SY_STORAGE_MASK_HOST) ? kHost : storages_.id_of(plugin, lowest_storage(reads));
      s.inputs[i] = InputRef{copy_to(v, to, node.name), nullptr, to};
      s.input_storage[i] = storages_.local_of(to, plugin);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ir::ValueId v = node.outputs[o];
      OutputPlan& out = s.outputs[o];
      out.storage = where[static_cast<size_t>(v)];
      out.local = storages_.local_of(out.storage, plugin);
      out.slot = last_use_[static_cast<size_t>(v)] == -1 ? -1 : v;
      out.arena_offset = -1;
      out.inplace_input = -1;
      plan.moved_bytes += value_bytes(v);
    }
    s.frees.clear();
    s.guards.clear();
    steps.push_back(std::move(s));
    for (ir::ValueId v : node.outputs)
      if (is_output[static_cast<size_t>(v)] && where[static_cast<size_t>(v)] != kHost) copy_to(v, kHost, "the graph's outputs");
  }
  plan.outputs.clear();
  for (ir::ValueId v : graph_.outputs) {
    if (const Tensor* fixed = fixed_of(v)) plan.outputs.push_back(InputRef{-1, fixed, kHost});
    else plan.outputs.push_back(InputRef{where[static_cast<size_t>(v)] == kHost ? v : copies.at({v, kHost}), nullptr, kHost});
  }
  plan.num_slots = static_cast<int32_t>(plan.slot_storage.size());

  // ---- 3. lives, frees, in-place
  const size_t num_slots = plan.slot_storage.size();
  std::vector<int32_t> first(num_slots, -1), last(num_slots, -1), reads(num_slots, 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    auto read = [&](int32_t slot) {
      last[static_cast<size_t>(slot)] = static_cast<int32_t>(i);
      ++reads[static_cast<size_t>(slot)];
    };
    if (s.kind == Step::Kind::Convert) {
      read(s.src);
      first[static_cast<size_t>(s.dst)] = static_cast<int32_t>(i);
      continue;
    }
    for (const InputRef& r : s.inputs)
      if (r.slot >= 0) read(r.slot);
    for (ir::ValueId v : s.run_node->outputs) first[static_cast<size_t>(v)] = static_cast<int32_t>(i);
  }
  for (const InputRef& r : plan.outputs)
    if (r.slot >= 0) last[static_cast<size_t>(r.slot)] = kForever;
  for (int32_t s : plan.input_slots) first[static_cast<size_t>(s)] = -1;

  plan.lives.assign(num_slots, ValueLife{});
  for (size_t slot = 0; slot < num_slots; ++slot) {
    ValueLife& life = plan.lives[slot];
    const ir::ValueId v = slot_value[slot];
    if (first[slot] < 0) continue;  // graph inputs, constants, values no step makes
    life.first = first[slot];
    life.last = last[slot];
    life.bytes = storages_.nbytes(plan.slot_storage[slot], plan.infos[static_cast<size_t>(v)].dtype,
                                  plan.infos[static_cast<size_t>(v)].shape);
    if (slot >= num_values) {
      life.kind = ValueLife::Kind::HostArena;  // a converted copy: the host allocates it
    } else if (plan.infos[slot].view_of != ir::kNoValue || plan.infos[slot].view_of_outside) {
      life.kind = ValueLife::Kind::View;
      life.view_of = plan.infos[slot].view_of;
      life.bytes = 0;
    } else {
      life.kind = plan.infos[slot].host_allocated ? ValueLife::Kind::HostArena : ValueLife::Kind::Kernel;
    }
  }
  // Frees: each slot goes after its last reader (a slot nobody reads is never held).
  for (size_t slot = 0; slot < num_slots; ++slot)
    if (last[slot] >= 0 && last[slot] != kForever) steps[static_cast<size_t>(last[slot])].frees.push_back(static_cast<int32_t>(slot));
  // In-place: the kernel allows it, and the input is an owned buffer whose last reader is
  // this step, through this one input. Earlier readers are done in a sequential run; a
  // parallel run may still be in them, so there the step must be the input's only reader.
  // A value written in place is a view that owns nothing, yet its whole buffer: it may be
  // written over in turn (a chain such as scale -> mask -> softmax), with its bytes here.
  std::vector<char> viewed(num_slots, 0), written_in_place(num_slots, 0);
  std::vector<int64_t> buffer_bytes(num_slots, 0);
  for (size_t slot = 0; slot < num_slots; ++slot) buffer_bytes[slot] = plan.lives[slot].bytes;
  for (const ValueLife& l : plan.lives)
    if (l.kind == ValueLife::Kind::View && l.view_of != ir::kNoValue) viewed[static_cast<size_t>(l.view_of)] = 1;
  // Input r of step s is an owned buffer, read here once and never after, in output o's storage and dtype.
  auto dies_here = [&](const Step& s, size_t i, const InputRef& r, size_t o) {
    const auto src = static_cast<size_t>(r.slot);
    const ValueLife& sl = plan.lives[src];
    const bool owned = sl.kind == ValueLife::Kind::HostArena || sl.kind == ValueLife::Kind::Kernel || written_in_place[src];
    const auto here = std::count_if(s.inputs.begin(), s.inputs.end(), [&](const InputRef& x) { return x.slot == r.slot; });
    return owned && here == 1 && !(parallel_ && reads[src] != 1) && last[src] == static_cast<int32_t>(i) && !viewed[src] &&
           plan.slot_storage[src] == s.outputs[o].storage &&
           same_dtype(plan.infos[static_cast<size_t>(slot_value[src])].dtype,
                      plan.infos[static_cast<size_t>(s.outputs[o].slot)].dtype);
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    if (s.kind != Step::Kind::Kernel || s.kernel->kernel.def->output_mode != SY_OUTPUT_HOST_ALLOCATED) continue;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const int32_t in = s.kernel->output_inplace[o];
      const int32_t out_slot = s.outputs[o].slot;
      if (in < 0 || out_slot < 0) continue;
      const InputRef& r = s.inputs[static_cast<size_t>(in)];
      if (r.slot < 0) continue;
      const auto src = static_cast<size_t>(r.slot);
      if (!dies_here(s, i, r, o) || buffer_bytes[src] != plan.lives[static_cast<size_t>(out_slot)].bytes) continue;
      s.outputs[o].inplace_input = in;
      ValueLife& ol = plan.lives[static_cast<size_t>(out_slot)];
      ol.kind = ValueLife::Kind::View;  // it owns nothing: its bytes are the input's
      ol.view_of = r.slot;
      ol.bytes = 0;
      viewed[src] = 1;
      written_in_place[static_cast<size_t>(out_slot)] = 1;
      buffer_bytes[static_cast<size_t>(out_slot)] = buffer_bytes[src];
    }
  }
  // In-place at the end (SDK 1.2): a smaller input's buffer may sit at the end of the
  // output's; the memory planner places it there where it can (plan_memory).
  for (size_t i = 0; i < steps.size() && !parallel_; ++i) {
    const Step& s = steps[i];
    if (s.kind != Step::Kind::Kernel || s.kernel->kernel.def->output_mode != SY_OUTPUT_HOST_ALLOCATED) continue;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const int32_t in = s.kernel->output_inplace_tail[o];
      const int32_t out_slot = s.outputs[o].slot;
      if (in < 0 || out_slot < 0 || s.outputs[o].inplace_input >= 0 || s.outputs[o].storage != kHost) continue;
      const InputRef& r = s.inputs[static_cast<size_t>(in)];
      if (r.slot < 0 || !dies_here(s, i, r, static_cast<size_t>(o))) continue;
      int32_t root = r.slot;  // the buffer's owner: through the values written in place over it
      while (written_in_place[static_cast<size_t>(root)]) root = plan.lives[static_cast<size_t>(root)].view_of;
      ValueLife& owner = plan.lives[static_cast<size_t>(root)];
      if (owner.kind == ValueLife::Kind::HostArena && owner.bytes < plan.lives[static_cast<size_t>(out_slot)].bytes)
        owner.tail_of = out_slot;
    }
  }

  // ---- 4. memory: one arena for host memory, one per device storage
  const bool use_arena = config_.memory_planner && !parallel_ && config_.capture == config::CaptureMode::None;
  auto host_memory = [&](int32_t id) { return storages_.in_host_memory(id); };
  std::vector<int32_t> groups{kHost};
  for (int32_t id : plan.slot_storage)
    if (!host_memory(id) && std::find(groups.begin(), groups.end(), id) == groups.end()) groups.push_back(id);
  plan.device_arenas.clear();
  std::vector<int64_t> offset(num_slots, -1);
  for (int32_t g : groups) {
    std::vector<ValueLife> lives = plan.lives;
    for (size_t slot = 0; slot < num_slots; ++slot)
      if (g == kHost ? !host_memory(plan.slot_storage[slot]) : plan.slot_storage[slot] != g) lives[slot].kind = ValueLife::Kind::Unused;
    MemoryPlan m = plan_memory(std::move(lives), use_arena);
    for (size_t slot = 0; slot < num_slots; ++slot)
      if (m.offset[slot] >= 0) offset[slot] = m.offset[slot];
    if (g == kHost) {
      plan.memory = std::move(m);
      plan.arena = use_arena && plan.memory.arena_bytes > 0 ? std::make_unique<ArenaPool>(plan.memory.arena_bytes) : nullptr;
      continue;
    }
    Plan::DeviceArena d;
    d.storage = g;
    d.memory = std::move(m);
    if (use_arena && d.memory.arena_bytes > 0)
      d.pool = std::make_unique<ArenaPool>(d.memory.arena_bytes, [this, g](size_t bytes, void** data) {
        return storages_.allocate_bytes(g, bytes, data);
      });
    plan.device_arenas.push_back(std::move(d));
  }
  for (Step& s : steps) {
    if (s.kind == Step::Kind::Convert) {
      s.arena_offset = offset[static_cast<size_t>(s.dst)];
      continue;
    }
    for (OutputPlan& o : s.outputs) {
      if (o.slot >= 0 && o.inplace_input < 0) o.arena_offset = offset[static_cast<size_t>(o.slot)];
      o.holds_arena = o.arena_offset >= 0 && plan.memory.last[static_cast<size_t>(o.slot)] == kForever;
    }
  }

  // ---- 5. guards: sizes the sym nodes read were fixed from these shapes
  for (ir::ValueId v : plan.shape_reads) {
    if (producer[static_cast<size_t>(v)] < 0) continue;
    for (Step& s : steps) {
      if (s.kind != Step::Kind::Kernel) continue;
      const auto& outs = s.run_node->outputs;
      auto it = std::find(outs.begin(), outs.end(), v);
      if (it == outs.end()) continue;
      s.guards.emplace_back(static_cast<int32_t>(it - outs.begin()), static_cast<int32_t>(plan.guard_shapes.size()));
      plan.guard_shapes.push_back(plan.infos[static_cast<size_t>(v)].shape);
    }
  }

  plan.steps = std::move(steps);
  plan.planning_steps.clear();
  if (parallel_) plan.schedule = std::make_unique<Schedule>(make_schedule(plan));
  plan.complete = true;
  if (plan.crossing_bytes > 0) {
    const double share = plan.moved_bytes > 0 ? static_cast<double>(plan.crossing_bytes) / plan.moved_bytes : 1.0;
    const bool asked = preferred_storage_ != kHost;  // [runtime] prefer_storage makes conversions on purpose
    const auto level = share > config_.copy_warning_share && !asked ? spdlog::level::warn : spdlog::level::debug;
    log::get().log(level, "{} conversion(s) between storages move {} bytes per run, {:.0f}% of the {} bytes the kernels write{}",
                   plan.crossings.size(), plan.crossing_bytes, 100 * share, plan.moved_bytes,
                   share > config_.copy_warning_share ? " ([runtime] copy_warning_share; `switchyard plan` lists them)" : "");
  }
  log::get().debug("plan: {} steps, {} slots; host arena {} bytes for {} bytes of values; heap peak {} bytes",
                   plan.steps.size(), plan.num_slots, plan.memory.arena_bytes, plan.memory.arena_values_bytes,
                   plan.memory.heap_peak_bytes);
}

}  // namespace switchyard::exec
