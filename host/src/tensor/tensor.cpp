#include "util/host_alloc.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <cstdlib>
#include <cstring>
#include <numeric>

namespace switchyard {

struct Tensor::Impl {
  DLTensor dl{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;   // empty: compact row-major
  std::function<void()> release;  // frees the memory when the last handle goes
  // What this tensor's memory depends on, dropped after `release` has run: the plugin that
  // made it (its deleter needs its library loaded), then the owners keep_alive added. The
  // first of those is held apart: a view has one, and a vector for it was an allocation
  // per view per run.
  std::shared_ptr<void> maker;
  std::shared_ptr<void> first_owner;
  std::vector<std::shared_ptr<void>> more_owners;
  ~Impl() {
    if (release) release();
  }
};

namespace {
struct DtypeName {
  uint8_t code, bits;
  const char* name;
};
constexpr DtypeName kDtypeNames[] = {
    {kDLFloat, 32, "float32"}, {kDLFloat, 64, "float64"}, {kDLFloat, 16, "float16"}, {kDLBfloat, 16, "bfloat16"},
    {kDLInt, 64, "int64"},     {kDLInt, 32, "int32"},     {kDLInt, 16, "int16"},     {kDLInt, 8, "int8"},
    {kDLUInt, 8, "uint8"},     {SY_DL_BOOL, 8, "bool"},
};

std::shared_ptr<Tensor::Impl> make_impl(void* data, DLDataType dtype, std::vector<int64_t> shape,
                                        std::vector<int64_t> strides) {
  auto impl = std::make_shared<Tensor::Impl>();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->dl.data = data;
  impl->dl.device = DLDevice{kDLCPU, 0};
  impl->dl.ndim = static_cast<int32_t>(impl->shape.size());
  impl->dl.dtype = dtype;
  impl->dl.shape = impl->shape.data();
  impl->dl.strides = impl->strides.empty() ? nullptr : impl->strides.data();
  impl->dl.byte_offset = 0;
  return impl;
}
}  // namespace

std::string dtype_name(DLDataType dtype) {
  if (is_any_dtype(dtype)) return "any";
  for (const auto& d : kDtypeNames)
    if (d.code == dtype.code && d.bits == dtype.bits && dtype.lanes == 1) return d.name;
  return "dtype(code=" + std::to_string(dtype.code) + ",bits=" + std::to_string(dtype.bits) +
         ",lanes=" + std::to_string(dtype.lanes) + ")";
}

bool parse_dtype(const std::string& name, DLDataType* out) {
  for (const auto& d : kDtypeNames)
    if (name == d.name) {
      *out = DLDataType{d.code, d.bits, 1};
      return true;
    }
  return false;
}

size_t dtype_size(DLDataType dtype) { return (static_cast<size_t>(dtype.bits) * dtype.lanes + 7) / 8; }

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor Tensor::empty(DLDataType dtype, std::vector<int64_t> shape) {
  Tensor t = uninitialized(dtype, std::move(shape));
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

Tensor Tensor::uninitialized(DLDataType dtype, std::vector<int64_t> shape) {
  uint64_t bytes = dtype_size(dtype);
  bool too_big = false, empty = false;
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::Input, "negative dimension in shape " + shape_string(shape));
    empty = empty || d == 0;
    too_big = too_big || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  }
  if (empty) bytes = 0, too_big = false;  // [4, 2^62, 0] holds nothing, however large the rest
  if (too_big)
    throw Error(ErrorKind::OutOfMemory, "out of memory: a " + dtype_name(dtype) + " " + shape_string(shape) +
                                            " tensor asked for more than 2^64 bytes");
  void* data = host_aligned_alloc(64, bytes);
  if (data == nullptr)
    throw Error(ErrorKind::OutOfMemory,
                out_of_memory_message("a " + dtype_name(dtype) + " " + shape_string(shape) + " tensor", bytes));
  Tensor t;
  t.impl_ = make_impl(data, dtype, std::move(shape), {});
  t.impl_->release = [data] { std::free(data); };
  return t;
}

Tensor Tensor::from_blob(void* data, DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides,
                         std::function<void()> release) {
  Tensor t;
  t.impl_ = make_impl(data, dtype, std::move(shape), std::move(strides));
  t.impl_->release = std::move(release);
  return t;
}

Tensor Tensor::in_storage(void* data, DLDevice device, DLDataType dtype, std::vector<int64_t> shape,
                          std::function<void()> release) {
  Tensor t;
  t.impl_ = make_impl(data, dtype, std::move(shape), {});
  t.impl_->dl.device = device;
  t.impl_->release = std::move(release);
  return t;
}

Tensor Tensor::adopt(DLManagedTensor* managed, std::shared_ptr<void> keep_alive) {
  const DLTensor& src = managed->dl_tensor;
  std::vector<int64_t> shape(src.shape, src.shape + src.ndim);
  std::vector<int64_t> strides;
  if (src.strides != nullptr) strides.assign(src.strides, src.strides + src.ndim);
  Tensor t;
  t.impl_ = make_impl(src.data, src.dtype, std::move(shape), std::move(strides));
  t.impl_->dl.byte_offset = src.byte_offset;
  t.impl_->dl.device = src.device;
  // The deleter runs before keep_alive is dropped (members go after ~Impl's body): the
  // plugin's code must still be loaded. Capturing only `managed` keeps the function small.
  t.impl_->release = [managed] {
    if (managed->deleter != nullptr) managed->deleter(managed);
  };
  t.impl_->maker = std::move(keep_alive);
  return t;
}

const DLTensor& Tensor::dl() const {
  if (!impl_) throw Error(ErrorKind::Internal, "use of an undefined tensor");
  return impl_->dl;
}

const std::vector<int64_t>& Tensor::shape() const {
  if (!impl_) throw Error(ErrorKind::Internal, "use of an undefined tensor");
  return impl_->shape;
}

std::vector<int64_t> Tensor::strides() const {
  if (!impl_->strides.empty()) return impl_->strides;
  std::vector<int64_t> s(impl_->shape.size());
  int64_t step = 1;
  for (size_t i = s.size(); i-- > 0;) {
    s[i] = step;
    // Saturates: only an empty tensor's dims can multiply past int64 (found by fuzz_dlpack).
    if (__builtin_mul_overflow(step, impl_->shape[i], &step)) step = INT64_MAX;
  }
  return s;
}

int64_t Tensor::numel() const {
  // A zero anywhere gives 0 even after a product that overflows; a product past int64
  // (only a from_blob metadata tensor can have one) saturates (found by fuzz_shapes).
  int64_t n = 1;
  bool saturated = false;
  for (int64_t d : shape()) {
    if (d == 0) return 0;
    saturated = saturated || __builtin_mul_overflow(n, d, &n);
  }
  return saturated ? INT64_MAX : n;
}

bool Tensor::is_contiguous() const {
  if (impl_->strides.empty()) return true;
  int64_t expected = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] != 1 && impl_->strides[i] != expected) return false;
    if (__builtin_mul_overflow(expected, impl_->shape[i], &expected)) expected = INT64_MAX;  // (fuzz_dlpack)
  }
  return true;
}

void* Tensor::raw_data() const {
  // An empty tensor from outside may have no data and an offset (found by fuzz_dlpack).
  if (dl().data == nullptr) return nullptr;
  return static_cast<char*>(dl().data) + dl().byte_offset;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(dtype(), shape());
  const size_t item = dtype_size(dtype());
  const std::vector<int64_t> st = strides();
  const auto& sh = shape();
  const char* src = static_cast<const char*>(raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> index(sh.size(), 0);
  for (int64_t n = 0, total = numel(); n < total; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < sh.size(); ++d) offset += index[d] * st[d];
    std::memcpy(dst + n * item, src + offset * static_cast<int64_t>(item), item);
    for (size_t d = sh.size(); d-- > 0;) {  // odometer increment
      if (++index[d] < sh[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::shared_ptr<void> Tensor::memory_owner() const {
  if (impl_ && !impl_->release && !impl_->maker && impl_->first_owner && impl_->more_owners.empty())
    return impl_->first_owner;
  return impl_;
}

void Tensor::keep_alive(std::shared_ptr<void> owner) {
  if (!owner) return;
  if (!impl_->first_owner)
    impl_->first_owner = std::move(owner);
  else
    impl_->more_owners.push_back(std::move(owner));
}

}  // namespace switchyard
