// DLPack dtype <-> ATen scalar type: the one table, for plugins and tools that wrap ATen
// (the aten plugin, the host's TorchScript bridge, their tests). Header-only and free of
// LibTorch: the table names ATen's scalar types, and the functions are templates over the
// caller's c10::ScalarType, so a vendor builds against the SDK alone.
#ifndef SWITCHYARD_ATEN_DTYPE_HPP
#define SWITCHYARD_ATEN_DTYPE_HPP

#include <switchyard/sdk.h>

#include <dlpack/dlpack.h>

// X(name, code, bits) for every scalar type DLPack can name: `name` is the enumerator of
// c10::ScalarType, (code, bits) its DLPack dtype (lanes 1). Bool is SY_DL_BOOL (DLPack 0.6
// has no bool code).
// An X-macro list, laid out by hand.
// clang-format off
#define SY_ATEN_DTYPES(X)                                                                    \
  X(Float, kDLFloat, 32) X(Double, kDLFloat, 64) X(Half, kDLFloat, 16) X(BFloat16, kDLBfloat, 16) \
  X(Char, kDLInt, 8) X(Short, kDLInt, 16) X(Int, kDLInt, 32) X(Long, kDLInt, 64)               \
  X(Byte, kDLUInt, 8) X(Bool, SY_DL_BOOL, 8) X(ComplexFloat, kDLComplex, 64)                   \
  X(ComplexDouble, kDLComplex, 128)
// clang-format on

namespace sy {

// c10::ScalarType's numbering, for a plugin that reads a `dtype` attribute (an int, as
// TorchScript records it) without LibTorch: sy::to_dl_dtype(AtenScalarType(n), &dl).
enum class AtenScalarType : int {
  Byte = 0,
  Char,
  Short,
  Int,
  Long,
  Half,
  Float,
  Double,
  ComplexHalf,
  ComplexFloat,
  ComplexDouble,
  Bool,
  QInt8,
  QUInt8,
  QInt32,
  BFloat16
};

// The DLPack dtype of `type` (a c10::ScalarType); false for types DLPack cannot name.
template <typename ScalarType>
bool to_dl_dtype(ScalarType type, DLDataType* out) {
#define SY_ATEN_TO_DL(name, dl_code, dl_bits) \
  if (type == ScalarType::name) return *out = DLDataType{static_cast<uint8_t>(dl_code), dl_bits, 1}, true;
  SY_ATEN_DTYPES(SY_ATEN_TO_DL)
#undef SY_ATEN_TO_DL
  return false;
}

// The ATen scalar type of `dtype`; false for dtypes ATen cannot hold (vectors, uint16, ...).
template <typename ScalarType>
bool to_scalar_type(DLDataType dtype, ScalarType* out) {
  if (dtype.lanes != 1) return false;
#define SY_ATEN_FROM_DL(name, dl_code, dl_bits) \
  if (dtype.code == (dl_code) && dtype.bits == (dl_bits)) return *out = ScalarType::name, true;
  SY_ATEN_DTYPES(SY_ATEN_FROM_DL)
#undef SY_ATEN_FROM_DL
  return false;
}

}  // namespace sy

#endif  // SWITCHYARD_ATEN_DTYPE_HPP
