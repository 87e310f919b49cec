// Stage 3: the runner walks a plan's steps with the one per-node step (step.cpp):
// sequentially, or with inter_op_threads > 1 as oneTBB tasks in dependency order
// (parallel.cpp). The planning run (planning_run.cpp) takes the same step for each step it
// learns, so the first run of a signature and every later one read inputs, run kernels and
// record node_io the same way.
#pragma once

#include "config/config.hpp"
#include "exec/plan.hpp"
#include "exec/storage.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace switchyard::exec {

enum class Capture { None, Outputs, All };

struct RunOptions {
  Capture capture = Capture::None;
  const NodeCallback* callback = nullptr;  // (optional)
  bool check_finite = false;               // fail at the first node producing NaN or Inf
  bool profile = false;                    // record each node's time (RunResult::profile)
  bool measure_memory = false;             // sample heap bytes in use after each node
  // (optional) a profile from an earlier run, whose storage this run's profile reuses.
  std::vector<NodeProfile>* recycled_profile = nullptr;
};

struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<NodeIO> node_io;
  RunStats stats;
  std::vector<NodeProfile> profile;  // options.profile only: one entry per node run
};

// What one run holds while it walks the steps (step.cpp).
struct RunState {
  const Plan* plan = nullptr;
  const RunOptions* options = nullptr;
  RunResult* result = nullptr;
  std::vector<Tensor> slots;
  std::shared_ptr<ArenaPool::Buffer> arena;                       // host arena, or null
  std::vector<std::shared_ptr<ArenaPool::Buffer>> device_arenas;  // per Plan::device_arenas
  bool in_place = false;                                          // outputs may take their inputs' buffers
  bool parallel = false;                                          // steps free slots by reader counts (parallel.cpp)
  bool keep_inputs = false;  // node_io "all" or a callback: keep each node's inputs
  size_t heap_base = 0;      // measure_memory: bytes in use when the run began
  std::chrono::steady_clock::time_point start;
  std::vector<int64_t> start_ns, end_ns;  // profile: per step
  std::vector<int32_t> lanes;
  std::vector<NodeIO> records;  // per step (parallel runs keep graph order)
  std::mutex callback_mutex;    // callbacks run one at a time
  // Counted with atomics: parallel runs take steps on several threads.
  std::atomic<size_t> nodes_run{0}, live_count{0}, live_bytes{0}, peak_count{0}, peak_bytes{0};
  void hold(int32_t slot, Tensor t);  // puts t in a slot (none: slot < 0)
  void held(const Tensor& t);         // a tensor entered a slot
  void dropped(const Tensor& t);      // ... and left it
};

// Per-thread buffers for one step, reused from step to step.
struct Scratch {
  std::vector<const DLTensor*> in_ptrs;
  std::vector<Tensor> in_tensors, outs;
  std::vector<DLTensor*> out_ptrs;
  std::vector<DLManagedTensor*> produced;
};

class Runner {
 public:
  // Sets up the oneTBB arena where the config asks for inter-op threads.
  Runner(const ir::Graph& graph, const StorageTable& storages, const config::Config& config);
  bool parallel() const { return parallel_ != nullptr; }
  // The dependencies among a complete plan's steps, for parallel runs.
  Schedule make_schedule(const Plan& plan) const;
  // Runs a complete plan: in parallel where it has a schedule, else step by step.
  RunResult run(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const;

  // What the planning run uses to walk the steps it learns as it goes.
  void begin_run(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options, RunState& state,
                 RunResult& result) const;
  void run_step(const Step& step, size_t index, RunState& state, Scratch& scratch) const;
  void end_run(RunState& state) const;

 private:
  RunResult run_sequential(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const;
  RunResult run_parallel(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const;
  void run_step_body(const Step& step, size_t index, RunState& state, Scratch& scratch) const;
  void run_conversion(const Step& step, RunState& state) const;
  void run_kernel(const Step& step, RunState& state, Scratch& scratch) const;
  void host_outputs(const Step& step, RunState& state, Scratch& scratch) const;
  bool join_in_place(const Step& step, RunState& state, Scratch& scratch) const;
  void adopt_outputs(const Step& step, RunState& state, Scratch& scratch) const;
  [[noreturn]] void kernel_failed(const Step& step, SY_Status s, const SY_CallContext& call, Scratch& scratch) const;
  void record_step(const Step& step, size_t index, RunState& state, Scratch& scratch) const;
  void finish_step(const Step& step, size_t index, RunState& state) const;
  void check_outputs(const Step& step, const std::vector<Tensor>& outs) const;
  void check_finite(const Step& step, const std::vector<Tensor>& outs) const;
  // memory.cpp: an arena output that a later run must not trust blindly.
  Tensor guard_arena_view(const Step& step, size_t o, Tensor t, const RunState& state) const;
  std::string describe_step(const Step& step) const;  // "node '...' (op ...)"

  const ir::Graph& graph_;
  const StorageTable& storages_;
  struct Parallel;  // parallel.cpp: the oneTBB arena (null when sequential)
  std::shared_ptr<Parallel> parallel_;
};

// True when `p` lies inside the bytes `t` spans (a kernel returned a view of `t`).
bool points_into(const void* p, const Tensor& t);

}  // namespace switchyard::exec
