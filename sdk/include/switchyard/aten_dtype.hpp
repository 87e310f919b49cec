// DLPack dtype <-> ATen scalar type: the one table, for plugins and tools that wrap ATen
// (the aten plugin, the host's TorchScript bridge, their tests). Header-only; it needs
// LibTorch's c10 headers, so neither sdk.h nor plugin.hpp includes it.
#pragma once

#include <switchyard/sdk.h>

#include <c10/core/ScalarType.h>
#include <dlpack/dlpack.h>

namespace sy {

struct AtenDtype {
  c10::ScalarType scalar_type;
  DLDataType dl;
};

// Every scalar type DLPack can name (bool as SY_DL_BOOL: DLPack 0.6 has no bool code).
inline constexpr AtenDtype kAtenDtypes[] = {
    {c10::ScalarType::Float, {kDLFloat, 32, 1}},         {c10::ScalarType::Double, {kDLFloat, 64, 1}},
    {c10::ScalarType::Half, {kDLFloat, 16, 1}},          {c10::ScalarType::BFloat16, {kDLBfloat, 16, 1}},
    {c10::ScalarType::Char, {kDLInt, 8, 1}},             {c10::ScalarType::Short, {kDLInt, 16, 1}},
    {c10::ScalarType::Int, {kDLInt, 32, 1}},             {c10::ScalarType::Long, {kDLInt, 64, 1}},
    {c10::ScalarType::Byte, {kDLUInt, 8, 1}},            {c10::ScalarType::Bool, {SY_DL_BOOL, 8, 1}},
    {c10::ScalarType::ComplexFloat, {kDLComplex, 64, 1}}, {c10::ScalarType::ComplexDouble, {kDLComplex, 128, 1}},
};

// The DLPack dtype of `type`; false for types DLPack cannot name (quantized, ...).
inline bool to_dl_dtype(c10::ScalarType type, DLDataType* out) {
  for (const AtenDtype& d : kAtenDtypes)
    if (d.scalar_type == type) return *out = d.dl, true;
  return false;
}

// The ATen scalar type of `dtype`; false for dtypes ATen cannot hold (vectors, uint16, ...).
inline bool to_scalar_type(DLDataType dtype, c10::ScalarType* out) {
  for (const AtenDtype& d : kAtenDtypes)
    if (d.dl.code == dtype.code && d.dl.bits == dtype.bits && d.dl.lanes == dtype.lanes)
      return *out = d.scalar_type, true;
  return false;
}

}  // namespace sy
