// Parallel runs ([runtime] inter_op_threads > 1): with oneTBB, a node runs as a task as
// soon as every node it reads from has finished. Completion order is not graph order, so
// values are freed by reader counts rather than by last use, and node_io is gathered per
// node and kept in graph order. The planning run of a new signature stays sequential.
#include "exec/executor.hpp"
#include "exec/threads.hpp"

#include <switchyard/error.hpp>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace switchyard::exec {
namespace {

constexpr int32_t kGraphOutput = INT32_MAX;  // as in executor.cpp: last_use_ of a graph output

void raise_peak(std::atomic<size_t>& peak, size_t now) {
  size_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

struct Executor::Parallel {
  std::unique_ptr<tbb::global_control> allow;  // more threads than cores, where asked for
  std::unique_ptr<tbb::task_arena> arena;
  int kernel_threads = 0;  // OpenMP threads a kernel gets on a worker
};

void Executor::init_parallel() {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int inter = config_.inter_op_threads == 0 ? cores : config_.inter_op_threads;
  const int intra = config_.intra_op_threads > 0 ? config_.intra_op_threads : cores;
  // Deterministic: every kernel gets the same thread count whatever the schedule or the
  // calling thread, so its work splits, and float sums, come out the same.
  if (config_.deterministic) deterministic_threads_ = intra;
  if (inter <= 1) return;
  auto p = std::make_shared<Parallel>();
  // oneTBB caps its workers at the core count; a config asking for more gets them.
  if (inter > static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)))
    p->allow = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, inter);
  p->arena = std::make_unique<tbb::task_arena>(inter);
  // Otherwise the branches running at once share the intra-op threads out.
  p->kernel_threads = config_.deterministic ? intra : std::max(1, intra / inter);
  parallel_ = std::move(p);
}

Schedule Executor::make_schedule(const Plan& plan) const {
  const size_t num_nodes = graph_.nodes.size();
  Schedule s;
  s.successors.resize(num_nodes);
  s.num_producers.assign(num_nodes, 0);
  s.reads.resize(num_nodes);
  s.num_readers.assign(graph_.values.size(), 0);
  std::vector<int32_t> producers;
  for (size_t n = 0; n < num_nodes; ++n) {
    const NodePlan& np = plan.nodes[n];
    if (np.folded_into >= 0) continue;  // runs inside its producer's fused kernel
    const ir::Node& node = np.fused ? *np.fused : graph_.nodes[n];
    producers.clear();
    for (ir::ValueId v : node.inputs) {
      if (v == ir::kNoValue || graph_.values[v].kind == ir::ValueKind::Constant) continue;
      auto& reads = s.reads[n];
      if (std::find(reads.begin(), reads.end(), v) == reads.end()) {
        reads.push_back(v);
        ++s.num_readers[v];
      }
      if (graph_.values[v].kind != ir::ValueKind::NodeOutput) continue;
      int32_t p = graph_.values[v].producer;
      if (plan.nodes[p].folded_into >= 0) p = plan.nodes[p].folded_into;  // the fused node makes it
      if (std::find(producers.begin(), producers.end(), p) == producers.end()) producers.push_back(p);
    }
    s.num_producers[n] = static_cast<int32_t>(producers.size());
    for (int32_t p : producers) s.successors[p].push_back(static_cast<int32_t>(n));
    if (producers.empty()) s.roots.push_back(static_cast<int32_t>(n));
  }
  return s;
}

