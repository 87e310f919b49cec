// attention plugin: a small shared worker pool for the kernels' parallel loops.
//
// Plain std::thread + mutex/condition variable rather than OpenMP, so that ThreadSanitizer
// sees every hand-over (libgomp's barriers are invisible to it). Several host threads may
// call parallel_for at once: each call is a job that idle workers join; the caller works
// on its own job too, so a job always makes progress even when every worker is busy.
#pragma once

#include <cstdint>
#include <functional>

namespace sy_attention {

// Threads one call may use: $SWITCHYARD_INTRA_OP_THREADS (as the host's
// [runtime] intra_op_threads sets it) read once, else the hardware's count.
int intra_op_threads();

// Runs body(task, slot) for every task in [0, tasks), on up to max_threads threads (the
// caller included), and returns when all have run. `slot` is in [0, max_threads) and
// unique among the threads running this call at one time: index per-thread scratch by
// it. An exception thrown by body is rethrown here (the first one; the other tasks
// still run).
void parallel_for(int64_t tasks, int max_threads, const std::function<void(int64_t, int)>& body);

}  // namespace sy_attention
