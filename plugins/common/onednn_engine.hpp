// What the plugins built on oneDNN share: one CPU engine per plugin library, a bounded
// per-shape cache of prepared primitives, and the SDK status for a oneDNN error.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <switchyard/plugin.hpp>

#include <cstddef>
#include <cstdint>
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
