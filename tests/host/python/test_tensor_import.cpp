// The DLPack checks of the Python boundary (host/python/tensor_import.cpp): every refusal
// with its exact text (docs/reliability.md lists them), what is accepted (strided, broadcast,
// empty, bool as uint8 bytes), and ownership: a refused tensor stays with the caller, an
// adopted one is deleted once.
#include "tensor_import.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace switchyard;
using python::check_dlpack;

namespace {

struct Desc {  // a DLTensor over local storage
  alignas(64) float data[64] = {};
  std::vector<int64_t> shape, strides;
  DLTensor t{};
  Desc(std::vector<int64_t> s, std::vector<int64_t> st = {}) : shape(std::move(s)), strides(std::move(st)) {
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.ndim = static_cast<int32_t>(shape.size());
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
  }
};

}  // namespace

TEST(TensorImport, AcceptsWhatTorchExports) {
  uint64_t span = 99;
  Desc plain({2, 3});
  EXPECT_EQ(check_dlpack(plain.t, 0, &span), "");
  EXPECT_EQ(span, 24u);
  Desc transposed({3, 2}, {1, 3});
  EXPECT_EQ(check_dlpack(transposed.t, 0, &span), "");
  EXPECT_EQ(span, 24u);
  Desc expanded({4, 1000000}, {1, 0});  // torch's expand(): 4 floats seen as 4 million
  EXPECT_EQ(check_dlpack(expanded.t, 0, &span), "");
  EXPECT_EQ(span, 16u);
  Desc empty({0, 5});
  empty.t.data = nullptr;
  EXPECT_EQ(check_dlpack(empty.t, 0, &span), "");
  EXPECT_EQ(span, 0u);
  Desc scalar({});
  EXPECT_EQ(check_dlpack(scalar.t, 0, &span), "");
  EXPECT_EQ(span, 4u);
}

TEST(TensorImport, RefusalsNameTheInputAndTheProblem) {
  auto why = [](Desc& d) { return check_dlpack(d.t, 1); };
  Desc cuda({2});
  int32_t type = kDLCUDA;
  std::memcpy(&cuda.t.device.device_type, &type, sizeof type);
  EXPECT_EQ(why(cuda),
            "input 1: a tensor on DLPack device type 2 (id 0); switchyard takes CPU tensors (move it with .cpu())");
  Desc newer({2});
  type = 16;  // kDLHexagon in DLPack 0.8, outside this header's enum
  std::memcpy(&newer.t.device.device_type, &type, sizeof type);
  EXPECT_EQ(why(newer),
            "input 1: a tensor on DLPack device type 16 (id 0); switchyard takes CPU tensors (move it with .cpu())");
  Desc complex({2});
  complex.t.dtype = DLDataType{kDLComplex, 64, 1};
  EXPECT_EQ(
      why(complex),
      "input 1: dtype dtype(code=5,bits=64,lanes=1) is not one switchyard takes (float16/32/64, bfloat16, int8/16/32/64, uint8, bool)");
  Desc vec({2});
  vec.t.dtype = DLDataType{kDLFloat, 32, 4};
  EXPECT_EQ(
      why(vec),
      "input 1: dtype dtype(code=2,bits=32,lanes=4) is not one switchyard takes (float16/32/64, bfloat16, int8/16/32/64, uint8, bool)");
  Desc rank({2});
  rank.t.ndim = -1;
  EXPECT_EQ(why(rank), "input 1: rank -1 (expected 0 to 64)");
  Desc noshape({2});
  noshape.t.shape = nullptr;
  EXPECT_EQ(why(noshape), "input 1: a rank-1 tensor without a shape");
  Desc negative({2, -3});
  EXPECT_EQ(why(negative), "input 1: dimension 1 of shape [2, -3] is negative");
  Desc huge({int64_t{1} << 40, int64_t{1} << 30});
  EXPECT_EQ(why(huge), "input 1: shape [1099511627776, 1073741824] holds more than 2^63 bytes of float32");
  Desc flipped({3, 2}, {-2, 1});
  EXPECT_EQ(
      why(flipped),
      "input 1: stride -2 in dimension 0 of shape [3, 2]: negative strides are not supported (pass .contiguous())");
  Desc far({2, 2}, {INT64_MAX, 1});
  EXPECT_EQ(why(far), "input 1: strides [9223372036854775807, 1] of shape [2, 2] span more than 2^63 bytes");
  Desc null({2});
  null.t.data = nullptr;
  EXPECT_EQ(why(null), "input 1: a non-empty tensor [2] with a null data pointer");
  Desc offset({2});
  offset.t.byte_offset = ~uint64_t{0} - 8;
  EXPECT_EQ(why(offset), "input 1: byte_offset 18446744073709551607 puts the data past the end of memory");
  Desc misaligned({2});
  misaligned.t.byte_offset = 2;
  EXPECT_EQ(why(misaligned), "input 1: data at byte_offset 2 is not aligned to its 4-byte elements");
}

TEST(TensorImport, ARefusedTensorStaysWithTheCallerAnAdoptedOneIsDeletedOnce) {
  static int deleted = 0;
  deleted = 0;
  Desc d({2, 3});
  DLManagedTensor managed{};
  managed.dl_tensor = d.t;
  managed.deleter = [](DLManagedTensor*) { ++deleted; };
  managed.dl_tensor.shape[1] = -3;
  try {
    python::import_dlpack(&managed, 0, false);
    ADD_FAILURE() << "a negative dimension was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
  }
  EXPECT_EQ(deleted, 0);
  managed.dl_tensor.shape[1] = 3;
  {
    Tensor t = python::import_dlpack(&managed, 0, false);
    EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.raw_data(), d.data);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(TensorImport, BoolCrossesAsUint8Bytes) {
  Desc d({4});
  DLManagedTensor managed{};
  managed.dl_tensor = d.t;
  try {
    python::import_dlpack(&managed, 2, true);
    ADD_FAILURE() << "a float32 tensor was taken as bool";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 2: a bool tensor must cross as uint8 bytes, got float32");
  }
  managed.dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
  Tensor t = python::import_dlpack(&managed, 2, true);
  EXPECT_EQ(dtype_name(t.dtype()), "bool");
}
