// What the plugins built on oneDNN share: one CPU engine per plugin library, a bounded
// per-shape cache of prepared primitives, and the SDK status for a oneDNN error.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <switchyard/huge_pages.hpp>
#include <switchyard/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sy_onednn {

// The CPU engine a plugin's primitives, memories and streams share (an inline function's
// static is per shared object).
inline dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The calling thread's stream on that engine: a stream is per thread, and making one per
// call allocated on every node's hot path.
inline dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// A constant that every run streams through (packed weights), with what keeps its memory.
// From 2 MiB up it lies in a mapping of its own backed by huge pages (switchyard/
// huge_pages.hpp): ResNet-50's last-stage convolutions at batch 1 read megabytes of
// weights per run, and their node times fell from 3.2-3.5 to 3.0 ms so
// (docs/benchmarks-history.md, huge pages for packed weights).
// Smaller ones are oneDNN's own allocation. Throws sy::Error when out of memory.
struct ConstantMemory {
  dnnl::memory::desc md;
  dnnl::memory mem;
  std::shared_ptr<void> owner;  // (optional) outlives `mem`'s use
};

inline ConstantMemory constant_memory(const dnnl::memory::desc& md) {
  const size_t bytes = md.get_size();
  if (bytes < sy::kHugePageBytes) return {md, dnnl::memory(md, cpu_engine()), nullptr};
  void* data = nullptr;
  std::shared_ptr<void> owner = sy::map_huge_pages(bytes, &data);
  if (!owner)
    throw sy::Error("out of memory for " + std::to_string(bytes) + " bytes of packed weights", SY_ERROR_OUT_OF_MEMORY);
  return {md, dnnl::memory(md, cpu_engine(), data), std::move(owner)};
}

// Argument slots of thread_memory(): one per argument a primitive call binds at once.
enum MemorySlot : size_t {
  kSrcSlot,
  kDstSlot,
  kBiasSlot,
  kScaleSlot,
  kShiftSlot,
  kScratchSlot,
  kConvertedSlot,
  kMemorySlots
};

// A memory object for `md` over `data`, kept per thread and slot: making one per call
// allocated several times (the C object, its storage, the C++ handle). Each slot keeps the
// last few descriptors (a transformer's GEMMs take turns with a handful of shapes). A later
// call with the same slot and descriptor on this thread rebinds the same object, so a call
// binds each of its arguments to a slot of its own and uses them before the next call.
inline const dnnl::memory& thread_memory(MemorySlot slot, const dnnl::memory::desc& md, void* data) {
  constexpr size_t kKeptPerSlot = 4;
  struct Kept {
    dnnl::memory::desc md;
    dnnl::memory mem;
  };
  struct Slot {
    Kept kept[kKeptPerSlot];
    size_t next = 0;  // the entry to replace next, round robin
  };
  thread_local Slot slots[kMemorySlots];
  Slot& sl = slots[slot];
  for (Kept& k : sl.kept)
    if (k.mem && k.md == md) {
      k.mem.set_data_handle(data);
      return k.mem;
    }
  Kept& k = sl.kept[sl.next];
  sl.next = (sl.next + 1) % kKeptPerSlot;
  k.mem = dnnl::memory(md, cpu_engine(), data);
  k.md = md;
  return k.mem;
}

// Scratchpad memory for one primitive run on the calling thread: one buffer per thread,
// grown as needed and kept, so runs allocate nothing (an unbound memory would allocate per
// call). Valid until this thread's next call; throws sy::Error when out of memory.
// One grown-and-kept buffer per thread and slot (kScratchSlot or kConvertedSlot).
inline void* thread_buffer(MemorySlot slot, size_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<void, Free> data;
    size_t capacity = 0;
  };
  thread_local Buffer buffers[kMemorySlots];
  Buffer& b = buffers[slot];
  if (bytes > b.capacity) {
    b.data.reset();
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    b.data.reset(std::aligned_alloc(64, rounded));
    if (!b.data)
      throw sy::Error("out of memory for " + std::to_string(rounded) + " bytes of oneDNN scratch",
                      SY_ERROR_OUT_OF_MEMORY);
    b.capacity = rounded;
  }
  return bytes > 0 ? b.data.get() : nullptr;
}

inline dnnl::memory thread_scratch(const dnnl::memory::desc& md) {
  return thread_memory(kScratchSlot, md, thread_buffer(kScratchSlot, md.get_size()));
}

// Memory for an input converted into `md` (bfloat16 for a bf16 primitive), per thread:
// valid until this thread's next call.
inline const dnnl::memory& thread_converted(const dnnl::memory::desc& md) {
  return thread_memory(kConvertedSlot, md, thread_buffer(kConvertedSlot, md.get_size()));
}

// One argument of a primitive call: DNNL_ARG_* and the memory it names.
struct Arg {
  int slot;
  const dnnl::memory& mem;
};

// Executes `prim` with `args` through the C entry point: the C++ one takes a hash map,
// built and freed per call. An empty memory is an absent argument (an optional bias).
// Throws dnnl::error as the C++ API does.
inline void execute(const dnnl::primitive& prim, dnnl::stream& s, std::initializer_list<Arg> args) {
  dnnl_exec_arg_t c_args[8];
  int n = 0;
  for (const Arg& a : args) {
    if (a.mem.get(true) == nullptr) continue;
    if (n == 8) throw dnnl::error(dnnl_invalid_arguments, "more than 8 primitive arguments");
    c_args[n++] = {a.slot, a.mem.get(true)};
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), s.get(), n, c_args), "could not execute a primitive");
}

// Prepared primitives keyed by everything that shapes them (dims, strides, attributes).
// Lookups are guarded; values are immutable once built, so runs share them. Bounded:
// shapes may keep changing from run to run, so a full cache starts again.
template <typename Prepared, size_t kMaxEntries = 32>
class ShapeCache {
 public:
  template <typename Build>
  std::shared_ptr<const Prepared> get(const std::vector<int64_t>& key, Build&& build) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();
    std::shared_ptr<const Prepared> p = build();
    entries_.emplace(key, p);
    return p;
  }

 private:
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::shared_ptr<const Prepared>> entries_;
};

// "<what> (oneDNN status N)"
inline std::string error_message(const dnnl::error& e) {
  return std::string(e.what()) + " (oneDNN status " + std::to_string(static_cast<int>(e.status)) + ")";
}

// SY_ERROR_OUT_OF_MEMORY for oneDNN's out-of-memory status, SY_ERROR_INTERNAL otherwise.
inline SY_Status error_status(const dnnl::error& e) {
  return e.status == dnnl_out_of_memory ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL;
}

}  // namespace sy_onednn
