#include "util/intra_op_pool.hpp"

#include "util/log.hpp"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard::threads {
namespace {

struct Pool {
  std::mutex mutex;  // guards resizing only; runs read `current` without a lock
  std::atomic<tbb::task_arena*> current{nullptr};
  // Arenas replaced by a resize stay alive: a run may still be inside one.
  std::vector<std::unique_ptr<tbb::task_arena>> arenas;
  // oneTBB caps its workers at the core count; a pool asked to be larger gets them all.
  std::unique_ptr<tbb::global_control> workers;
};

Pool& pool() {
  static Pool p;
  return p;
}

int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

tbb::task_arena& arena() {
  tbb::task_arena* a = pool().current.load(std::memory_order_acquire);
  if (a != nullptr) return *a;
  configure_intra_op_pool(0);
  return *pool().current.load(std::memory_order_acquire);
}

}  // namespace

void configure_intra_op_pool(int threads) {
  if (threads <= 0) threads = hardware_threads();
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  tbb::task_arena* a = p.current.load(std::memory_order_acquire);
  if (a != nullptr && a->max_concurrency() == threads) return;
  if (a != nullptr)
    log::get().info("intra-op pool resized from {} to {} threads (one pool per process)", a->max_concurrency(),
                    threads);
  if (threads > hardware_threads())
    p.workers = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<size_t>(threads));
  // One slot is reserved for the thread that calls in, which works on its own loop.
  auto fresh = std::make_unique<tbb::task_arena>(threads, 1);
  fresh->initialize();
  p.current.store(fresh.get(), std::memory_order_release);
  p.arenas.push_back(std::move(fresh));
}

int intra_op_threads() { return arena().max_concurrency(); }

namespace {
thread_local int t_kernel_threads = 0;  // 0: no scope open, the pool's size
}  // namespace

int kernel_threads() { return t_kernel_threads > 0 ? t_kernel_threads : intra_op_threads(); }

KernelThreads::KernelThreads(int threads) : previous_(t_kernel_threads) { t_kernel_threads = threads; }
KernelThreads::~KernelThreads() { t_kernel_threads = previous_; }

void intra_op_parallel_for(int64_t begin, int64_t end, int64_t grain, SY_ParallelBody body, void* context) {
  if (body == nullptr || end <= begin) return;
  if (grain < 1) grain = 1;
  const int64_t n = end - begin;
  tbb::task_arena& a = arena();
  const int threads = a.max_concurrency();
  if (n <= grain || threads == 1) {
    body(context, begin, end, 0);  // no hand-over for small loops
    return;
  }
  const int64_t chunks = std::min<int64_t>(n / grain, int64_t{4} * threads);
  auto bound = [=](int64_t c) { return begin + static_cast<int64_t>((static_cast<__int128>(n) * c) / chunks); };
  a.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, chunks, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          const int slot = std::max(0, tbb::this_task_arena::current_thread_index());
          for (int64_t c = r.begin(); c != r.end(); ++c) body(context, bound(c), bound(c + 1), slot);
        },
        tbb::simple_partitioner());
  });
}

}  // namespace switchyard::threads
