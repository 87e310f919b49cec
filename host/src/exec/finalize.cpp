// After the planning run: with every kernel, its storages and every value's dtype and
// shape known, fix where each value lives and lay the run out as steps. The passes, in
// the order Finalizer::run calls them:
//   1. choose_storages: per value, the producer's preferred storage that every reader can
//      read (graph outputs need host memory), else host memory if the producer writes it,
//      else the producer's first storage.
//   2. lay_out_steps: value v is slot v; readers that cannot read a value's storage get a
//      converted copy in a slot of its own, made once per (value, storage) just before its
//      first reader.
//   3. plan_lives: each slot's first and last step, its bytes and kind, and its free.
//   4. plan_joins: a cat's inputs are written straight into its output, which then copies
//      nothing (join_placement.hpp).
//      plan_in_place, plan_in_place_tails: an output may take an input's buffer (or sit
//      over its end) when the kernel allows it and the input dies at this step.
//   5. place_memory: one arena per memory (host memory, and each device storage), placed
//      by the planner in memory_plan.cpp.
//   6. add_guards: the sizes sym nodes read were fixed from these shapes.
#include "exec/finalize.hpp"

#include "exec/join_placement.hpp"

#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace switchyard::exec {
namespace {

uint64_t dense_bytes(const ValueInfo& info) {
  uint64_t n = 1;
  for (int64_t d : info.shape) n *= static_cast<uint64_t>(d);
  return n * dtype_size(info.dtype);
}

size_t at(ir::ValueId v) { return static_cast<size_t>(v); }

class Finalizer {
 public:
  Finalizer(const FinalizeInputs& in, Plan& plan)
      : in_(in), plan_(plan), graph_(in.graph), storages_(in.storages), num_values_(in.graph.values.size()) {}

  void run() {
    find_producers_and_readers();
    choose_storages();
    lay_out_steps();
    plan_lives();
    plan_joins();
    plan_in_place();
    plan_in_place_tails();
    place_memory();
    add_guards();
    finish();
  }

 private:
  struct Read {
    size_t kernel, input;
  };

  const Tensor* constant_of(ir::ValueId v) const {
    if (graph_.values[at(v)].kind == ir::ValueKind::Constant) return &graph_.values[at(v)].constant;
    return plan_.value_constant[at(v)].constant;
  }
  uint64_t value_bytes(ir::ValueId v) const { return dense_bytes(plan_.record.infos[at(v)]); }
  const loader::LoadedPlugin* plugin_of(const Step& s) const { return s.kernel->kernel.plugin.get(); }
  bool written_into_join(int32_t slot) const {
    return !joins_.holder.empty() && joins_.holder[static_cast<size_t>(slot)] >= 0;
  }

  void find_producers_and_readers();
  void choose_storages();
  void count_inputs_in_compute_dtype();
  int32_t storage_for(size_t v) const;
  void lay_out_steps();
  int32_t copy_to(ir::ValueId v, int32_t to, const std::string& reader);
  void route_inputs(Step& s);
  void place_outputs(Step& s);
  void plan_lives();
  bool dies_here(const Step& s, size_t i, const InputRef& r, size_t o) const;
  void plan_joins();
  void plan_in_place();
  void plan_in_place_tails();
  bool use_arena() const {
    return in_.config.memory_planner && !in_.parallel && in_.config.capture == config::CaptureMode::None;
  }
  void place_memory();
  void place_join_parts(MemoryPlan& m) const;
  void add_guards();
  void finish();

