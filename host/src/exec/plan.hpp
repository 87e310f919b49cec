// A plan: everything the executor decided for one input-shape signature, in its stages.
// The first run of a signature is the planning run (planning_run.cpp, planner.cpp: sym
// nodes, selection, fusion, kernel instances); it leaves a PlanningRecord of what it
// decided and what each value turned out to be. The passes of finalize.cpp compile the
// record: where each value lives (storages, conversions), in-place writes, the arenas,
// and a flat list of steps. The runner (step.cpp; parallel.cpp) walks those steps.
#pragma once

#include "exec/memory_plan.hpp"
#include "exec/storage.hpp"
#include "ir/graph.hpp"
#include "loader/plugin_manager.hpp"
#include "select/selector.hpp"

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchyard::exec {

// "node 'name' (op o, module m)", how errors and logs name a node.
std::string describe(const ir::Node& node);

// A kernel instance bound to one node; destroys the instance before its plugin unloads.
struct BoundKernel {
  loader::KernelRef kernel;
  SY_KernelInstance* instance = nullptr;
  std::vector<SY_TensorDesc> output_descs;  // from infer, where the kernel has one
  std::vector<SY_StorageMask> input_reads;  // from `storage` (host only without it)
  std::vector<SY_StorageMask> output_writes;
  std::vector<int32_t> output_inplace;       // per output: an input index, or -1
  std::vector<int32_t> output_inplace_tail;  // per output: an input its buffer may end with (1.2), or -1
  // The kernel's own cost of one run (SDK 1.1 `cost`), asked once when it is created;
  // has_cost is false without `cost` or when it failed (warned): the op's formula applies.
  bool has_cost = false;
  double flops = 0, bytes = 0;
  uint64_t scratch_bytes = 0;
  // What the kernel multiplies in (SY_ComputeReport, asked with `storage`): lanes 0 when it
  // did not say, i.e. its tensors' own dtype.
  DLDataType compute{0, 0, 0};
  uint64_t compute_converted_bytes = 0, compute_constant_bytes = 0;
  std::string compute_note;
  // A float32 island (island.hpp): the model's half-precision dtype it converts from and
  // back to (lanes 0: none), and the island's kernel, which outlives `instance`.
  DLDataType island{0, 0, 0};
  std::shared_ptr<const void> adapter;
  BoundKernel() = default;
  BoundKernel(const BoundKernel&) = delete;
  BoundKernel& operator=(const BoundKernel&) = delete;
  ~BoundKernel();
};

// What was decided for one graph node (for `plan` and error messages).
struct NodeDecision {
  std::unique_ptr<BoundKernel> bound;
  std::string backend;  // "host" for sym nodes
  select::Selection selection;
  std::unique_ptr<ir::Node> resolved;  // (optional) the node with its bound attributes filled in
  std::unique_ptr<ir::Node> fused;     // (optional) run in place of this node and the next one or two
  int32_t fused_last = -1;             // with `fused`: the last node of the chain it runs
  int32_t folded_into = -1;            // this node runs inside that node's fused kernel
  bool bf16_asked = false;             // [precision] asks this node for bfloat16 products
  // For node events and node_io, named once when the node is bound: the value names of
  // the inputs its kernel reads, and with `fused` the graph nodes it runs, this one first.
  std::vector<std::string> input_sources;
  std::vector<std::string> fused_members;
  // The node as its kernel sees it.
  const ir::Node& as_run(const ir::Node& graph_node) const {
    return fused ? *fused : resolved ? *resolved : graph_node;
  }
};

// Where a step reads one input: a live slot, or a tensor the plan holds.
struct InputRef {
  int32_t slot = -1;
  const Tensor* constant = nullptr;  // one of Plan::constants
  int32_t storage = kHost;           // where the tensor it names lives
  bool absent() const { return slot < 0 && constant == nullptr; }
};

// What the planning run learned of one value.
struct ValueInfo {
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  bool produced = false;               // a kernel made it
  bool host_allocated = false;         // ... into memory the host gave it
  ir::ValueId view_of = ir::kNoValue;  // a kernel output pointing into this node output's memory
  bool view_of_outside = false;        // ... or into a graph input's or a constant's
};

struct OutputPlace {
  int32_t slot = -1;                        // -1: nobody reads it; dropped at once
  int32_t storage = kHost;                  // where it lives
  SY_StorageIndex local = SY_STORAGE_HOST;  // the same, as the kernel's plugin names it
  int64_t arena_offset = -1;                // host-allocated outputs placed in the arena
  int32_t inplace_input = -1;               // host-allocated: takes this input's buffer
  bool holds_arena = false;                 // a graph output in the arena: it keeps the arena alive
};

// One step of a run: a kernel, or a conversion of a value between storages.
struct Step {
  enum class Kind : uint8_t { Kernel, Convert };
  Kind kind = Kind::Kernel;
  int32_t node = -1;  // the graph node it runs (a conversion: the reader it serves)
  // Kernel
  const ir::Node* run_node = nullptr;  // the node as run (resolved or fused)
  const BoundKernel* kernel = nullptr;
  const std::string* backend = nullptr;
  const NodeDecision* decided = nullptr;  // what planning decided for the node (names for events)
  std::vector<InputRef> inputs;
  std::vector<SY_StorageIndex> input_storage;  // per input, as the kernel's plugin names it
  std::vector<OutputPlace> outputs;
  bool pass_storages = false;  // the kernel has `storage`: run args carry the above
  bool folded = false;         // planning: its inputs were all constants, so its
                               // outputs were kept as constants (no step in the plan)
  bool elided = false;         // a join whose inputs were written into its output's arena
                               // bytes (join_placement.hpp): it copies nothing
  // Convert
  ir::ValueId value = ir::kNoValue;  // the value it converts
  int32_t src = -1, dst = -1;        // slots
  int32_t from = kHost, to = kHost;  // storages
  int64_t arena_offset = -1;         // the converted copy's place in `to`'s arena
  // Both: slots whose last reader this step is.
  std::vector<int32_t> frees;
  // Outputs whose shapes sym nodes read when planning: checked each time this step runs.
  std::vector<std::pair<int32_t, int32_t>> guards;  // (output index, index into Plan::guard_shapes)
};

// The converted copies a list of steps makes: one per (value, storage), each made by a
// conversion step just before its first reader. A copy between two plugin storages goes
// through host memory. Shared by the planning run and the final plan's layout.
class ConvertedCopies {
 public:
  // The slot holding value v (living in `from`, in slot v) in storage `to`; `node` is the
  // graph node the conversion is counted under. `add(Step&&)` appends a conversion step
  // (its `dst` unset) and returns the slot it fills.
  template <typename AddStep>
  int32_t slot_of(ir::ValueId v, int32_t from, int32_t to, int32_t node, AddStep&& add) {
    if (from == to) return v;
    if (auto found = slots_.find({v, to}); found != slots_.end()) return found->second;
    const int32_t src = from != kHost && to != kHost ? slot_of(v, from, kHost, node, add) : v;
    Step c;
    c.kind = Step::Kind::Convert;
    c.node = node;
    c.value = v;
    c.src = src;
    c.from = src == v ? from : kHost;
    c.to = to;
    const int32_t dst = add(std::move(c));
    slots_[{v, to}] = dst;
    return dst;
  }
  // The slot of value v's copy in `to`, or -1 when none was made.
  int32_t find(ir::ValueId v, int32_t to) const {
    auto found = slots_.find({v, to});
    return found == slots_.end() ? -1 : found->second;
  }

 private:
  std::map<std::pair<ir::ValueId, int32_t>, int32_t> slots_;
};

// Dependencies among steps, for runs with inter_op_threads > 1.
struct Schedule {
  std::vector<int32_t> roots;                    // steps that wait for no other step
  std::vector<std::vector<int32_t>> successors;  // per step: steps that read its outputs
  std::vector<int32_t> num_producers;            // per step: distinct steps it waits for
  std::vector<int32_t> num_readers;              // per slot: steps that read it
  std::vector<std::vector<int32_t>> reads;       // per step: the distinct slots it reads
};

// A conversion for `plan` and the run log: a value crossing storages.
struct Crossing {
  std::string value, from, to, reader;
  uint64_t bytes = 0;
  bool constant = false;  // done once when the plan was made
};

// Stage 1's product: what the planning run (planning_run.cpp, planner.cpp) learned by
// running the graph once at this signature. The passes of finalize.cpp compile it.
struct PlanningRecord {
  std::vector<NodeDecision> nodes;       // parallel to Graph::nodes: what was decided
  std::vector<ir::Attribute> scalars;    // per value: scalar values as evaluated
  std::vector<ValueInfo> infos;          // per value: dtype, shape, who made its memory
  std::vector<Step> steps;               // the planning run's own steps (cleared once compiled)
  std::vector<ir::ValueId> shape_reads;  // values whose shapes sym nodes read
};

// One signature's plan: the planning record (kept for `plan`, reports and error messages)
// and what the passes compiled from it, which the runner (step.cpp, parallel.cpp) walks.
// Steps point into the record's kernels and the constants, so the two live together.
struct Plan {
  PlanningRecord record;
  bool complete = false;  // the passes ran: the steps below are laid out
  // Constants: the graph's, sym::tensor results, folded nodes' outputs and their
  // conversions. Steps read them by pointer, so a deque keeps their addresses.
  std::deque<Tensor> constants;
  std::vector<InputRef> value_constant;  // per value: where its constant is, if it is one
  std::map<std::pair<ir::ValueId, int32_t>, const Tensor*> constant_copies;  // (value, storage): converted once
  // The executable plan. Slot v < number of values holds value v; converted copies take
  // the slots after.
  std::vector<Step> steps;
  int32_t num_slots = 0;
  std::vector<int32_t> input_slots;    // per graph input
  std::vector<InputRef> outputs;       // per graph output (always plain host)
  std::vector<int32_t> value_storage;  // per value: the storage it lives in
  // Per graph node: bytes of its run-time inputs that arrive in a storage holding what it
  // computes in (a .bf16 storage for a bfloat16 kernel), which its kernel's
  // SY_ComputeReport counted as converted per run but which need no conversion.
  std::vector<uint64_t> compute_arrives_bytes;
  std::vector<std::vector<int64_t>> guard_shapes;  // per shape_reads entry: the shape planned for
  std::vector<int32_t> slot_storage;               // per slot
  std::vector<std::string> slot_names;             // per slot: "x", or "x@cuda/cuda" for a copy
  std::vector<Crossing> crossings;
  uint64_t crossing_bytes = 0, moved_bytes = 0;  // per run: converted, and all values' bytes
  // Memory: each slot's life, the arena placement made from them, the arenas' buffers.
  std::vector<ValueLife> lives;
  MemoryPlan memory;                 // the host arena
  std::unique_ptr<ArenaPool> arena;  // (optional) host arena buffers
  struct DeviceArena {
    int32_t storage = kHost;
    MemoryPlan memory;
    std::unique_ptr<ArenaPool> pool;
  };
  std::vector<DeviceArena> device_arenas;  // one per non-host storage with planned values
  std::unique_ptr<Schedule> schedule;      // set when runs are parallel

  // Constant `host` (value v) as read in storage `to`: itself for host memory, else a
  // copy converted once and kept with the plan.
  const Tensor* constant_in(int32_t to, ir::ValueId v, const Tensor& host, const ir::Graph& graph,
                            const StorageTable& storages);
};

}  // namespace switchyard::exec
