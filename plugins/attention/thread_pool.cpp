// attention plugin: the worker pool (see thread_pool.hpp).
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sy_attention {

int intra_op_threads() {
  static const int threads = [] {
    if (const char* v = std::getenv("SWITCHYARD_INTRA_OP_THREADS")) {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*v != '\0' && *end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

namespace {

struct Job {
  const std::function<void(int64_t, int)>* body = nullptr;
  int64_t tasks = 0;
  int max_threads = 1;
  std::atomic<int64_t> next{0};
  int joined = 1;   // threads that took a slot (the caller is slot 0); guarded by the pool's mutex
  int running = 0;  // workers still inside the job; guarded by the pool's mutex
  std::exception_ptr error;  // guarded by the pool's mutex
};

class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(&job);
    }
    wake_.notify_all();
    drain(job, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    // No worker may join once the caller leaves: the job lives on the caller's stack.
    auto it = std::find(queue_.begin(), queue_.end(), &job);
    if (it != queue_.end()) queue_.erase(it);
    done_.wait(lock, [&] { return job.running == 0; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void drain(Job& job, int slot) {
    for (int64_t t; (t = job.next.fetch_add(1)) < job.tasks;) {
      try {
        (*job.body)(t, slot);
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
      Job* job = queue_.front();
      int slot = job->joined++;
      ++job->running;
      // A job with all its slots taken, or with no task left, takes no more workers.
      if (job->joined >= job->max_threads || job->next.load() >= job->tasks) queue_.pop_front();
      lock.unlock();
      drain(*job, slot);
      lock.lock();
      if (--job->running == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job*> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p(intra_op_threads() - 1);
  return p;
}

}  // namespace

void parallel_for(int64_t tasks, int max_threads, const std::function<void(int64_t, int)>& body) {
  if (tasks <= 0) return;
  max_threads = static_cast<int>(std::min<int64_t>({max_threads, tasks, intra_op_threads()}));
  if (max_threads <= 1) {
    for (int64_t t = 0; t < tasks; ++t) body(t, 0);
    return;
  }
  Job job;
  job.body = &body;
  job.tasks = tasks;
  job.max_threads = max_threads;
  pool().run(job);
}

}  // namespace sy_attention