  const FinalizeInputs& in_;
  Plan& plan_;
  const ir::Graph& graph_;
  const StorageTable& storages_;
  const size_t num_values_;
  std::vector<const Step*> kernels_;        // the planning run's kernel steps
  std::vector<std::vector<Read>> readers_;  // per value
  std::vector<int32_t> producer_;           // per value: index in kernels_, or -1
  std::vector<char> is_output_;             // per value
  std::vector<Step> steps_;                 // the executable steps, built here
  ConvertedCopies copies_;
  std::vector<ir::ValueId> slot_value_;          // per slot: the value it holds
  std::vector<int32_t> first_, last_, reads_;    // per slot: first step, last reader, readers
  std::vector<char> viewed_, written_in_place_;  // per slot
  std::vector<int64_t> buffer_bytes_;            // per slot: the bytes of the buffer it holds
  JoinPlacement joins_;                          // parts written into a join's output
};

void Finalizer::find_producers_and_readers() {
  for (const Step& s : plan_.record.steps)
    if (s.kind == Step::Kind::Kernel) kernels_.push_back(&s);
  readers_.assign(num_values_, {});
  producer_.assign(num_values_, -1);
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const ir::Node& node = *kernels_[k]->run_node;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != ir::kNoValue && constant_of(node.inputs[i]) == nullptr)
        readers_[at(node.inputs[i])].push_back(Read{k, i});
    if (!kernels_[k]->folded)
      for (ir::ValueId v : node.outputs) producer_[at(v)] = static_cast<int32_t>(k);
  }
  is_output_.assign(num_values_, 0);
  for (ir::ValueId v : graph_.outputs) is_output_[at(v)] = 1;
}

// ---- 1. storage per value

int32_t Finalizer::storage_for(size_t v) const {
  const Step& p = *kernels_[static_cast<size_t>(producer_[v])];
  const loader::LoadedPlugin* plugin = plugin_of(p);
  size_t o = 0;
  while (p.run_node->outputs[o] != static_cast<ir::ValueId>(v)) ++o;
  const SY_StorageMask writes = p.kernel->output_writes[o];
  const SY_StorageIndex preferred = storages_.local_of(in_.preferred_storage, plugin);  // >= 0: this plugin's
  if (preferred >= 0 && (writes & SY_STORAGE_MASK(preferred)))
    return in_.preferred_storage;  // [runtime] prefer_storage: there, whoever reads it
  for (SY_StorageIndex k = 0; k < SY_MAX_STORAGES && !is_output_[v]; ++k) {
    if (!(writes & SY_STORAGE_MASK(k))) continue;
    bool all = true;
    for (const Read& r : readers_[v])
      all = all && plugin_of(*kernels_[r.kernel]) == plugin &&
            StorageTable::mask_has(kernels_[r.kernel]->kernel->input_reads[r.input], k);
    if (all) return storages_.id_of(plugin, k);
  }
  // Not every reader reads one: the first the producer writes that keeps its values whole.
  for (SY_StorageMask rest = writes; rest != 0;) {
    const int32_t id = storages_.first_in(rest, plugin);
    if (!storages_.narrows(id)) return id;
    rest &= ~SY_STORAGE_MASK(storages_.local_of(id, plugin));
  }
  return storages_.first_in(writes, plugin);  // it writes nothing else: its output is so
}

void Finalizer::choose_storages() {
  std::vector<int32_t>& where = plan_.value_storage;
  where.assign(num_values_, kHost);
  for (size_t v = 0; v < num_values_; ++v)
    if (producer_[v] >= 0) where[v] = storage_for(v);
  std::map<int32_t, size_t> kept;  // values that stay in a plugin's storage (a device, a layout)
  for (int32_t w : where)
    if (w != kHost) ++kept[w];
  for (const auto& [storage, count] : kept)
    log::get().debug("plan: {} value(s) stay in storage {}", count, storages_.name_of(storage));
  count_inputs_in_compute_dtype();
}

void Finalizer::count_inputs_in_compute_dtype() {
  plan_.compute_arrives_bytes.assign(graph_.nodes.size(), 0);
  for (const Step* s : kernels_) {
    const DLDataType compute = s->kernel->compute;
    if (compute.lanes == 0 || s->node < 0) continue;
    for (ir::ValueId v : s->run_node->inputs) {
      if (v == ir::kNoValue || constant_of(v) != nullptr || !storages_.narrows(plan_.value_storage[at(v)])) continue;
      const DLDataType held = storages_.kind(plan_.value_storage[at(v)]).element;
      if (held.code == compute.code && held.bits == compute.bits)
        plan_.compute_arrives_bytes[static_cast<size_t>(s->node)] += value_bytes(v);
    }
  }
}

// ---- 2. steps and slots

