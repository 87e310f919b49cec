#include "util/host_alloc.hpp"

#include <switchyard/error.hpp>
#include <switchyard/huge_pages.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace switchyard {
namespace {

std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_fail_at{0};  // 0: never

}  // namespace

void* host_aligned_alloc(size_t alignment, size_t bytes) {
  const uint64_t call = g_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint64_t fail_at = g_fail_at.load(std::memory_order_relaxed);
  if (fail_at != 0 && call == fail_at) return nullptr;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (bytes > SIZE_MAX - alignment) return nullptr;  // the padding below would wrap
  const size_t padded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, padded == 0 ? alignment : padded);
  sy::advise_huge_pages(p, padded);  // an arena: fewer TLB misses; before its first write
  return p;
}

std::string out_of_memory_message(const std::string& what, uint64_t bytes) {
  return "out of memory: " + what + " asked for " + std::to_string(bytes) + " bytes";
}

void* host_aligned_alloc_or_throw(size_t alignment, size_t bytes, const std::string& what) {
  void* p = host_aligned_alloc(alignment, bytes);
  if (p == nullptr) throw Error(ErrorKind::OutOfMemory, out_of_memory_message(what, bytes));
  return p;
}

namespace test_hooks {

void fail_host_alloc_at(uint64_t n) {
  g_calls.store(0, std::memory_order_relaxed);
  g_fail_at.store(n, std::memory_order_relaxed);
}

uint64_t host_alloc_calls() { return g_calls.load(std::memory_order_relaxed); }

}  // namespace test_hooks
}  // namespace switchyard
