// Runs a validated graph on the kernels selection chose. A plan (the chosen kernel and
// its instance per node, plus value lifetimes) is built on the first run of each
// input-shape signature and reused after; later runs do no selection and no lookups.
#pragma once

#include "config/config.hpp"
#include "exec/memory_plan.hpp"
#include "ir/graph.hpp"
#include "loader/plugin_manager.hpp"
#include "select/selector.hpp"

#include <switchyard/runtime.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace switchyard::exec {

// A kernel instance bound to one node; destroys the instance before its plugin unloads.
struct BoundKernel {
  loader::KernelRef kernel;
  SY_KernelInstance* instance = nullptr;
  std::vector<SY_TensorDesc> output_descs;  // from infer, where the kernel has one
  BoundKernel() = default;
  BoundKernel(const BoundKernel&) = delete;
  BoundKernel& operator=(const BoundKernel&) = delete;
  ~BoundKernel();
};

struct NodePlan {
  std::unique_ptr<BoundKernel> bound;
  std::string backend;
  select::Selection selection;
  std::unique_ptr<ir::Node> fused;  // (optional) run in place of this node and the next
  int32_t folded_into = -1;         // this node runs inside that node's fused kernel
};

// Dependencies among the nodes a complete plan runs (folded nodes excluded), for runs
// with inter_op_threads > 1.
struct Schedule {
  std::vector<int32_t> roots;                    // nodes that wait for no other node
  std::vector<std::vector<int32_t>> successors;  // per node: nodes that read its outputs
  std::vector<int32_t> num_producers;            // per node: distinct nodes it waits for
  std::vector<std::vector<ir::ValueId>> reads;   // per node: distinct non-constant values read
  std::vector<int32_t> num_readers;              // per value: nodes that read it
};

struct Plan {
  std::vector<NodePlan> nodes;  // parallel to Graph::nodes
  bool complete = false;        // every node has a kernel (set after the first full run)
  std::unique_ptr<Schedule> schedule;  // set with `complete` when runs are parallel
  // What the planning run saw, per value: the ValueLife the memory planner reads.
  std::vector<ValueLife> lives;
  MemoryPlan memory;                   // set with `complete`
  std::unique_ptr<ArenaPool> arena;    // (optional) set with `complete` when the arena is used
};

// The arena one run places host-allocated outputs in.
struct RunArena {
  const MemoryPlan* plan = nullptr;
  const std::vector<ValueLife>* lives = nullptr;
  std::shared_ptr<ArenaPool::Buffer> buffer;
  size_t bytes = 0;
  bool contains(const void* p) const {
    const char* q = static_cast<const char*>(p);
    return q >= buffer->data && q < buffer->data + bytes;
  }
};

enum class Capture { None, Outputs, All };

struct RunOptions {
  Capture capture = Capture::None;
  const NodeCallback* callback = nullptr;  // (optional)
  bool check_finite = false;               // fail at the first node producing NaN or Inf
  bool profile = false;                    // record each node's time (RunResult::profile)
  bool measure_memory = false;             // sample heap bytes in use after each node
};

struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<NodeIO> node_io;
  RunStats stats;
  std::vector<NodeProfile> profile;  // options.profile only: one entry per node run
};

class Executor {
 public:
  // `fuse`: run producer/consumer pairs as one fused kernel where a backend offers it.
  Executor(const ir::Graph& graph, const config::Config& config,
           const loader::PluginManager& plugins, bool fuse = true);

  // Checks the inputs against the graph's declared inputs and runs. Thread-safe with
  // respect to other run() calls (plans are built under a lock).
  RunResult run(const std::vector<Tensor>& inputs, const RunOptions& options);

  // The plan for these inputs' signature, or nullptr if none was built yet.
  const Plan* cached_plan(const std::vector<Tensor>& inputs) const;

