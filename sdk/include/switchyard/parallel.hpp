// switchyard SDK: sy::parallel_for, a small worker pool for the parallel loops inside a
// kernel. Header-only C++17, like plugin.hpp:
//
//   #include <switchyard/parallel.hpp>
//   sy::parallel_for(rows, sy::intra_op_threads(), [&](int64_t row, int slot) { ... });
//
// A plugin-side helper, NOT part of the C ABI: the host never sees it. Each plugin
// library gets its own pool (a function-local static, kept private to the library by
// the hidden visibility switchyard_add_plugin builds with), started on first use with
// intra_op_threads() - 1 workers and joined when the library unloads or the process
// exits. Libraries a plugin wraps (oneDNN, OpenBLAS) keep their own threads.
//
// Plain std::thread + mutex/condition variable rather than OpenMP, so that
// ThreadSanitizer sees every hand-over between threads: libgomp is not built with TSan,
// and its barriers are invisible to it.
//
// Several threads (the host's inter-op threads, concurrent runs) may call parallel_for
// at once, and a body may call it again: each call is a job that idle workers join, and
// the caller works on its own job too, so every job makes progress even when all the
// workers are busy elsewhere.
#ifndef SWITCHYARD_PARALLEL_HPP
#define SWITCHYARD_PARALLEL_HPP

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace sy {

// Threads one parallel_for may use, its caller included: $SWITCHYARD_INTRA_OP_THREADS
// (the host sets it from [runtime] intra_op_threads before loading plugins), read once
// on first use; else (unset or not a number in [1, 1024]) the hardware's thread count.
inline int intra_op_threads() {
  static const int threads = [] {
    if (const char* v = std::getenv("SWITCHYARD_INTRA_OP_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

namespace detail {

// One parallel_for call. It lives on its caller's stack: the caller leaves only once no
// worker is inside it and none can join it any more.
struct ParallelJob {
  void (*call)(void* body, int64_t task, int slot) = nullptr;
  void* body = nullptr;
  int64_t tasks = 0;
  int max_threads = 1;
  std::atomic<int64_t> next{0};  // the next task to hand out
  // Guarded by the pool's mutex:
  int joined = 1;             // slots handed out; the caller holds slot 0
  int running = 0;            // workers inside the job
  std::exception_ptr error;   // the first exception a task threw
};

class ThreadPool {
 public:
  explicit ThreadPool(int workers) {
    for (int i = 0; i < workers; ++i) {
      try {
        threads_.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        break;  // no more threads to be had: callers still run their own jobs
      }
    }
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }

  // Runs the job on the calling thread (slot 0) and on the workers that join it; returns
  // when every task has run, rethrowing the first exception one threw.
  void run(ParallelJob& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(&job);
    }
    // Only as many workers as the job has slots for: the rest stay asleep.
    for (int i = 1; i < job.max_threads; ++i) wake_.notify_one();
    drain(job, 0);
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Out of the queue before the caller returns: the job dies with the caller's frame.
      const auto it = std::find(queue_.begin(), queue_.end(), &job);
      if (it != queue_.end()) queue_.erase(it);
      done_.wait(lock, [&] { return job.running == 0; });
      error = job.error;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  void drain(ParallelJob& job, int slot) {
    // Task indices need only be unique; the data a task reads was published by the
    // mutex that handed the job over.
    for (int64_t t; (t = job.next.fetch_add(1, std::memory_order_relaxed)) < job.tasks;) {
      try {
        job.call(job.body, t, slot);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!job.error) job.error = std::current_exception();
      }
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      ParallelJob& job = *queue_.front();
      if (job.next.load(std::memory_order_relaxed) >= job.tasks) {  // every task handed out
        queue_.pop_front();
        continue;
      }
      const int slot = job.joined++;
      ++job.running;
      if (job.joined >= job.max_threads) queue_.pop_front();  // every slot taken
      lock.unlock();
      drain(job, slot);
      lock.lock();
      if (--job.running == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;  // workers: a job was queued, or stop
  std::condition_variable done_;  // callers: a job's last worker left it
  std::deque<ParallelJob*> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

// This plugin library's pool.
inline ThreadPool& thread_pool() {
  static ThreadPool pool(intra_op_threads() - 1);
  return pool;
}

}  // namespace detail

// Runs body(task, slot) for every task in [0, tasks), each exactly once, on up to
// max_threads threads (the caller included, capped by intra_op_threads()), and returns
// when all have run. Tasks are handed out in increasing order to whichever thread is
// free. `slot` is in [0, max_threads) and no two threads running this call at the same
// time share one: index per-thread scratch by it. If body throws, the other tasks still
// run and the first exception is rethrown here. tasks <= 0 does nothing; max_threads <= 1
// runs every task in order on the calling thread, with slot 0.
template <typename F>
void parallel_for(int64_t tasks, int max_threads, F&& body) {
  if (tasks <= 0) return;
  int threads = static_cast<int>(std::min<int64_t>({max_threads, tasks, intra_op_threads()}));
  if (threads > 1) threads = std::min(threads, detail::thread_pool().workers() + 1);
  if (threads <= 1) {
    std::exception_ptr error;
    for (int64_t t = 0; t < tasks; ++t) {
      try {
        body(t, 0);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    return;
  }
  using Body = std::remove_reference_t<F>;
  detail::ParallelJob job;
  job.call = [](void* b, int64_t t, int slot) { (*static_cast<Body*>(b))(t, slot); };
  job.body = const_cast<void*>(static_cast<const void*>(std::addressof(body)));
  job.tasks = tasks;
  job.max_threads = threads;
  detail::thread_pool().run(job);
}

}  // namespace sy

#endif  // SWITCHYARD_PARALLEL_HPP
