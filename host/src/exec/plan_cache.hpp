// Plans cached per input-shape signature (each input's dtype and shape). Bounded: when
// full, adding a plan evicts the least recently used one, whose kernel instances and
// arenas go with it once no run holds it any more. A lookup takes a shared lock and
// allocates nothing, so warm runs of many threads never wait for each other.
#pragma once

#include <switchyard/tensor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <vector>

namespace switchyard::exec {

struct Plan;

class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  std::shared_ptr<Plan> find(const std::vector<Tensor>& inputs) const;
  // Adds a plan for these inputs' signature; returns how many plans it evicted (0 or 1).
  size_t insert(const std::vector<Tensor>& inputs, std::shared_ptr<Plan> plan);

  // The cached signatures and their plans (a copy, taken under the lock; for the pre-flight).
  struct Cached {
    std::vector<DLDataType> dtypes;
    std::vector<std::vector<int64_t>> shapes;
    std::shared_ptr<const Plan> plan;
  };
  std::vector<Cached> snapshot() const;

  size_t size() const;
  size_t capacity() const { return capacity_; }
  uint64_t hits() const { return hits_.load(); }
  uint64_t misses() const { return misses_.load(); }
  uint64_t evictions() const { return evictions_.load(); }

 private:
  struct Entry {
    uint64_t hash = 0;
    std::vector<DLDataType> dtypes;
    std::vector<std::vector<int64_t>> shapes;
    std::shared_ptr<Plan> plan;
    std::atomic<uint64_t> last_used{0};
  };
  static bool matches(const Entry& e, const std::vector<Tensor>& inputs);

  size_t capacity_;
  mutable std::shared_mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
  mutable std::atomic<uint64_t> clock_{0}, hits_{0}, misses_{0};
  std::atomic<uint64_t> evictions_{0};
};

// A hash of the inputs' dtypes and shapes (no allocation).
uint64_t signature_hash(const std::vector<Tensor>& inputs);

}  // namespace switchyard::exec
