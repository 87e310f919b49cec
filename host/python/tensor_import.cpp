#include "tensor_import.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <cstdint>
#include <cstring>

namespace switchyard::python {
namespace {

std::string dims_string(const int64_t* dims, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool known_dtype(DLDataType d) {
  DLDataType parsed{};
  return d.lanes == 1 && parse_dtype(dtype_name(d), &parsed) && same_dtype(parsed, d);
}

}  // namespace

std::string check_dlpack(const DLTensor& t, size_t index, uint64_t* span_bytes) {
  const std::string which = "input " + std::to_string(index) + ": ";
  // Read as the int32 it is: a newer DLPack's device type (16 = kDLHexagon) lies outside
  // DLPack 0.6's enum, and loading it as that enum is undefined (found by fuzz_dlpack).
  int32_t device_type = 0;
  static_assert(sizeof(device_type) == sizeof(t.device.device_type));
  std::memcpy(&device_type, &t.device.device_type, sizeof(device_type));
  if (device_type != kDLCPU)
    return which + "a tensor on DLPack device type " + std::to_string(device_type) + " (id " +
           std::to_string(t.device.device_id) + "); switchyard takes CPU tensors (move it with .cpu())";
  if (!known_dtype(t.dtype))
    return which + "dtype " + dtype_name(t.dtype) +
           " is not one switchyard takes (float16/32/64, bfloat16, int8/16/32/64, uint8, bool)";
  if (t.ndim < 0 || t.ndim > kMaxImportDims)
    return which + "rank " + std::to_string(t.ndim) + " (expected 0 to " + std::to_string(kMaxImportDims) + ")";
  if (t.ndim > 0 && t.shape == nullptr) return which + "a rank-" + std::to_string(t.ndim) + " tensor without a shape";
  const std::string shape = dims_string(t.shape, t.ndim);
  const uint64_t item = dtype_size(t.dtype);
  uint64_t bytes = item;
  bool empty = false, too_big = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) return which + "dimension " + std::to_string(i) + " of shape " + shape + " is negative";
    empty = empty || t.shape[i] == 0;
    too_big = too_big || __builtin_mul_overflow(bytes, static_cast<uint64_t>(t.shape[i]), &bytes);
  }
  if (!empty && (too_big || bytes > static_cast<uint64_t>(INT64_MAX)))
    return which + "shape " + shape + " holds more than 2^63 bytes of " + dtype_name(t.dtype);
  // The elements span from data + byte_offset to the one at the largest offset (strides in
  // elements; a size-1 dimension's stride is never used).
  uint64_t span = 0;
  if (!empty) {
    uint64_t last = 0;  // largest element offset
    for (int32_t i = 0; i < t.ndim; ++i) {
      const uint64_t extent = static_cast<uint64_t>(t.shape[i]) - 1;
      if (extent == 0) continue;
      int64_t stride = 1;
      if (t.strides != nullptr) {
        stride = t.strides[i];
      } else {
        for (int32_t j = i + 1; j < t.ndim; ++j) stride *= t.shape[j];  // bounded by `bytes` above
      }
      if (stride < 0)
        return which + "stride " + std::to_string(stride) + " in dimension " + std::to_string(i) + " of shape " +
               shape + ": negative strides are not supported (pass .contiguous())";
      uint64_t reach = 0;
      if (__builtin_mul_overflow(extent, static_cast<uint64_t>(stride), &reach) ||
          __builtin_add_overflow(last, reach, &last))
        return which + "strides " + dims_string(t.strides, t.ndim) + " of shape " + shape + " reach past 2^64 elements";
    }
    if (__builtin_add_overflow(last, uint64_t{1}, &span) || __builtin_mul_overflow(span, item, &span) ||
        span > static_cast<uint64_t>(INT64_MAX))
      return which + "strides " + dims_string(t.strides, t.ndim) + " of shape " + shape + " span more than 2^63 bytes";
    if (t.data == nullptr) return which + "a non-empty tensor " + shape + " with a null data pointer";
    uintptr_t end = 0;
    const auto start = reinterpret_cast<uintptr_t>(t.data);
    if (__builtin_add_overflow(start, t.byte_offset, &end) || __builtin_add_overflow(end, span, &end))
      return which + "byte_offset " + std::to_string(t.byte_offset) + " puts the data past the end of memory";
    if ((start + t.byte_offset) % item != 0)
      return which + "data at byte_offset " + std::to_string(t.byte_offset) + " is not aligned to its " +
             std::to_string(item) + "-byte elements";
  }
  if (span_bytes != nullptr) *span_bytes = span;
  return "";
}

Tensor import_dlpack(DLManagedTensor* managed, size_t index, bool as_bool) {
  if (managed == nullptr) throw Error(ErrorKind::Input, "input " + std::to_string(index) + ": no DLPack tensor");
  DLTensor& t = managed->dl_tensor;
  if (as_bool && !(t.dtype.code == kDLUInt && t.dtype.bits == 8 && t.dtype.lanes == 1))
    throw Error(ErrorKind::Input, "input " + std::to_string(index) + ": a bool tensor must cross as uint8 bytes, got " +
                                      dtype_name(t.dtype));
  if (std::string why = check_dlpack(t, index); !why.empty()) throw Error(ErrorKind::Input, why);
  if (as_bool) {
    DLDataType b{};
    parse_dtype("bool", &b);
    t.dtype = b;
  }
  return Tensor::adopt(managed);
}

}  // namespace switchyard::python