 private:
  Plan& plan_for(const std::string& signature);
  void bind_node(size_t index, NodePlan& np, const std::vector<const DLTensor*>& inputs);
  std::unique_ptr<BoundKernel> create_kernel(const ir::Node& node, const select::Candidate& winner,
                                             const std::vector<const DLTensor*>& inputs) const;
  // Replaces node `index`'s kernel with a fused one for it and its consumer, if accepted.
  void try_fuse(size_t index, Plan& plan, const std::vector<const DLTensor*>& inputs);
  // The node's input tensors (constants or live values): DLPack views, and the tensors
  // themselves when `keep_tensors` (for node_io and callbacks).
  void gather(const ir::Node& node, const std::vector<Tensor>& live, bool keep_tensors,
              std::vector<const DLTensor*>& in_ptrs, std::vector<Tensor>& in_tensors) const;
  std::string describe_node(size_t index) const;
  std::string describe(const ir::Node& node) const;
  void check_outputs(size_t index, const NodePlan& np, const std::vector<Tensor>& outs) const;
  void check_finite(size_t index, const NodePlan& np, const std::vector<Tensor>& outs) const;
  void check_inputs(const std::vector<Tensor>& inputs) const;
  // Turns per-node end stamps (ns from the run's start; -1 = not run) into records. A
  // node starts where the one before it ended, unless `start_ns` says (parallel runs).
  std::vector<NodeProfile> make_profile(const Plan& plan, const std::vector<int64_t>& end_ns,
                                        const std::vector<int64_t>* start_ns = nullptr,
                                        const std::vector<int32_t>* lanes = nullptr) const;

  // Per-thread buffers for invoke.
  struct Scratch {
    std::vector<DLTensor*> out_ptrs;
    std::vector<DLManagedTensor*> produced;
  };
  // Runs node n's bound kernel (node = the graph node, or its fused replacement) on
  // in_ptrs and fills `outs` with its checked outputs. `live` holds the node's inputs.
  // `arena` (optional): where host-allocated outputs go.
  void invoke(size_t n, const NodePlan& np, const ir::Node& node, const std::vector<const DLTensor*>& in_ptrs,
              const std::vector<Tensor>& live, bool check_finite, Scratch& scratch,
              std::vector<Tensor>& outs, const RunArena* arena = nullptr) const;
  // memory.cpp: what the planning run learns of node n's outputs, and the plan made from it.
  void record_lives(size_t n, const NodePlan& np, const ir::Node& node, const std::vector<Tensor>& outs,
                    const std::vector<Tensor>& live, Plan& plan) const;
  void finish_memory_plan(Plan& plan) const;
  // A kernel output that points into the arena where the plan did not expect a view.
  Tensor guard_arena_view(const NodePlan& np, const ir::Node& node, size_t o, Tensor t, const RunArena& arena,
                          const std::vector<Tensor>& live) const;

  // parallel.cpp: inter_op_threads > 1 runs independent nodes at once with oneTBB.
  void init_parallel();  // from the constructor
  Schedule make_schedule(const Plan& plan) const;
  RunResult run_parallel(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const;

  const ir::Graph& graph_;
  const config::Config& config_;
  const loader::PluginManager& plugins_;
  select::Catalog catalog_;
  std::vector<int32_t> last_use_;   // per value: last consuming node; -1 never; INT32_MAX output
  std::vector<int32_t> fusable_;    // per node: the consumer it could be fused with, or -1
  bool fuse_ = true;
  struct Parallel;                     // parallel.cpp: the oneTBB arena (null when sequential)
  std::shared_ptr<Parallel> parallel_;
  int deterministic_threads_ = 0;      // > 0: the OpenMP threads every kernel runs with
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  mutable std::mutex plans_mutex_;
};

std::string input_signature(const std::vector<Tensor>& inputs);

// True when `p` lies inside the bytes `t` spans (a kernel returned a view of `t`).
bool points_into(const void* p, const Tensor& t);

}  // namespace switchyard::exec
