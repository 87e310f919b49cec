// switchyard SDK: transparent huge pages for large buffers. Header-only C++17, like
// plugin.hpp; not part of the C ABI.
//
//   #include <switchyard/huge_pages.hpp>
//   void* data = nullptr;
//   std::shared_ptr<void> owner = sy::map_huge_pages(bytes, &data);  // packed weights
//   sy::advise_huge_pages(p, bytes);  // a buffer from elsewhere, before its first write
//
// Linux backs memory with 4 KiB pages unless asked; where transparent huge pages are set
// to `madvise` (Debian's default), a buffer gets 2 MiB pages only through madvise, and only
// for pages not yet touched. Over megabytes that every run streams through (activations,
// packed weights), fewer TLB misses and longer hardware prefetches measurably speed up
// memory-bound kernels (docs/benchmarks-history.md, huge pages). Best effort: where the
// kernel has no transparent huge pages, or refuses, the memory is the same, on small pages;
// elsewhere than Linux nothing is advised.
#ifndef SWITCHYARD_HUGE_PAGES_HPP
#define SWITCHYARD_HUGE_PAGES_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sy {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Asks for huge pages over the whole 2 MiB pages inside [p, p + bytes); adds no memory.
// Buffers of less than two huge pages are left alone (they hold at most one).
inline void advise_huge_pages(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p == nullptr || bytes < 2 * kHugePageBytes) return;
  const uintptr_t page = kHugePageBytes;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// `bytes` of fresh, zeroed, page-aligned memory in a mapping of its own, asked to be backed
// by huge pages before anything touches it (memory from the heap may already sit on small
// pages). Sets *data and returns the owner, which unmaps it; NULL when no memory is to be
// had. At least 64-byte aligned everywhere.
inline std::shared_ptr<void> map_huge_pages(size_t bytes, void** data) {
  *data = nullptr;
  if (bytes == 0) bytes = 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (bytes >= kHugePageBytes) (void)madvise(p, bytes, MADV_HUGEPAGE);
  *data = p;
  return std::shared_ptr<void>(p, [bytes](void* q) { munmap(q, bytes); });
#else
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) return nullptr;
  *data = p;
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
#endif
}

}  // namespace sy

#endif  // SWITCHYARD_HUGE_PAGES_HPP