int32_t Finalizer::copy_to(ir::ValueId v, int32_t to, const std::string& reader) {
  const int32_t producer = producer_[at(v)] >= 0 ? kernels_[static_cast<size_t>(producer_[at(v)])]->node : -1;
  return copies_.slot_of(v, plan_.value_storage[at(v)], to, producer, [&](Step&& c) {
    c.dst = static_cast<int32_t>(plan_.slot_storage.size());
    plan_.slot_storage.push_back(c.to);
    plan_.slot_names.push_back(graph_.values[at(v)].name + "@" + storages_.name_of(c.to));
    slot_value_.push_back(v);
    plan_.crossings.push_back(Crossing{graph_.values[at(v)].name, storages_.name_of(c.from), storages_.name_of(c.to),
                                       reader, value_bytes(v), false});
    plan_.crossing_bytes += value_bytes(v);
    steps_.push_back(std::move(c));
    return steps_.back().dst;
  });
}

// Points each input of kernel step `s` at a slot in a storage its kernel reads: the
// value's own, a converted copy, or a constant (host, or converted once, now).
void Finalizer::route_inputs(Step& s) {
  const ir::Node& node = *s.run_node;
  const loader::LoadedPlugin* plugin = plugin_of(s);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::ValueId v = node.inputs[i];
    if (v == ir::kNoValue) continue;
    const Tensor* constant = constant_of(v);
    const StorageTable::InputPlace place =
        storages_.input_place(constant ? kHost : plan_.value_storage[at(v)], s.kernel->input_reads[i], plugin,
                              constant ? kHost : in_.preferred_storage);
    s.input_storage[i] = place.local;
    if (constant != nullptr)
      s.inputs[i] = InputRef{-1, plan_.constant_in(place.storage, v, *constant, graph_, storages_), place.storage};
    else
      s.inputs[i] = InputRef{copy_to(v, place.storage, node.name), nullptr, place.storage};
  }
}

void Finalizer::place_outputs(Step& s) {
  const ir::Node& node = *s.run_node;
  const loader::LoadedPlugin* plugin = plugin_of(s);
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const ir::ValueId v = node.outputs[o];
    OutputPlace& out = s.outputs[o];
    out.storage = plan_.value_storage[at(v)];
    out.local = storages_.local_of(out.storage, plugin);
    out.slot = in_.last_use[at(v)] == -1 ? -1 : v;
    out.arena_offset = -1;
    out.inplace_input = -1;
    plan_.moved_bytes += value_bytes(v);
  }
}

void Finalizer::lay_out_steps() {
  plan_.slot_storage = plan_.value_storage;
  plan_.slot_names.clear();
  for (const ir::Value& v : graph_.values) plan_.slot_names.push_back(v.name);
  slot_value_.resize(num_values_);
  for (size_t v = 0; v < num_values_; ++v) slot_value_[v] = static_cast<ir::ValueId>(v);
  plan_.crossings.clear();
  plan_.crossing_bytes = plan_.moved_bytes = 0;
  for (auto& [key, tensor] : plan_.constant_copies)
    plan_.crossings.push_back(
        Crossing{graph_.values[at(key.first)].name, "host", storages_.name_of(key.second), "", tensor->nbytes(), true});
  plan_.input_slots.assign(graph_.inputs.begin(), graph_.inputs.end());
  for (const Step* k : kernels_) {
    Step s = *k;  // the planning run's kernel step, with its inputs redirected
    s.frees.clear();
    if (s.folded) {  // computed when planning; kept so that node_io and callbacks still see it
      for (OutputPlace& o : s.outputs) o = OutputPlace{};
      steps_.push_back(std::move(s));
      continue;
    }
    route_inputs(s);
    place_outputs(s);
    s.guards.clear();
    const std::vector<ir::ValueId> outputs = s.run_node->outputs;
    steps_.push_back(std::move(s));
    for (ir::ValueId v : outputs)
      if (is_output_[at(v)] && plan_.value_storage[at(v)] != kHost) copy_to(v, kHost, "the graph's outputs");
  }
  plan_.outputs.clear();
  for (ir::ValueId v : graph_.outputs) {
    if (const Tensor* constant = constant_of(v))
      plan_.outputs.push_back(InputRef{-1, constant, kHost});
    else
      plan_.outputs.push_back(
          InputRef{plan_.value_storage[at(v)] == kHost ? v : copies_.find(v, kHost), nullptr, kHost});
  }
  plan_.num_slots = static_cast<int32_t>(plan_.slot_storage.size());
}

