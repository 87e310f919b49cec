// cuda plugin, internal: the one storage this plugin declares, "cuda" (kDLCUDA:0), as
// sy::storage<CudaStorage>("cuda", ...) expects it. Index 0 in the plugin's storages:
// kernels name it SY_STORAGE_MASK(kCudaStorage).
#pragma once

#include <switchyard/plugin.hpp>

#include <cstdint>

namespace sycuda {

constexpr SY_StorageIndex kCudaStorage = 0;
constexpr DLDevice kCudaDevice{kDLCUDA, 0};

struct CudaStorage {
  // Device -> plain host tensor (compact, host-allocated); returns when the bytes are there.
  static void to_host(const DLTensor& src, DLTensor& dst);
  // Plain host tensor (maybe strided) -> device; returns once the source has been read.
  static void from_host(const DLTensor& src, DLTensor& dst);
  // The caching allocator (allocator.hpp); never managed memory.
  static void* alloc(uint64_t nbytes);
  static void free(void* ptr);
  // Waits for everything queued on the plugin's stream.
  static void synchronize();
};

}  // namespace sycuda
