#include "exec/plan_cache.hpp"

#include <mutex>

namespace switchyard::exec {

uint64_t signature_hash(const std::vector<Tensor>& inputs) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the dtype and shape words
  auto mix = [&h](uint64_t x) {
    h ^= x;
    h *= 1099511628211ull;
  };
  for (const Tensor& t : inputs) {
    const DLTensor& d = t.dl();
    mix((uint64_t{d.dtype.code} << 32) | (uint64_t{d.dtype.bits} << 16) | d.dtype.lanes);
    mix(static_cast<uint64_t>(d.ndim));
    for (int32_t i = 0; i < d.ndim; ++i) mix(static_cast<uint64_t>(d.shape[i]));
  }
  return h;
}

bool PlanCache::matches(const Entry& e, const std::vector<Tensor>& inputs) {
  if (e.shapes.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DLTensor& d = inputs[i].dl();
    const std::vector<int64_t>& s = e.shapes[i];
    if (!same_dtype(d.dtype, e.dtypes[i]) || static_cast<size_t>(d.ndim) != s.size()) return false;
    for (int32_t k = 0; k < d.ndim; ++k)
      if (d.shape[k] != s[static_cast<size_t>(k)]) return false;
  }
  return true;
}

std::shared_ptr<Plan> PlanCache::find(const std::vector<Tensor>& inputs) const {
  const uint64_t h = signature_hash(inputs);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  for (const auto& e : entries_)
    if (e->hash == h && matches(*e, inputs)) {
      e->last_used.store(++clock_, std::memory_order_relaxed);
      ++hits_;
      return e->plan;
    }
  ++misses_;
  return nullptr;
}

size_t PlanCache::insert(const std::vector<Tensor>& inputs, std::shared_ptr<Plan> plan) {
  auto e = std::make_unique<Entry>();
  e->hash = signature_hash(inputs);
  for (const Tensor& t : inputs) {
    e->dtypes.push_back(t.dtype());
    e->shapes.push_back(t.shape());
  }
  e->plan = std::move(plan);
  e->last_used.store(++clock_);
  std::shared_ptr<Plan> evicted;  // released after the lock: destroying kernels may take time
  std::unique_lock<std::shared_mutex> lock(mutex_);
  for (auto& old : entries_)
    if (old->hash == e->hash && matches(*old, inputs)) {
      evicted = std::move(old->plan);
      old = std::move(e);
      return 0;
    }
  size_t out = 0;
  if (entries_.size() >= capacity_) {
    size_t oldest = 0;
    for (size_t i = 1; i < entries_.size(); ++i)
      if (entries_[i]->last_used.load() < entries_[oldest]->last_used.load()) oldest = i;
    evicted = std::move(entries_[oldest]->plan);
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(oldest));
    ++evictions_;
    out = 1;
  }
  entries_.push_back(std::move(e));
  lock.unlock();
  return out;
}

std::vector<PlanCache::Cached> PlanCache::snapshot() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<Cached> out;
  for (const auto& e : entries_) out.push_back(Cached{e->dtypes, e->shapes, e->plan});
  return out;
}

size_t PlanCache::size() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace switchyard::exec
