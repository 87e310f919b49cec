// switchyard::Tensor: a reference-counted handle to a DLPack tensor and whatever owns
// its memory. Copies share the data. The host uses it for weights, activations and
// results; embedders use it to pass inputs and read outputs.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchyard {

std::string dtype_name(DLDataType dtype);  // "float32", "int64", "bool", ...
bool parse_dtype(const std::string& name, DLDataType* out);
size_t dtype_size(DLDataType dtype);  // bytes per element
inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
std::string shape_string(const std::vector<int64_t>& shape);  // "[2, 3]"

// The declared dtype of a model input that takes any dtype: nothing in the model pins it
// (an int64 attention mask in `1.0 - mask` or `mask == 0`, pixel values converted with
// `.to(dtype)`), so the run accepts whatever dtype it is given and the ops promote it.
// Only inputs have it; it is never a tensor's dtype (bits and lanes are 0). Its name is "any".
inline constexpr DLDataType kAnyDtype{kDLOpaqueHandle, 0, 0};
inline bool is_any_dtype(DLDataType d) { return same_dtype(d, kAnyDtype); }
// Whether an input declared `declared` takes a tensor of dtype `given`.
inline bool accepts_dtype(DLDataType declared, DLDataType given) {
  return is_any_dtype(declared) || same_dtype(declared, given);
}
// The dtype of sample values for an input declared `declared`: float32 for kAnyDtype.
inline DLDataType sample_dtype(DLDataType declared) {
  return is_any_dtype(declared) ? DLDataType{kDLFloat, 32, 1} : declared;
}

class Tensor {
 public:
  Tensor() = default;

  // A new contiguous CPU tensor in 64-byte aligned host memory, zero-filled.
  static Tensor empty(DLDataType dtype, std::vector<int64_t> shape);
  // Same, not zero-filled: for outputs a kernel is about to write in full.
  static Tensor uninitialized(DLDataType dtype, std::vector<int64_t> shape);
  // Wraps memory the caller owns; `release` (optional) runs when the last handle goes.
  static Tensor from_blob(void* data, DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
                          std::function<void()> release = nullptr);
  // Memory in a storage the host cannot read (a device, or a plugin's own format), with
  // its logical dtype and shape and no strides (sdk.h, "Storages").
  static Tensor in_storage(void* data, DLDevice device, DLDataType dtype, std::vector<int64_t> shape,
                           std::function<void()> release);
  // Takes ownership of a DLManagedTensor (its deleter runs when the last handle goes).
  // `keep_alive` (optional) lives as long as the tensor: e.g. the plugin that made it.
  static Tensor adopt(DLManagedTensor* managed, std::shared_ptr<void> keep_alive = nullptr);

  bool defined() const { return impl_ != nullptr; }
  const DLTensor& dl() const;
  DLDataType dtype() const { return dl().dtype; }
  DLDevice device() const { return dl().device; }
  const std::vector<int64_t>& shape() const;
  std::vector<int64_t> strides() const;  // element strides, filled in if compact
  int64_t dim() const { return dl().ndim; }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype()); }
  bool is_contiguous() const;
  void* raw_data() const;  // data + byte_offset
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }

  // A contiguous copy (or this tensor, if already contiguous).
  Tensor contiguous() const;
  // Extends this tensor's owner to keep `owner` alive, e.g. a view's parent.
  void keep_alive(std::shared_ptr<void> owner);
  // A token that keeps this tensor's memory alive (for keep_alive of another tensor). It
  // is this tensor's own: two tensors have the same owner() only if they are one tensor.
  std::shared_ptr<void> owner() const { return impl_; }
  // What keeps the bytes alive: for a view that borrows one owner's memory and nothing
  // else, that owner; otherwise owner(). For a tensor placed in this one's memory, so that
  // views of views do not chain (a chain of n in-place writes would keep n objects alive).
  std::shared_ptr<void> memory_owner() const;
  long use_count() const { return impl_.use_count(); }

  struct Impl;  // defined in tensor.cpp

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace switchyard
