// The executor's side of memory planning: heap measurement, view detection, and the check
// that keeps a later run from trusting a stale plan (finalize.cpp makes the plans).
#include "exec/runner.hpp"

#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// In libasan and libtsan; GCC ships no header for it (clang's allocator_interface.h).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <cstring>

namespace switchyard::exec {
namespace {

// A copy of `t` in memory of its own.
Tensor copy_of(const Tensor& t) {
  if (!t.is_contiguous()) return t.contiguous();  // contiguous() copies a strided tensor
  Tensor out = Tensor::uninitialized(t.dtype(), t.shape());
  std::memcpy(out.raw_data(), t.raw_data(), t.nbytes());
  return out;
}

}  // namespace

bool points_into(const void* p, const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return false;
  const DLTensor& dl = t.dl();  // its own strides, not strides()'s copy: this runs per view per run
  int64_t last = 0;             // offset of the last element, in elements (strides are never negative)
  int64_t step = 1;
  for (int32_t d = dl.ndim; d-- > 0;) {
    last += (dl.shape[d] - 1) * (dl.strides != nullptr ? dl.strides[d] : step);
    step *= dl.shape[d];
  }
  const char* begin = static_cast<const char*>(t.raw_data());
  const char* q = static_cast<const char*>(p);
  return q >= begin && q < begin + (last + 1) * static_cast<int64_t>(dtype_size(t.dtype()));
}

size_t heap_bytes_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();  // the sanitizer's allocator: mallinfo2 reads 0 there
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

Tensor Runner::guard_arena_view(const Step& step, size_t o, Tensor t, const RunState& st) const {
  // Safe only if the planning run saw this output view that very input: the plan then
  // kept the input's arena bytes (and its own parent's) for as long as the view lives.
  const ir::ValueId v = step.run_node->outputs[o];
  const ArenaPool::Buffer* arena = st.arena.get();
  const char* p = static_cast<const char*>(t.raw_data());
  if (arena == nullptr || p < arena->data || p >= arena->data + st.plan->memory.arena_bytes) return t;
  const ir::ValueId expected = st.plan->record.infos[static_cast<size_t>(v)].view_of;
  if (expected != ir::kNoValue && points_into(t.raw_data(), st.slots[static_cast<size_t>(expected)])) return t;
  log::get().warn(
      "{}: plugin '{}' returned a view of arena memory that its planning run did not (output {}); "
      "copying it out",
      describe(*step.run_node), *step.backend, o);
  return copy_of(t);
}

}  // namespace switchyard::exec
