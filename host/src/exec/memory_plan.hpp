// The memory planner: places the activations that the host allocates (outputs of
// SY_OUTPUT_HOST_ALLOCATED kernels) at offsets in one arena, so that a value's bytes are
// reused once its last reader has run. Pure bookkeeping: it sees sizes and lifetimes in
// node order, never tensors. The executor builds a plan per input-shape signature after
// that signature's first run (which tells it every size and which outputs are views).
#pragma once

#include "ir/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace switchyard::exec {

// What the planner knows of one value; the executor fills one per graph value.
struct ValueLife {
  enum class Kind {
    Unused,     // a graph input, a constant, or never produced
    HostArena,  // a host-allocated kernel output: may live in the arena
    Kernel,     // memory a kernel produced (adopted as is; freed after its last reader)
    View,       // a kernel output that points into `view_of`'s memory (owns nothing)
  };
  Kind kind = Kind::Unused;
  size_t bytes = 0;
  int32_t first = -1;  // the node that produces it
  int32_t last = -1;   // its last reader; -1 none; kForever: a graph output
  ir::ValueId view_of = ir::kNoValue;
  // The value whose producer may write it over a buffer that ends with this one (SDK 1.2
  // output_inplace_tail; set on the buffer's owner). -1: none.
  int32_t tail_of = -1;
  // Other values are written inside its bytes (a join's output, join_placement.hpp): it
  // goes in the arena however it fits, never to the heap.
  bool arena_only = false;
};

inline constexpr int32_t kForever = INT32_MAX;
inline constexpr size_t kArenaAlignment = 64;

struct MemoryPlan {
  bool arena_on = false;              // use_arena as asked (an arena may still be empty)
  std::vector<int64_t> offset;        // per value: byte offset in the arena; -1 = not there
  std::vector<int32_t> last;          // per value: last use after views extended it
  size_t arena_bytes = 0;             // the arena's size
  size_t arena_values_bytes = 0;      // what the arena's values would take unshared
  size_t heap_peak_bytes = 0;         // most bytes alive at once outside the arena
  size_t total_activation_bytes = 0;  // every activation's own bytes (views own none)
  // Per value: the value in whose buffer's end it was placed (tail_of, granted); -1 none.
  std::vector<int32_t> tail_host;
  // Graph outputs placed in the arena: a caller who keeps one keeps the whole arena, so
  // this happens only where the arena is no larger than those outputs themselves.
  std::vector<int32_t> arena_outputs;
  // The estimate `plan --memory` prints: the arena plus the peak outside it.
  size_t estimated_peak_bytes() const { return arena_bytes + heap_peak_bytes; }
};

// Extends each viewed value's life to its views' last use (a view keeps its parent's
// bytes in use), keeps out of the arena every value a graph output still reads (it
// outlives the run), leaves on the heap the values that fit under the peak outside the
// arena wherever they live (that peak is paid anyway), and places the rest largest
// first, each at the lowest offset that no value alive at the same time occupies. A
// value with tail_of goes at the end of that value's bytes where nothing else is there.
// When such a tail_of is a graph output, a second plan puts the output in the arena too,
// and wins when its peak is lower and the arena is no larger than the output (then the
// arena is, in effect, the output's buffer). With `use_arena` false nothing is placed and
// the plan only estimates (every activation then lives on the heap).
MemoryPlan plan_memory(std::vector<ValueLife> values, bool use_arena = true);

// Arena buffers of one plan, kept between runs so that a warm run allocates nothing and
// touches no fresh page. Several runs may each hold a buffer at once.
// Memory for one buffer: fills `data` and returns its owner (host memory when null).
using ArenaAllocator = std::function<std::shared_ptr<void>(size_t bytes, void** data)>;

class ArenaPool {
 public:
  struct Buffer {
    explicit Buffer(size_t bytes, const ArenaAllocator& allocate = nullptr);
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    char* data = nullptr;
    std::shared_ptr<void> owner;
  };
  explicit ArenaPool(size_t bytes, ArenaAllocator allocate = nullptr) : bytes_(bytes), allocate_(std::move(allocate)) {}
  // A buffer of the plan's size: an idle one, else a new one.
  std::shared_ptr<Buffer> acquire();
  // Gives it back for the next run, unless something besides the caller still holds it.
  void release(std::shared_ptr<Buffer> buffer);

 private:
  size_t bytes_;
  ArenaAllocator allocate_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Buffer>> idle_;
};

// Bytes malloc has handed out and not taken back, over every thread (glibc's mallinfo2).
size_t heap_bytes_in_use();

}  // namespace switchyard::exec
