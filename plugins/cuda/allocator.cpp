// cuda plugin: the caching device allocator and the host <-> device copies (allocator.hpp).
#include "allocator.hpp"

#include "device.hpp"
#include "host_copy.hpp"

#include <algorithm>
#include <cstring>

namespace sycuda {

namespace {

constexpr uint64_t kSmall = uint64_t{1} << 20;  // below 1 MiB: 512-byte granules
constexpr uint64_t kGranule = 512;
constexpr uint64_t kLargeGranule = uint64_t{2} << 20;

std::string mib(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string((bytes + (1 << 19)) >> 20) + " MiB)";
}

}  // namespace

uint64_t DeviceAllocator::rounded(uint64_t bytes) {
  if (bytes == 0) return kGranule;
  const uint64_t granule = bytes < kSmall ? kGranule : kLargeGranule;
  return (bytes + granule - 1) / granule * granule;
}

DeviceAllocator& DeviceAllocator::get() {
  static DeviceAllocator* allocator = new DeviceAllocator();  // never destroyed, as Device
  return *allocator;
}

void* DeviceAllocator::allocate(uint64_t bytes) {
  Device::get().require_real();
  const uint64_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    // The smallest cached block that fits and wastes at most a quarter of itself.
    auto it = cached_.lower_bound(size);
    if (it != cached_.end() && it->first - size <= it->first / 4) {
      void* ptr = it->second;
      live_.emplace(ptr, it->first);
      stats_.cached -= it->first;
      stats_.in_use += it->first;
      stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
      cached_.erase(it);
      return ptr;
    }
  }
  Device::use_on_this_thread();
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, size);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    empty_cache();  // then once more, with every cached block given back to the driver
    err = cudaMalloc(&ptr, size);
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    (void)cudaGetLastError();
    const Stats s = stats();
    throw sy::Error("cuda plugin: cudaMalloc of " + mib(bytes) + " failed: " + cudaGetErrorString(err) + " (" +
                        cudaGetErrorName(err) + "); the device has " + mib(free_bytes) + " free of " +
                        mib(total_bytes) + ", this plugin holds " + mib(s.in_use) + " in use",
                    err == cudaErrorMemoryAllocation ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  live_.emplace(ptr, size);
  stats_.in_use += size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  ++stats_.device_allocations;
  return ptr;
}

void DeviceAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end())
    throw sy::Error("cuda plugin: free of a pointer this allocator did not hand out", SY_ERROR_INTERNAL);
  cached_.emplace(it->second, ptr);
  stats_.in_use -= it->second;
  stats_.cached += it->second;
  live_.erase(it);
}

void DeviceAllocator::empty_cache() {
  Device& device = Device::get();
  if (!device.usable() || device.plan_only()) return;
  {
    // A cached block may still be read by queued work (frees are stream-ordered): drain first.
    std::lock_guard<std::recursive_mutex> queue(device.lock());
    (void)cudaStreamSynchronize(device.stream());
  }
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [size, ptr] : cached_) (void)cudaFree(ptr);
  (void)cudaGetLastError();
  cached_.clear();
  stats_.cached = 0;
}

DeviceAllocator::Stats DeviceAllocator::stats() {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_;
}

void DeviceBuffer::reset() {
  if (ptr_ != nullptr) DeviceAllocator::get().release(ptr_);
  ptr_ = nullptr;
}

// ---- host <-> device -------------------------------------------------------------------------

namespace {

// Two pinned buffers used in turn, each with the event of the copy that last read it.
class PinnedStaging {
 public:
  static constexpr uint64_t kChunk = uint64_t{8} << 20;

  static PinnedStaging& get() {
    static PinnedStaging* staging = new PinnedStaging();
    return *staging;
  }

  // Copies host elements [0, numel) of `src` to `dst` in chunks; caller holds the queue lock.
  void to_device(const DLTensor& src, char* dst) {
    const int64_t numel = element_count(src);
    const size_t esize = element_size(src.dtype);
    const int64_t per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunk / esize));
    cudaStream_t stream = Device::get().stream();
    for (int64_t begin = 0; begin < numel; begin += per_chunk) {
      const int64_t count = std::min(per_chunk, numel - begin);
      Slot& slot = next();
      SY_CUDA_CHECK(cudaEventSynchronize(slot.done));  // its last DMA has finished reading
      gather_elements(src, begin, count, slot.data);
      SY_CUDA_CHECK(cudaMemcpyAsync(dst + begin * static_cast<int64_t>(esize), slot.data, count * esize,
                                    cudaMemcpyHostToDevice, stream));
      SY_CUDA_CHECK(cudaEventRecord(slot.done, stream));
    }
  }

  // Copies contiguous device memory to the strided host tensor `dst`; caller holds the lock.
  void to_host_strided(const char* src, const DLTensor& dst) {
    const int64_t numel = element_count(dst);
    const size_t esize = element_size(dst.dtype);
    const int64_t per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunk / esize));
    cudaStream_t stream = Device::get().stream();
    for (int64_t begin = 0; begin < numel; begin += per_chunk) {
      const int64_t count = std::min(per_chunk, numel - begin);
      Slot& slot = next();
      SY_CUDA_CHECK(cudaEventSynchronize(slot.done));
      SY_CUDA_CHECK(cudaMemcpyAsync(slot.data, src + begin * static_cast<int64_t>(esize), count * esize,
                                    cudaMemcpyDeviceToHost, stream));
      SY_CUDA_CHECK(cudaEventRecord(slot.done, stream));
      SY_CUDA_CHECK(cudaEventSynchronize(slot.done));
      scatter_elements(slot.data, begin, count, dst);
    }
  }

 private:
  struct Slot {
    char* data = nullptr;
    cudaEvent_t done = nullptr;
  };

  PinnedStaging() = default;

  Slot& next() {
    Slot& slot = slots_[turn_];
    turn_ = 1 - turn_;
    if (slot.data == nullptr) {
      Device::use_on_this_thread();
      SY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&slot.data), kChunk, cudaHostAllocDefault));
      SY_CUDA_CHECK(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming));
    }
    return slot;
  }

  Slot slots_[2];
  int turn_ = 0;
};

}  // namespace

void stage_to_device(const DLTensor& src, void* dst) {
  Device& device = Device::get();
  std::lock_guard<std::recursive_mutex> queue(device.lock());
  Device::use_on_this_thread();
  PinnedStaging::get().to_device(src, static_cast<char*>(dst));
}

void copy_to_host(const void* src, const DLTensor& dst) {
  Device& device = Device::get();
  std::unique_lock<std::recursive_mutex> queue(device.lock());
  Device::use_on_this_thread();
  const uint64_t bytes = static_cast<uint64_t>(element_count(dst)) * element_size(dst.dtype);
  if (!is_compact(dst)) {
    PinnedStaging::get().to_host_strided(static_cast<const char*>(src), dst);
    queue.unlock();
    device.check_errors();
    return;
  }
  // Pageable memory: the copy returns once the bytes are there (after the queued work).
  SY_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst.data) + dst.byte_offset, src, bytes, cudaMemcpyDeviceToHost,
                                device.stream()));
  queue.unlock();  // others may queue while this thread waits for its bytes
  device.synchronize();
}

}  // namespace sycuda
