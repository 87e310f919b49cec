// switchyard SDK: parallel loops inside a kernel, on the host's one intra-op pool.
// Header-only C++17, like plugin.hpp:
//
//   #include <switchyard/parallel.hpp>
//   sy::parallel_for(0, rows, /*grain=*/64, [&](int64_t begin, int64_t end, int slot) { ... });
//   sy::parallel_for(tasks, sy::intra_op_threads(), [&](int64_t task, int slot) { ... });
//
// A thin layer over SY_HostApi.parallel_for (SDK 1.1): the host owns the only pool (a
// oneTBB arena sized by [runtime] intra_op_threads), so plugins start no threads and
// never compete with each other or with the host for the cores. On a 1.0 host, which
// has no pool to offer, every loop runs on the calling thread.
//
// `slot` is in [0, intra_op_threads()) and no two bodies of one call running at once
// share it: index scratch allocated for that call with it. An exception thrown by a
// body stops the chunks not yet started and is rethrown to the caller once every
// running chunk has returned (exceptions never cross into the host).
#ifndef SWITCHYARD_PARALLEL_HPP
#define SWITCHYARD_PARALLEL_HPP

#include <switchyard/plugin.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <type_traits>
#include <utility>

namespace sy {

namespace detail {
inline bool host_has_pool() {
  const SY_HostApi* h = host_api();
  return h != nullptr && SY_STRUCT_HAS(h, SY_HostApi, parallel_for) && h->parallel_for != nullptr &&
         h->num_threads != nullptr;
}
}  // namespace detail

// Threads a kernel may keep busy at once, its caller included: the host's pool size.
inline int intra_op_threads() {
  if (!detail::host_has_pool()) return 1;
  const SY_HostApi* h = host_api();
  return std::max<int32_t>(1, h->num_threads(h->host_context));
}

// Runs body(b, e, slot) over [begin, end) in chunks of at least `grain` items.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& body) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain || !detail::host_has_pool()) {
    body(begin, end, 0);
    return;
  }
  struct Call {
    std::remove_reference_t<F>* body;  // F is a reference type for an lvalue body
    std::atomic<bool> failed{false};
    std::once_flag first;
    std::exception_ptr error;
  } call{&body, {false}, {}, {}};
  SY_ParallelBody trampoline = [](void* ctx, int64_t b, int64_t e, int32_t slot) {
    auto* c = static_cast<Call*>(ctx);
    if (c->failed.load(std::memory_order_relaxed)) return;
    try {
      (*c->body)(b, e, static_cast<int>(slot));
    } catch (...) {
      std::call_once(c->first, [&] { c->error = std::current_exception(); });
      c->failed.store(true, std::memory_order_relaxed);
    }
  };
  const SY_HostApi* h = host_api();
  h->parallel_for(h->host_context, begin, end, grain, trampoline, &call);
  if (call.error) std::rethrow_exception(call.error);
}

// Runs fn(task, slot) for every task in [0, tasks), on at most `max_threads` threads.
template <typename F, typename = std::enable_if_t<std::is_invocable_v<F&, int64_t, int>>>
void parallel_for(int64_t tasks, int max_threads, F&& fn) {
  if (tasks <= 0) return;
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(max_threads, tasks));
  const int64_t grain = (tasks + threads - 1) / threads;
  parallel_for(int64_t{0}, tasks, grain, [&](int64_t b, int64_t e, int slot) {
    for (int64_t t = b; t < e; ++t) fn(t, slot);
  });
}

}  // namespace sy

#endif  // SWITCHYARD_PARALLEL_HPP
