#include "exec/memory_plan.hpp"
#include "util/host_alloc.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>

namespace switchyard::exec {
namespace {

size_t aligned(size_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// The last node during which a value's bytes are in use: an unread value still occupies
// them while its producer runs.
int32_t end_of(const ValueLife& v, int32_t last) { return std::max(last, v.first); }

struct Placed {
  int32_t first, end;
  size_t offset, bytes;
};

// The lowest offset where `bytes` fits between the blocks alive during [first, end].
size_t lowest_fit(std::vector<const Placed*>& overlapping, size_t bytes) {
  std::sort(overlapping.begin(), overlapping.end(),
            [](const Placed* a, const Placed* b) { return a->offset < b->offset; });
  size_t candidate = 0;
  for (const Placed* p : overlapping) {
    if (p->offset >= candidate + bytes) break;  // the gap before p is large enough
    candidate = std::max(candidate, p->offset + p->bytes);
  }
  return candidate;
}

// The peak outside the arena (graph outputs, kernel-produced values) is paid anyway, and
// the arena is held for the whole run. So an arena value that fits under that peak
// wherever it lives goes to the heap instead: the arena shrinks, the heap peak does not
// grow (e.g. a decoder's attention values beside the logits it makes at the end).
// `arena` comes largest first; returns the values left for the arena, in that order.
std::vector<size_t> use_heap_headroom(const std::vector<ValueLife>& values, const std::vector<int32_t>& last,
                                      std::vector<size_t> arena, int32_t steps) {
  std::vector<bool> in_arena(values.size(), false);
  for (size_t v : arena) in_arena[v] = true;
  auto span = [&](size_t v) {
    return std::make_pair(values[v].first, last[v] == kForever ? steps : end_of(values[v], last[v]));
  };
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 2, 0);  // heap bytes per node, as steps
  for (size_t v = 0; v < values.size(); ++v) {
    const ValueLife& life = values[v];
    if (life.kind == ValueLife::Kind::Unused || life.kind == ValueLife::Kind::View || in_arena[v]) continue;
    const auto [from, to] = span(v);
    delta[static_cast<size_t>(from)] += static_cast<int64_t>(life.bytes);
    delta[static_cast<size_t>(to) + 1] -= static_cast<int64_t>(life.bytes);
  }
  std::vector<size_t> live(static_cast<size_t>(steps) + 1, 0);
  int64_t running = 0;
  for (size_t t = 0; t < live.size(); ++t) live[t] = static_cast<size_t>(running += delta[t]);
  const size_t peak = *std::max_element(live.begin(), live.end());
  std::vector<size_t> kept;
  for (size_t v : arena) {
    const auto [from, to] = span(v);
    if (values[v].arena_only) {
      kept.push_back(v);
      continue;
    }
    size_t most = 0;
    for (int32_t t = from; t <= to; ++t) most = std::max(most, live[static_cast<size_t>(t)]);
    if (most + values[v].bytes > peak) {
      kept.push_back(v);
      continue;
    }
    for (int32_t t = from; t <= to; ++t) live[static_cast<size_t>(t)] += values[v].bytes;
  }
  return kept;
}

// One plan. With `tail_outputs`, graph outputs that some value may sit at the end of
// (tail_of) are placed in the arena too, alive to the last step.
MemoryPlan place(const std::vector<ValueLife>& values, bool use_arena, bool tail_outputs) {
  const size_t n = values.size();
  MemoryPlan plan;
  plan.arena_on = use_arena;
  plan.offset.assign(n, -1);
  plan.tail_host.assign(n, -1);
  plan.last.resize(n);
  for (size_t v = 0; v < n; ++v) plan.last[v] = values[v].last;

  // Views, latest producer first, so that a view of a view extends the grandparent too.
  std::vector<size_t> by_producer(n);
  std::iota(by_producer.begin(), by_producer.end(), 0);
  std::stable_sort(by_producer.begin(), by_producer.end(),
                   [&](size_t a, size_t b) { return values[a].first > values[b].first; });
  for (size_t v : by_producer) {
    const ValueLife& life = values[v];
    if (life.kind != ValueLife::Kind::View || life.view_of == ir::kNoValue) continue;
    int32_t& parent_last = plan.last[static_cast<size_t>(life.view_of)];
    parent_last = std::max(parent_last, plan.last[v]);
  }

  std::vector<char> hosts_a_tail(n, 0);
  if (tail_outputs)
    for (const ValueLife& life : values)
      if (life.tail_of >= 0) hosts_a_tail[static_cast<size_t>(life.tail_of)] = 1;

  // Arena values, largest first; ties by producer, for a plan that does not depend on sort internals.
  std::vector<size_t> arena;
  int32_t steps = 0;
  for (size_t v = 0; v < n; ++v) {
    const ValueLife& life = values[v];
    if (life.kind == ValueLife::Kind::Unused || life.kind == ValueLife::Kind::View) continue;
    plan.total_activation_bytes += life.bytes;
    steps = std::max(steps, life.first + 1);
    if (plan.last[v] != kForever) steps = std::max(steps, plan.last[v] + 1);
    if (use_arena && life.kind == ValueLife::Kind::HostArena && (plan.last[v] != kForever || hosts_a_tail[v]) &&
        life.bytes > 0)
      arena.push_back(v);
  }
  std::stable_sort(arena.begin(), arena.end(), [&](size_t a, size_t b) {
    return values[a].bytes != values[b].bytes ? values[a].bytes > values[b].bytes : values[a].first < values[b].first;
  });
  arena = use_heap_headroom(values, plan.last, std::move(arena), steps);
  std::vector<Placed> placed;
  placed.reserve(arena.size());
  std::vector<int64_t> placed_at(n, -1);  // index into `placed`
  std::vector<const Placed*> overlapping;
  for (size_t v : arena) {
    const int32_t first = values[v].first, end = plan.last[v] == kForever ? steps : end_of(values[v], plan.last[v]);
    const size_t bytes = aligned(values[v].bytes);
    // The value whose buffer's end this one may take: placed, produced where this one dies,
    // and larger by whole alignments (the kernel is promised exactly the end).
    const Placed* host = nullptr;
    if (const int32_t h = values[v].tail_of; h >= 0 && placed_at[static_cast<size_t>(h)] >= 0) {
      const ValueLife& hl = values[static_cast<size_t>(h)];
      if (end == hl.first && values[v].bytes < hl.bytes && (hl.bytes - values[v].bytes) % kArenaAlignment == 0)
        host = &placed[static_cast<size_t>(placed_at[static_cast<size_t>(h)])];
    }
    overlapping.clear();
    for (const Placed& p : placed)
      if (p.first <= end && first <= p.end && &p != host) overlapping.push_back(&p);
    size_t offset = 0;
    bool at_tail = false;
    if (host != nullptr) {
      offset = host->offset + host->bytes - bytes;
      at_tail = std::none_of(overlapping.begin(), overlapping.end(), [&](const Placed* p) {
        return p->offset < offset + bytes && offset < p->offset + p->bytes;
      });
    }
    if (at_tail) {
      plan.tail_host[v] = values[v].tail_of;
    } else {
      if (host != nullptr) overlapping.push_back(host);  // alive at the same step: apart
      offset = lowest_fit(overlapping, bytes);
    }
    placed_at[v] = static_cast<int64_t>(placed.size());
    placed.push_back(Placed{first, end, offset, bytes});
    plan.offset[v] = static_cast<int64_t>(offset);
    plan.arena_bytes = std::max(plan.arena_bytes, offset + bytes);
    plan.arena_values_bytes += values[v].bytes;
    if (plan.last[v] == kForever) plan.arena_outputs.push_back(static_cast<int32_t>(v));
  }

  // Everything else lives on the heap from its producer to its (extended) last reader.
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (size_t v = 0; v < n; ++v) {
    const ValueLife& life = values[v];
    if (life.kind == ValueLife::Kind::Unused || life.kind == ValueLife::Kind::View || plan.offset[v] >= 0) continue;
    delta[static_cast<size_t>(life.first)] += static_cast<int64_t>(life.bytes);
    if (plan.last[v] != kForever)
      delta[static_cast<size_t>(end_of(life, plan.last[v])) + 1] -= static_cast<int64_t>(life.bytes);
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    plan.heap_peak_bytes = std::max(plan.heap_peak_bytes, static_cast<size_t>(std::max<int64_t>(live, 0)));
  }
  return plan;
}

}  // namespace

MemoryPlan plan_memory(std::vector<ValueLife> values, bool use_arena) {
  MemoryPlan plain = place(values, use_arena, false);
  const bool output_host = std::any_of(values.begin(), values.end(), [&](const ValueLife& l) {
    return l.tail_of >= 0 && plain.last[static_cast<size_t>(l.tail_of)] == kForever;
  });
  if (!use_arena || !output_host) return plain;
  // The output's buffer as the arena: worth it only where it lowers the peak, and where a
  // caller holding the output holds nothing more than the output.
  MemoryPlan with_outputs = place(values, use_arena, true);
  size_t output_bytes = 0;
  for (int32_t v : with_outputs.arena_outputs) output_bytes += aligned(values[static_cast<size_t>(v)].bytes);
  if (with_outputs.estimated_peak_bytes() < plain.estimated_peak_bytes() && with_outputs.arena_bytes <= output_bytes)
    return with_outputs;
  return plain;
}

ArenaPool::Buffer::Buffer(size_t bytes, const ArenaAllocator& allocate) {
  if (allocate) {
    void* p = nullptr;
    owner = allocate(bytes, &p);
    data = static_cast<char*>(p);
    return;
  }
  data = static_cast<char*>(
      host_aligned_alloc_or_throw(kArenaAlignment, aligned(std::max<size_t>(bytes, 1)), "the activation arena"));
  owner = std::shared_ptr<void>(data, [](void* q) { std::free(q); });
}

std::shared_ptr<ArenaPool::Buffer> ArenaPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::shared_ptr<Buffer> b = std::move(idle_.back());
      idle_.pop_back();
      return b;
    }
  }
  return std::make_shared<Buffer>(bytes_, allocate_);
}

void ArenaPool::release(std::shared_ptr<Buffer> buffer) {
  if (!buffer || buffer.use_count() != 1) return;  // a tensor still points into it: let it go with that tensor
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(buffer));
}

}  // namespace switchyard::exec
