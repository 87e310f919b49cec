// libFuzzer target: the tensor conversion at the Python boundary (host/python/
// tensor_import.cpp, the code module.cpp runs on every torch input). The input bytes make a
// DLPack description: device, dtype (known ones and odd codes, bits, lanes), rank -1 to 66,
// dimensions and strides from 0 to INT64_MAX and negative, byte_offset, a null data pointer
// or a missing shape. check_dlpack must give a reason or the span its elements cover. An
// accepted tensor is then given exactly that many bytes (malloc'd, so ASan flags any read
// outside), adopted with import_dlpack, and read in full through Tensor::contiguous(); its
// deleter must run once when the last handle goes, and never for a refused one.
#include "fuzz_bytes.hpp"

#include "tensor_import.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace switchyard;

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_dlpack: %s\n", what);
  std::abort();
}

constexpr uint64_t kMaxBuffer = uint64_t{1} << 20;  // accepted tensors larger than this are not read

struct Owner {
  void* buffer = nullptr;
  int deleted = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  syfuzz::Bytes in{data, size, -2, 12};
  const uint8_t flags = in.byte();
  DLTensor t{};
  // Mostly CPU; sometimes CUDA, CUDAHost or an unknown device type.
  static constexpr int32_t kDevices[] = {kDLCPU, kDLCPU, kDLCPU, kDLCPU, kDLCUDA, kDLCUDAHost, 99, 0};
  // (Stored as bytes: a value outside DLPack 0.6's enum, as a newer producer may send, cannot
  // be made with a cast without undefined behaviour.)
  std::memcpy(&t.device.device_type, &kDevices[flags & 7], sizeof(int32_t));
  t.device.device_id = static_cast<int32_t>(in.byte() % 3);
  static constexpr DLDataType kDtypes[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1},  {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
                                           {kDLInt, 64, 1},   {kDLInt, 32, 1},    {kDLInt, 16, 1},   {kDLInt, 8, 1},
                                           {kDLUInt, 8, 1},   {SY_DL_BOOL, 8, 1}, {kDLUInt, 8, 1},   {kDLFloat, 32, 1}};
  const uint8_t d = in.byte();
  if (d < 240) {
    t.dtype = kDtypes[d % (sizeof kDtypes / sizeof kDtypes[0])];
  } else {  // odd dtypes: any code, bits and lanes
    t.dtype = DLDataType{in.byte(), in.byte(), static_cast<uint16_t>(in.byte() | (in.byte() << 8))};
  }
  const bool as_bool = (flags & 8) != 0;
  const uint8_t r = in.byte();
  t.ndim =
      r < 250 ? static_cast<int32_t>(r % 8) - (r % 37 == 0 ? 1 : 0) : static_cast<int32_t>(r) - 184;  // -1..7, 66..71
  const int32_t stored = t.ndim > 0 && t.ndim <= 80 ? t.ndim : 0;
  std::vector<int64_t> shape(static_cast<size_t>(stored)), strides(static_cast<size_t>(stored));
  for (int64_t& s : shape) s = in.number();
  const bool with_strides = (flags & 16) != 0;
  for (int64_t& s : strides) s = in.number();
  t.shape = (flags & 32) != 0 && t.ndim > 0 ? nullptr : shape.data();
  t.strides = with_strides ? strides.data() : nullptr;
  t.byte_offset = static_cast<uint64_t>(in.number()) & ((flags & 64) != 0 ? ~uint64_t{0} : uint64_t{0x3f});
  const bool null_data = (flags & 128) != 0;
  alignas(64) static char probe[64];
  t.data = null_data ? nullptr : probe;  // a stand-in address for the first check

  uint64_t span = 0;
  std::string why = python::check_dlpack(t, 0, &span);
  if (!why.empty() && why.rfind("input 0: ", 0) != 0) finding("a reason that does not name the input");

  // Through import_dlpack, as module.cpp calls it, with a real buffer where one fits.
  Owner owner;
  if (why.empty()) {
    if (span > kMaxBuffer || t.byte_offset > kMaxBuffer) return 0;  // accepted, too large to back here
    if (!null_data) {
      owner.buffer = std::malloc(static_cast<size_t>(t.byte_offset + span) + 1);  // +1: malloc(0) may be null
      if (owner.buffer == nullptr) return 0;
      std::memset(owner.buffer, 0x5a, static_cast<size_t>(t.byte_offset + span));
    }
    t.data = owner.buffer;  // null stays null (only an empty tensor gets here with it)
  }
  DLManagedTensor managed{};
  managed.dl_tensor = t;
  managed.manager_ctx = &owner;
  managed.deleter = [](DLManagedTensor* m) {
    auto* o = static_cast<Owner*>(m->manager_ctx);
    ++o->deleted;
    std::free(o->buffer);
    o->buffer = nullptr;
  };
  try {
    Tensor tensor = python::import_dlpack(&managed, 0, as_bool);
    if (!why.empty()) finding("import_dlpack accepted what check_dlpack refused");
    // nbytes() may exceed the span: stride 0 and overlapping strides, as torch's expand()
    // makes. A copy of such a view is as large as it says: only small ones are made here.
    if (tensor.nbytes() > kMaxBuffer) return 0;
    Tensor packed = tensor.contiguous();  // reads every element at its strided offset
    const auto* bytes = static_cast<const unsigned char*>(packed.raw_data());
    unsigned sum = 0;
    for (size_t i = 0; i < packed.nbytes(); ++i) sum += bytes[i];
    if (packed.nbytes() > 0 && sum != 0x5a * packed.nbytes()) finding("contiguous() read bytes it was not given");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Input) finding("an error of a kind other than Input");
    if (why.empty() && !as_bool) finding("import_dlpack refused what check_dlpack accepted");
    if (owner.deleted != 0) finding("a refused tensor's deleter ran");
    std::free(owner.buffer);
    return 0;
  }
  if (owner.deleted != 1) finding("the deleter did not run exactly once");
  return 0;
}