// ---- 3. lives and frees

void Finalizer::plan_lives() {
  const size_t num_slots = plan_.slot_storage.size();
  first_.assign(num_slots, -1);
  last_.assign(num_slots, -1);
  reads_.assign(num_slots, 0);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    auto read = [&](int32_t slot) {
      last_[static_cast<size_t>(slot)] = static_cast<int32_t>(i);
      ++reads_[static_cast<size_t>(slot)];
    };
    if (s.kind == Step::Kind::Convert) {
      read(s.src);
      first_[static_cast<size_t>(s.dst)] = static_cast<int32_t>(i);
      continue;
    }
    for (const InputRef& r : s.inputs)
      if (r.slot >= 0) read(r.slot);
    for (ir::ValueId v : s.run_node->outputs) first_[at(v)] = static_cast<int32_t>(i);
  }
  for (const InputRef& r : plan_.outputs)
    if (r.slot >= 0) last_[static_cast<size_t>(r.slot)] = kForever;
  for (int32_t s : plan_.input_slots) first_[static_cast<size_t>(s)] = -1;

  plan_.lives.assign(num_slots, ValueLife{});
  for (size_t slot = 0; slot < num_slots; ++slot) {
    ValueLife& life = plan_.lives[slot];
    const ValueInfo& info = plan_.record.infos[at(slot_value_[slot])];
    if (first_[slot] < 0) continue;  // graph inputs, constants, values no step makes
    life.first = first_[slot];
    life.last = last_[slot];
    life.bytes = storages_.nbytes(plan_.slot_storage[slot], info.dtype, info.shape);
    if (slot >= num_values_) {
      life.kind = ValueLife::Kind::HostArena;  // a converted copy: the host allocates it
    } else if (plan_.record.infos[slot].view_of != ir::kNoValue || plan_.record.infos[slot].view_of_outside) {
      life.kind = ValueLife::Kind::View;
      life.view_of = plan_.record.infos[slot].view_of;
      life.bytes = 0;
    } else {
      life.kind = plan_.record.infos[slot].host_allocated ? ValueLife::Kind::HostArena : ValueLife::Kind::Kernel;
    }
  }
  // Frees: each slot goes after its last reader (a slot nobody reads is never held).
  for (size_t slot = 0; slot < num_slots; ++slot)
    if (last_[slot] >= 0 && last_[slot] != kForever)
      steps_[static_cast<size_t>(last_[slot])].frees.push_back(static_cast<int32_t>(slot));
}

// ---- 4. joins and in-place

// Joins need the arena: their parts are written at offsets in the holder's bytes.
void Finalizer::plan_joins() {
  if (!use_arena() || !in_.config.join_in_place) return;
  joins_ = place_joins(steps_, plan_.lives, plan_.record.infos, plan_.slot_storage, num_values_);
  if (joins_.joins_elided > 0) log::get().debug("plan: {} join(s) copy nothing", joins_.joins_elided);
}

// Input r of step s (at index i) is an owned buffer, read here once and never after, in
// output o's storage and dtype. Earlier readers are done in a sequential run; a parallel
// run may still be in them, so there the step must be the input's only reader.
bool Finalizer::dies_here(const Step& s, size_t i, const InputRef& r, size_t o) const {
  const auto src = static_cast<size_t>(r.slot);
  const ValueLife& sl = plan_.lives[src];
  const bool owned =
      sl.kind == ValueLife::Kind::HostArena || sl.kind == ValueLife::Kind::Kernel || written_in_place_[src];
  const auto here =
      std::count_if(s.inputs.begin(), s.inputs.end(), [&](const InputRef& x) { return x.slot == r.slot; });
  return owned && here == 1 && !(in_.parallel && reads_[src] != 1) && last_[src] == static_cast<int32_t>(i) &&
         !viewed_[src] && plan_.slot_storage[src] == s.outputs[o].storage &&
         same_dtype(plan_.record.infos[at(slot_value_[src])].dtype,
                    plan_.record.infos[static_cast<size_t>(s.outputs[o].slot)].dtype);
}