RunResult Executor::run_parallel(const Plan& plan, const std::vector<Tensor>& inputs,
                                 const RunOptions& options) const {
  const Schedule& sched = *plan.schedule;
  const size_t num_nodes = graph_.nodes.size(), num_values = graph_.values.size();
  RunResult result;
  std::vector<Tensor> live(num_values);
  std::atomic<size_t> live_count{0}, live_bytes{0}, peak_count{0}, peak_bytes{0}, nodes_run{0};
  auto hold = [&](ir::ValueId v, Tensor t) {
    raise_peak(peak_bytes, live_bytes += t.nbytes());
    raise_peak(peak_count, ++live_count);
    live[v] = std::move(t);
  };
  for (size_t i = 0; i < inputs.size(); ++i) hold(graph_.inputs[i], inputs[i]);

  std::unique_ptr<std::atomic<int32_t>[]> waiting(new std::atomic<int32_t>[num_nodes]);
  for (size_t n = 0; n < num_nodes; ++n) waiting[n].store(sched.num_producers[n], std::memory_order_relaxed);
  std::unique_ptr<std::atomic<int32_t>[]> readers(new std::atomic<int32_t>[num_values]);
  for (size_t v = 0; v < num_values; ++v) readers[v].store(sched.num_readers[v], std::memory_order_relaxed);

  const bool capture = options.capture != Capture::None;
  const bool keep_inputs = options.capture == Capture::All || options.callback != nullptr;
  std::vector<NodeIO> io(capture ? num_nodes : 0);
  std::vector<char> ran(num_nodes, 0);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point run_start = options.profile ? Clock::now() : Clock::time_point();
  std::vector<int64_t> start_ns, end_ns;
  std::vector<int32_t> lanes;
  if (options.profile) {
    start_ns.assign(num_nodes, 0);
    end_ns.assign(num_nodes, -1);
    lanes.assign(num_nodes, 0);
  }
  auto since_start = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - run_start).count();
  };

  std::mutex callback_mutex, error_mutex;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  tbb::task_group group;

  auto execute = [&](int32_t n) {
    if (options.profile) {
      start_ns[n] = since_start();
      lanes[n] = tbb::this_task_arena::current_thread_index();
    }
    set_this_thread_openmp(parallel_->kernel_threads);
    const NodePlan& np = plan.nodes[n];
    const ir::Node& node = np.fused ? *np.fused : graph_.nodes[n];
    std::vector<const DLTensor*> in_ptrs;
    std::vector<Tensor> in_tensors, outs;
    gather(node, live, keep_inputs, in_ptrs, in_tensors);
    Scratch scratch;
    invoke(n, np, node, in_ptrs, live, options.check_finite, scratch, outs);
    for (size_t o = 0; o < node.outputs.size(); ++o)  // outputs nobody reads are dropped at once
      if (last_use_[node.outputs[o]] != -1) hold(node.outputs[o], outs[o]);
    ++nodes_run;
    ran[n] = 1;

    if (options.callback != nullptr && *options.callback) {
      std::lock_guard<std::mutex> lock(callback_mutex);  // one call at a time, from the workers
      NodeEvent ev{node.name, node.op, np.backend, node.module_path, in_tensors, outs};
      (*options.callback)(ev);
    }
    if (capture) {
      NodeIO& rec = io[n];
      rec.node = node.name;
      rec.op = node.op;
      rec.backend = np.backend;
      rec.module_path = node.module_path;
      for (ir::ValueId v : node.inputs) rec.input_sources.push_back(v == ir::kNoValue ? "" : graph_.values[v].name);
      if (options.capture == Capture::All) rec.inputs = std::move(in_tensors);
      rec.outputs = std::move(outs);
    }
    // The last reader of a value frees it (its reads happened before every decrement).
    for (ir::ValueId v : sched.reads[n]) {
      if (last_use_[v] == kGraphOutput || readers[v].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      live_bytes -= live[v].nbytes();
      --live_count;
      live[v] = Tensor();
    }
    if (options.profile) end_ns[n] = since_start();
  };

  // Hand-offs through atomics we own, besides oneTBB's, so that the order between a task
  // and what it reads is plain to see (and to ThreadSanitizer, which cannot see inside an
  // oneTBB library not built with it).
  std::atomic<int> started{0}, finished{0};
  std::function<void(int32_t)> run_node;
  auto task = [&](int32_t n) {
    return [&, n] {
      started.load(std::memory_order_acquire);     // the caller's setup
      waiting[n].load(std::memory_order_acquire);  // every producer's outputs
      run_node(n);
    };
  };
  run_node = [&](int32_t n) {
    struct Done {
      std::atomic<int>& finished;
      ~Done() { finished.fetch_add(1, std::memory_order_release); }
    } done{finished};
    if (failed.load(std::memory_order_relaxed)) return;  // a node failed: start nothing new
    try {
      execute(n);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true);
      return;
    }
    for (int32_t next : sched.successors[n])
      if (waiting[next].fetch_sub(1, std::memory_order_acq_rel) == 1) group.run(task(next));
  };
  const int caller_threads = this_thread_openmp();  // the caller runs tasks too: restore it after
  started.store(1, std::memory_order_release);
  parallel_->arena->execute([&] {
    for (int32_t n : sched.roots) group.run(task(n));
    group.wait();
  });
  set_this_thread_openmp(caller_threads);
  finished.load(std::memory_order_acquire);  // every task's writes
  if (error) std::rethrow_exception(error);

  result.stats.nodes_run = nodes_run.load();
  result.stats.peak_live_tensors = peak_count.load();
  result.stats.peak_live_bytes = peak_bytes.load();
  for (size_t n = 0; capture && n < num_nodes; ++n)
    if (ran[n]) result.node_io.push_back(std::move(io[n]));
  if (options.profile) result.profile = make_profile(plan, end_ns, &start_ns, &lanes);
  for (ir::ValueId v : graph_.outputs) {
    const ir::Value& val = graph_.values[v];
    result.outputs.push_back(val.kind == ir::ValueKind::Constant ? val.constant : live[v]);
  }
  return result;
}

}  // namespace switchyard::exec
