// Runs a validated graph on the kernels selection chose. A plan (the chosen kernel and
// its instance per node, plus value lifetimes) is built on the first run of each
// input-shape signature and reused after; later runs do no selection and no lookups.
#pragma once

#include "config/config.hpp"
#include "ir/graph.hpp"
#include "plugins/plugin_manager.hpp"
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
  plugins::KernelRef kernel;
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
};

struct Plan {
  std::vector<NodePlan> nodes;  // parallel to Graph::nodes
  bool complete = false;        // every node has a kernel (set after the first full run)
};

enum class Capture { None, Outputs, All };

struct RunOptions {
  Capture capture = Capture::None;
  const NodeCallback* callback = nullptr;  // (optional)
  bool check_finite = false;               // fail at the first node producing NaN or Inf
};

struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<NodeIO> node_io;
  RunStats stats;
};

class Executor {
 public:
  Executor(const ir::Graph& graph, const config::Config& config,
           const plugins::PluginManager& plugins);

  // Checks the inputs against the graph's declared inputs and runs. Thread-safe with
  // respect to other run() calls (plans are built under a lock).
  RunResult run(const std::vector<Tensor>& inputs, const RunOptions& options);

  // The plan for these inputs' signature, or nullptr if none was built yet.
  const Plan* cached_plan(const std::vector<Tensor>& inputs) const;

 private:
  Plan& plan_for(const std::string& signature);
  void bind_node(size_t index, NodePlan& np, const std::vector<const DLTensor*>& inputs);
  std::string describe_node(size_t index) const;
  void check_outputs(size_t index, const NodePlan& np, const std::vector<Tensor>& outs) const;
  void check_finite(size_t index, const NodePlan& np, const std::vector<Tensor>& outs) const;
  void check_inputs(const std::vector<Tensor>& inputs) const;

  const ir::Graph& graph_;
  const config::Config& config_;
  const plugins::PluginManager& plugins_;
  select::Catalog catalog_;
  std::vector<int32_t> last_use_;   // per value: last consuming node; -1 never; INT32_MAX output
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  mutable std::mutex plans_mutex_;
};

std::string input_signature(const std::vector<Tensor>& inputs);

}  // namespace switchyard::exec