// An output takes a dying input's buffer where the kernel allows it. A value written in
// place is a view that owns nothing, yet its whole buffer: it may be written over in turn
// (a chain such as scale -> mask -> softmax), with its bytes here.
void Finalizer::plan_in_place() {
  const size_t num_slots = plan_.lives.size();
  viewed_.assign(num_slots, 0);
  written_in_place_.assign(num_slots, 0);
  buffer_bytes_.assign(num_slots, 0);
  for (size_t slot = 0; slot < num_slots; ++slot) buffer_bytes_[slot] = plan_.lives[slot].bytes;
  for (const ValueLife& l : plan_.lives)
    if (l.kind == ValueLife::Kind::View && l.view_of != ir::kNoValue) viewed_[at(l.view_of)] = 1;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    if (s.kind != Step::Kind::Kernel || s.kernel->kernel.def->output_mode != SY_OUTPUT_HOST_ALLOCATED) continue;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const int32_t in = s.kernel->output_inplace[o];
      const int32_t out_slot = s.outputs[o].slot;
      if (in < 0 || out_slot < 0 || written_into_join(out_slot)) continue;
      const InputRef& r = s.inputs[static_cast<size_t>(in)];
      if (r.slot < 0) continue;
      const auto src = static_cast<size_t>(r.slot);
      if (!dies_here(s, i, r, o) ||
          buffer_bytes_[src] != static_cast<int64_t>(plan_.lives[static_cast<size_t>(out_slot)].bytes))
        continue;
      s.outputs[o].inplace_input = in;
      ValueLife& ol = plan_.lives[static_cast<size_t>(out_slot)];
      ol.kind = ValueLife::Kind::View;  // it owns nothing: its bytes are the input's
      ol.view_of = r.slot;
      ol.bytes = 0;
      viewed_[src] = 1;
      written_in_place_[static_cast<size_t>(out_slot)] = 1;
      buffer_bytes_[static_cast<size_t>(out_slot)] = buffer_bytes_[src];
    }
  }
}

// In-place at the end (SDK 1.2): a smaller input's buffer may sit at the end of the
// output's; the memory planner places it there where it can (plan_memory).
void Finalizer::plan_in_place_tails() {
  for (size_t i = 0; i < steps_.size() && !in_.parallel; ++i) {
    const Step& s = steps_[i];
    if (s.kind != Step::Kind::Kernel || s.kernel->kernel.def->output_mode != SY_OUTPUT_HOST_ALLOCATED) continue;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const int32_t in = s.kernel->output_inplace_tail[o];
      const int32_t out_slot = s.outputs[o].slot;
      if (in < 0 || out_slot < 0 || s.outputs[o].inplace_input >= 0 || s.outputs[o].storage != kHost ||
          written_into_join(out_slot))
        continue;
      const InputRef& r = s.inputs[static_cast<size_t>(in)];
      if (r.slot < 0 || !dies_here(s, i, r, o)) continue;
      int32_t root = r.slot;  // the buffer's owner: through the values written in place over it
      while (written_in_place_[static_cast<size_t>(root)]) root = plan_.lives[static_cast<size_t>(root)].view_of;
      ValueLife& owner = plan_.lives[static_cast<size_t>(root)];
      if (owner.kind == ValueLife::Kind::HostArena && owner.bytes < plan_.lives[static_cast<size_t>(out_slot)].bytes)
        owner.tail_of = out_slot;
    }
  }
}

// ---- 5. memory: one arena for host memory, one per device storage

