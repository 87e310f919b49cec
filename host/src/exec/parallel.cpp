// Parallel runs ([runtime] inter_op_threads > 1): with oneTBB, a step runs as a task as
// soon as every step it reads from has finished, through the same per-node step as a
// sequential run. Completion order is not step order, so slots are freed by reader counts
// rather than by last use, and node_io is kept per step, in step order. The planning run
// of a new signature stays sequential.
#include "exec/runner.hpp"
#include "util/intra_op_pool.hpp"

#include <switchyard/error.hpp>

#include <tbb/enumerable_thread_specific.h>
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
struct Runner::Parallel {
  std::unique_ptr<tbb::global_control> allow;  // more threads than cores, where asked for
  std::unique_ptr<tbb::task_arena> arena;
  int kernel_threads = 0;  // threads a kernel may use while other steps run (SY_HostApi.num_threads)
};

Runner::Runner(const ir::Graph& graph, const StorageTable& storages, const config::Config& config)
    : graph_(graph), storages_(storages) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int inter = config.inter_op_threads == 0 ? cores : config.inter_op_threads;
  const int intra = config.intra_op_threads > 0 ? config.intra_op_threads : cores;
  if (inter <= 1) return;
  auto p = std::make_shared<Parallel>();
  // oneTBB caps its workers at the core count; a config asking for more gets them.
  if (inter > static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)))
    p->allow = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, inter);
  p->arena = std::make_unique<tbb::task_arena>(inter);
  // Deterministic: every kernel gets the same thread count whatever the schedule, so its
  // work splits, and float sums, come out as in a sequential run. Otherwise the branches
  // running at once share the intra-op threads out.
  p->kernel_threads = config.deterministic ? intra : std::max(1, intra / inter);
  parallel_ = std::move(p);
}

Schedule Runner::make_schedule(const Plan& plan) const {
  const size_t num_steps = plan.steps.size();
  Schedule s;
  s.successors.resize(num_steps);
  s.num_producers.assign(num_steps, 0);
  s.num_readers.assign(static_cast<size_t>(plan.num_slots), 0);
  s.reads.resize(num_steps);
  std::vector<int32_t> made_by(static_cast<size_t>(plan.num_slots), -1);
  for (size_t i = 0; i < num_steps; ++i) {
    const Step& st = plan.steps[i];
    if (st.kind == Step::Kind::Convert)
      made_by[static_cast<size_t>(st.dst)] = static_cast<int32_t>(i);
    else
      for (const OutputPlace& o : st.outputs)
        if (o.slot >= 0) made_by[static_cast<size_t>(o.slot)] = static_cast<int32_t>(i);
  }
  std::vector<int32_t> producers, read;
  for (size_t i = 0; i < num_steps; ++i) {
    const Step& st = plan.steps[i];
    read.clear();
    if (st.kind == Step::Kind::Convert)
      read.push_back(st.src);
    else
      for (const InputRef& r : st.inputs)
        if (r.slot >= 0) read.push_back(r.slot);
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    producers.clear();
    for (int32_t slot : read) {
      ++s.num_readers[static_cast<size_t>(slot)];
      const int32_t p = made_by[static_cast<size_t>(slot)];
      if (p >= 0 && std::find(producers.begin(), producers.end(), p) == producers.end()) producers.push_back(p);
    }
    s.reads[i] = read;
    s.num_producers[i] = static_cast<int32_t>(producers.size());
    for (int32_t p : producers) s.successors[static_cast<size_t>(p)].push_back(static_cast<int32_t>(i));
    if (producers.empty()) s.roots.push_back(static_cast<int32_t>(i));
  }
  return s;
}

RunResult Runner::run_parallel(const Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) const {
  const Schedule& sched = *plan.schedule;
  const size_t num_steps = plan.steps.size();
  RunResult result;
  RunState st;
  begin_run(plan, inputs, options, st, result);
  st.parallel = true;  // frees go by reader counts below, not by step order
  std::unique_ptr<std::atomic<int32_t>[]> waiting(new std::atomic<int32_t>[num_steps]);
  for (size_t i = 0; i < num_steps; ++i) waiting[i].store(sched.num_producers[i], std::memory_order_relaxed);
  std::unique_ptr<std::atomic<int32_t>[]> readers(new std::atomic<int32_t>[static_cast<size_t>(plan.num_slots)]);
  for (size_t v = 0; v < static_cast<size_t>(plan.num_slots); ++v)
    readers[v].store(sched.num_readers[v], std::memory_order_relaxed);
  std::vector<char> keep(static_cast<size_t>(plan.num_slots), 0);
  for (const InputRef& r : plan.outputs)
    if (r.slot >= 0) keep[static_cast<size_t>(r.slot)] = 1;

  std::mutex error_mutex;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  tbb::task_group group;
  tbb::enumerable_thread_specific<Scratch> scratches;

  auto execute_step = [&](int32_t i) {
    const Step& step = plan.steps[static_cast<size_t>(i)];
    if (options.profile) {
      st.start_ns[static_cast<size_t>(i)] =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - st.start).count();
      st.lanes[static_cast<size_t>(i)] = tbb::this_task_arena::current_thread_index();
    }
    threads::KernelThreads share(parallel_->kernel_threads);
    run_step(step, static_cast<size_t>(i), st, scratches.local());
    // The last reader of a slot frees it (its reads happened before every decrement).
    auto release = [&](int32_t slot) {
      if (keep[static_cast<size_t>(slot)] ||
          readers[static_cast<size_t>(slot)].fetch_sub(1, std::memory_order_acq_rel) != 1)
        return;
      Tensor& t = st.slots[static_cast<size_t>(slot)];
      if (!t.defined()) return;
      st.dropped(t);
      t = Tensor();
    };
    for (int32_t slot : sched.reads[static_cast<size_t>(i)]) release(slot);
  };

  // Hand-offs through atomics we own, besides oneTBB's, so that the order between a task
  // and what it reads is plain to see (and to ThreadSanitizer, which cannot see inside an
  // oneTBB library not built with it).
  std::atomic<int> started{0}, finished{0};
  std::function<void(int32_t)> run_node;
  auto task = [&](int32_t n) {
    return [&, n] {
      started.load(std::memory_order_acquire);                          // the caller's setup
      waiting[static_cast<size_t>(n)].load(std::memory_order_acquire);  // every producer's outputs
      run_node(n);
    };
  };
  run_node = [&](int32_t n) {
    struct Done {
      std::atomic<int>& finished;
      ~Done() { finished.fetch_add(1, std::memory_order_release); }
    } done{finished};
    if (failed.load(std::memory_order_relaxed)) return;  // a step failed: start nothing new
    try {
      execute_step(n);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true);
      return;
    }
    for (int32_t next : sched.successors[static_cast<size_t>(n)])
      if (waiting[static_cast<size_t>(next)].fetch_sub(1, std::memory_order_acq_rel) == 1) group.run(task(next));
  };
  started.store(1, std::memory_order_release);
  parallel_->arena->execute([&] {
    for (int32_t n : sched.roots) group.run(task(n));
    group.wait();
  });
  finished.load(std::memory_order_acquire);  // every task's writes
  if (error) std::rethrow_exception(error);
  end_run(st);
  return result;
}

}  // namespace switchyard::exec
