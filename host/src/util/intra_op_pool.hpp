// The host's one intra-op thread pool: a oneTBB arena that every plugin reaches through
// SY_HostApi.parallel_for (SDK 1.1). One pool for the whole process, so that kernels of
// different plugins never bring their own threads to fight over the cores.
#pragma once

#include <switchyard/sdk.h>

#include <cstdint>

namespace switchyard::threads {

// Sets the pool's size; 0 or less means every hardware thread. The first Runtime of a
// process sizes it; a later one asking for another size resizes it (and logs that).
void configure_intra_op_pool(int threads);

// The pool's size (>= 1).
int intra_op_threads();

// SY_HostApi.num_threads: threads a kernel called on this thread may keep busy. The pool's
// size, or, while a KernelThreads scope is open on this thread, that scope's share.
int kernel_threads();

// The share of the pool kernels get on this thread while several steps run at once
// (inter-op parallel runs); plugins size their libraries' teams (OpenMP) from it per call.
class KernelThreads {
 public:
  explicit KernelThreads(int threads);
  ~KernelThreads();
  KernelThreads(const KernelThreads&) = delete;
  KernelThreads& operator=(const KernelThreads&) = delete;

 private:
  int previous_;
};

// SY_HostApi.parallel_for's contract (sdk.h): chunks of at least `grain` items, at most
// 4 per thread, cut the same way every time for the same (begin, end, grain).
void intra_op_parallel_for(int64_t begin, int64_t end, int64_t grain, SY_ParallelBody body, void* context);

}  // namespace switchyard::threads
