// cuda plugin: the "cuda" storage (SDK 1.1): values in device memory of GPU 0, compact,
// allocated from the caching allocator, converted to and from plain host tensors.
#include "storage.hpp"

#include "allocator.hpp"
#include "device.hpp"
#include "host_copy.hpp"

#include <string>

namespace sycuda {

namespace {

std::string dims(const DLTensor& t) {
  std::string s = "[";
  for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

void check_pair(const DLTensor& src, const DLTensor& dst, bool to_device) {
  const DLTensor& device_side = to_device ? dst : src;
  const DLTensor& host_side = to_device ? src : dst;
  const char* what = to_device ? "from_host" : "to_host";
  if (device_side.device.device_type != kDLCUDA)
    throw sy::Error(std::string("cuda storage ") + what + ": the device tensor is not on kDLCUDA", SY_ERROR_INTERNAL);
  if (host_side.device.device_type != kDLCPU && host_side.device.device_type != kDLCUDAHost)
    throw sy::Error(std::string("cuda storage ") + what + ": the host tensor is not in host memory", SY_ERROR_INTERNAL);
  if (!sy::same_dtype(src.dtype, dst.dtype) || element_count(src) != element_count(dst))
    throw sy::Error(std::string("cuda storage ") + what + ": source " + dims(src) + " and destination " + dims(dst) +
                        " differ in dtype or size",
                    SY_ERROR_INTERNAL);
  if (!is_compact(device_side))
    throw sy::Error(std::string("cuda storage ") + what + ": a device tensor must be compact (strides NULL)",
                    SY_ERROR_INTERNAL);
}

}  // namespace

void CudaStorage::to_host(const DLTensor& src, DLTensor& dst) {
  Device::get().require_real();
  check_pair(src, dst, false);
  if (element_count(src) == 0) return;
  copy_to_host(static_cast<const char*>(src.data) + src.byte_offset, dst);
}

void CudaStorage::from_host(const DLTensor& src, DLTensor& dst) {
  Device::get().require_real();
  check_pair(src, dst, true);
  if (element_count(src) == 0) return;
  stage_to_device(src, static_cast<char*>(dst.data) + dst.byte_offset);
}

void* CudaStorage::alloc(uint64_t nbytes) { return DeviceAllocator::get().allocate(nbytes); }

void CudaStorage::free(void* ptr) { DeviceAllocator::get().release(ptr); }

void CudaStorage::synchronize() {
  Device& device = Device::get();
  if (!device.usable() || device.plan_only()) return;
  Device::use_on_this_thread();
  device.synchronize();
}

}  // namespace sycuda