void Finalizer::place_memory() {
  const size_t num_slots = plan_.lives.size();
  const bool use_arena = this->use_arena();
  auto host_memory = [&](int32_t id) { return storages_.in_host_memory(id); };
  std::vector<int32_t> groups{kHost};
  for (int32_t id : plan_.slot_storage)
    if (!host_memory(id) && std::find(groups.begin(), groups.end(), id) == groups.end()) groups.push_back(id);
  plan_.device_arenas.clear();
  std::vector<int64_t> offset(num_slots, -1);
  for (int32_t g : groups) {
    std::vector<ValueLife> lives = plan_.lives;
    for (size_t slot = 0; slot < num_slots; ++slot)
      if (g == kHost ? !host_memory(plan_.slot_storage[slot]) : plan_.slot_storage[slot] != g)
        lives[slot].kind = ValueLife::Kind::Unused;
    MemoryPlan m = plan_memory(std::move(lives), use_arena);
    if (g == kHost) place_join_parts(m);
    for (size_t slot = 0; slot < num_slots; ++slot)
      if (m.offset[slot] >= 0) offset[slot] = m.offset[slot];
    if (g == kHost) {
      plan_.memory = std::move(m);
      plan_.arena =
          use_arena && plan_.memory.arena_bytes > 0 ? std::make_unique<ArenaPool>(plan_.memory.arena_bytes) : nullptr;
      continue;
    }
    Plan::DeviceArena d;
    d.storage = g;
    d.memory = std::move(m);
    const StorageTable* storages = &storages_;  // outlives the plan: the executor owns both
    if (use_arena && d.memory.arena_bytes > 0)
      d.pool = std::make_unique<ArenaPool>(d.memory.arena_bytes, [storages, g](size_t bytes, void** data) {
        return storages->allocate_bytes(g, bytes, data);
      });
    plan_.device_arenas.push_back(std::move(d));
  }
  for (Step& s : steps_) {
    if (s.kind == Step::Kind::Convert) {
      s.arena_offset = offset[static_cast<size_t>(s.dst)];
      continue;
    }
    for (OutputPlace& o : s.outputs) {
      if (o.slot >= 0 && o.inplace_input < 0) o.arena_offset = offset[static_cast<size_t>(o.slot)];
      o.holds_arena = o.arena_offset >= 0 && plan_.memory.last[static_cast<size_t>(o.slot)] == kForever;
    }
  }
}

// A join's parts and nested joins sit at their offsets in the holder's bytes.
void Finalizer::place_join_parts(MemoryPlan& m) const {
  for (size_t slot = 0; slot < joins_.holder.size(); ++slot) {
    const int32_t h = joins_.holder[slot];
    if (h < 0) continue;
    const int64_t base = m.offset[static_cast<size_t>(h)];
    if (base < 0)
      throw Error(ErrorKind::Internal, "memory plan: the join output '" + plan_.slot_names[static_cast<size_t>(h)] +
                                           "' that holds '" + plan_.slot_names[slot] + "' was not placed in the arena");
    m.offset[slot] = base + joins_.offset[slot];
  }
}

// ---- 6. guards: sizes the sym nodes read were fixed from these shapes

void Finalizer::add_guards() {
  for (ir::ValueId v : plan_.record.shape_reads) {
    if (producer_[at(v)] < 0) continue;
    for (Step& s : steps_) {
      if (s.kind != Step::Kind::Kernel) continue;
      const auto& outs = s.run_node->outputs;
      auto it = std::find(outs.begin(), outs.end(), v);
      if (it == outs.end()) continue;
      s.guards.emplace_back(static_cast<int32_t>(it - outs.begin()), static_cast<int32_t>(plan_.guard_shapes.size()));
      plan_.guard_shapes.push_back(plan_.record.infos[at(v)].shape);
    }
  }
}

void Finalizer::finish() {
  plan_.steps = std::move(steps_);
  plan_.record.steps.clear();
  plan_.complete = true;
  if (plan_.crossing_bytes > 0) {
    const double share = plan_.moved_bytes > 0 ? static_cast<double>(plan_.crossing_bytes) / plan_.moved_bytes : 1.0;
    const bool asked = in_.preferred_storage != kHost;  // [runtime] prefer_storage makes conversions on purpose
    const double warn_share = in_.config.copy_warning_share;
    const auto level = share > warn_share && !asked ? spdlog::level::warn : spdlog::level::debug;
    log::get().log(
        level, "{} conversion(s) between storages move {} bytes per run, {:.0f}% of the {} bytes the kernels write{}",
        plan_.crossings.size(), plan_.crossing_bytes, 100 * share, plan_.moved_bytes,
        share > warn_share ? " ([runtime] copy_warning_share; `switchyard plan` lists them)" : "");
  }
  log::get().debug("plan: {} steps, {} slots; host arena {} bytes for {} bytes of values; heap peak {} bytes",
                   plan_.steps.size(), plan_.num_slots, plan_.memory.arena_bytes, plan_.memory.arena_values_bytes,
                   plan_.memory.heap_peak_bytes);
}

}  // namespace

void finalize_plan(const FinalizeInputs& in, Plan& plan) { Finalizer(in, plan).run(); }

}  // namespace switchyard::exec
