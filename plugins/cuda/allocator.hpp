// cuda plugin, internal: device memory and host staging.
//
// DeviceAllocator is a caching allocator over cudaMalloc (never managed memory): freed
// blocks go back to a per-size cache and are handed out again. Reuse needs no event,
// because every use of device memory by this plugin is queued on the one stream: work
// queued after a block's new owner gets it runs after the old owner's work. When
// cudaMalloc fails, the cache is released (after the stream drains) and the allocation
// tried once more; then the failure is SY_ERROR_OUT_OF_MEMORY naming the bytes asked.
//
// Staging copies host tensors (maybe strided) to the device through pinned buffers, in
// chunks, so that a from_host conversion has read its source before it returns (sdk.h)
// while the DMA of the last chunk may still be in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <dlpack/dlpack.h>

namespace sycuda {

class DeviceAllocator {
 public:
  static DeviceAllocator& get();
  // Never NULL: throws sy::Error (SY_ERROR_OUT_OF_MEMORY) on failure. 0 bytes gives a
  // minimal block, so that every allocation has a distinct address.
  void* allocate(uint64_t bytes);
  // Back to the cache; NULL is a no-op; a pointer this allocator did not make throws.
  void release(void* ptr);
  // cudaFree of every cached block (after the stream drains).
  void empty_cache();

  struct Stats {
    uint64_t in_use = 0, cached = 0, peak_in_use = 0;
    uint64_t device_allocations = 0;  // cudaMalloc calls
  };
  Stats stats();

  static uint64_t rounded(uint64_t bytes);  // the block size a request takes

 private:
  std::mutex mutex_;
  std::unordered_map<void*, uint64_t> live_;  // block -> its rounded size
  std::multimap<uint64_t, void*> cached_;     // rounded size -> free block
  Stats stats_;
};

// A device buffer that goes back to the cache when it dies (stream order makes that safe
// even while queued work still reads it).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(uint64_t bytes) : ptr_(DeviceAllocator::get().allocate(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) reset(), ptr_ = o.ptr_, bytes_ = o.bytes_, o.ptr_ = nullptr;
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  uint64_t bytes() const { return bytes_; }
  void reset();

 private:
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

// Host tensor (any strides, element size of its dtype) -> contiguous device memory `dst`,
// queued on the plugin's stream. Returns once the source has been read.
void stage_to_device(const DLTensor& src, void* dst);
// Contiguous device memory -> host tensor `dst` (any strides); returns when `dst` is written.
void copy_to_host(const void* src, const DLTensor& dst);

}  // namespace sycuda
