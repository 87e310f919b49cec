// The tensor conversion at the Python boundary, free of pybind11: what module.cpp does with
// the DLManagedTensor torch exports for each input, and what tests/fuzz/fuzz_dlpack.cpp
// fuzzes. A DLPack description from outside is checked before it is trusted: dtype, device,
// rank, shape, strides, offset and the address range its elements span.
#pragma once

#include <switchyard/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace switchyard::python {

inline constexpr int32_t kMaxImportDims = 64;  // torch's own limit on a tensor's rank

// Why `t` cannot be input `index`, or "" when it can; then `*span_bytes` (optional) gets the
// bytes from data + byte_offset that its elements span (0 for an empty tensor).
std::string check_dlpack(const DLTensor& t, size_t index, uint64_t* span_bytes = nullptr);

// Checks `managed` and adopts it as input `index` (its deleter runs when the last handle
// goes). `as_bool`: the tensor is the uint8 bytes of a bool tensor (torch 1.13 exports no
// bool), relabelled bool. Throws Error(Input) when the check fails; `managed` then stays
// with the caller.
Tensor import_dlpack(DLManagedTensor* managed, size_t index, bool as_bool);

}  // namespace switchyard::python
