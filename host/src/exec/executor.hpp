// Runs a validated graph on the kernels selection chose. The first run of each input-shape
// signature plans while it runs (planner.cpp), then fixes storages, conversions, in-place
// writes and arenas into a flat list of steps (finalize.cpp); later runs of that signature
// only walk the steps with the one per-node step in step.cpp, sequentially or, with
// inter_op_threads > 1, in parallel (parallel.cpp). Plans are cached per signature in a
// bounded cache (plan_cache.hpp).
#pragma once

#include "config/config.hpp"
#include "exec/plan.hpp"
#include "exec/plan_cache.hpp"
#include "exec/runner.hpp"
#include "exec/storage.hpp"
#include "ir/graph.hpp"
#include "loader/plugin_manager.hpp"
#include "select/selector.hpp"

#include <switchyard/runtime.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace switchyard::exec {

// What selection sees of the loaded plugins: their kernels, families and capability
// queries. `plugins` must outlive the catalog.
select::Catalog plugin_catalog(const loader::PluginManager& plugins);

class Executor {
 public:
  // `fuse`: run producer/consumer pairs as one fused kernel where a backend offers it.
  Executor(const ir::Graph& graph, const config::Config& config, const loader::PluginManager& plugins,
           bool fuse = true);
  ~Executor();

  // Checks the inputs against the graph's declared inputs and runs. Thread-safe with
  // respect to other run() calls (a new signature plans under a lock).
  RunResult run(const std::vector<Tensor>& inputs, const RunOptions& options);

  // The plan for these inputs' signature, or null if none is cached.
  std::shared_ptr<const Plan> cached_plan(const std::vector<Tensor>& inputs) const;
  const StorageTable& storages() const { return storages_; }
  const PlanCache& plan_cache() const { return cache_; }

 private:
  friend class PlanningRun;  // planning_run.cpp: walks the graph with the methods below
  // planning_run.cpp: the planning run of a new signature.
  RunResult plan_and_run(Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options);
  // planner.cpp: what the planning run decides per node.
  void bind_node(size_t index, Plan& plan, const ir::Node& node, const std::vector<const DLTensor*>& inputs);
  // A node with half-precision inputs as a float32 island (island.hpp); false if it has
  // none, or no backend takes its float32 twin either.
  bool bind_island(size_t index, Plan& plan, const ir::Node& node, const std::vector<const DLTensor*>& inputs);
  std::unique_ptr<BoundKernel> create_kernel(const ir::Node& node, const select::Candidate& winner,
                                             const std::vector<const DLTensor*>& inputs) const;
  // Metadata of values as kernels are asked about them (planner.cpp's planning run).
  using MetadataOf = std::function<std::vector<const DLTensor*>(const std::vector<ir::ValueId>&)>;
  void try_fuse(size_t index, Plan& plan, const MetadataOf& metadata);
  const ir::Node& prepare_node(size_t index, Plan& plan, const MetadataOf& metadata);
  ir::Node resolve(const ir::Node& node, const Plan& plan) const;
  // Logs, for the first plan only, what [precision] asked of nodes and what their kernels
  // compute in, each reason for float32 once, and the float32 islands.
  void log_compute(const Plan& plan);
  // The `options` of the rule that routes node `index`, or nullptr (none, or no rule matches).
  const std::vector<config::RuleOption>* rule_options(size_t index) const;
  // The backends node `index` is routed to: its rule's, else the default list (empty: any).
  const std::vector<std::string>& routing(size_t index) const;
  // The passes of finalize.cpp (storages, conversions, in-place, arenas, steps), then the
  // parallel schedule.
  void finalize(Plan& plan) const;
  // preflight.cpp: refuses a new signature whose estimated memory need exceeds what the
  // process may use; a model's first one is measured by planning runs at batch 1 and 8.
  void preflight(const std::vector<Tensor>& inputs);
  void preflight_first(const std::vector<Tensor>& inputs);
  uint64_t probe_peak(const std::vector<Tensor>& inputs, int64_t batch);

  std::string describe_node(size_t index) const { return describe(graph_.nodes[index]); }
  void check_inputs(const std::vector<Tensor>& inputs) const;

  const ir::Graph& graph_;
  const config::Config& config_;
  const loader::PluginManager& plugins_;
  StorageTable storages_;
  int32_t preferred_storage_ = kHost;  // [runtime] prefer_storage; kHost: none
  select::Catalog catalog_;
  std::vector<int32_t> rule_of_;             // per node: the rule routing it (select::match_rules), -1 none
  std::vector<config::Compute> compute_of_;  // per node: what [precision] asks of it (select::match_compute)
  bool compute_logged_ = false;              // log_compute has spoken (under planning_mutex_)
  std::vector<int32_t> last_use_;            // per value: last consuming node; -1 never; kForever output
  std::vector<int32_t> fusable_;             // per node: the consumer it could be fused with, or -1
  bool fuse_ = true;
  Runner runner_;
  PlanCache cache_;
  std::mutex planning_mutex_;  // one new signature plans at a time
};

}  // namespace switchyard::exec
