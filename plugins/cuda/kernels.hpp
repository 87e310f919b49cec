// cuda plugin, internal: each kernel file's registration hook, called by cuda_plugin.cpp.
#pragma once

#include "elementwise_math.hpp"

#include <switchyard/plugin.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sycuda {

using KernelList = std::vector<std::shared_ptr<sy::KernelEntry>>;

// Registers K for `op` as a kernel on the CUDA device (SY_KernelDef.device_type kDLCUDA).
template <typename K>
void add_kernel(KernelList& list, const std::string& op, const char* family, const std::vector<DLDataType>& dtypes,
                const void* user_data = nullptr) {
  list.push_back(sy::kernel<K>(op, family, dtypes, user_data, kDLCUDA));
}

void add_gemm_kernels(KernelList& list);         // gemm_kernels.cpp
void add_elementwise_kernels(KernelList& list);  // elementwise_kernels.cpp: unary, binary
void add_select_kernels(KernelList& list);       // select_kernels.cpp: where, masked_fill, batch_norm, fills
void add_reduce_kernels(KernelList& list);       // reduce_kernels.cpp
void add_shape_kernels(KernelList& list);        // shape_kernels.cpp
void add_attention_kernels(KernelList& list);    // attention_kernels.cpp
void add_pool_kernels(KernelList& list);         // pool_kernels.cpp
void add_conv_kernels(KernelList& list);         // conv_kernels.cpp (with cuDNN only)

// The activations a GEMM or convolution kernel runs after itself ("<op>+<activation>",
// sdk.h's fused-kernel convention), as unary ops of elementwise_math.hpp.
const std::vector<std::string>& fusable_activations();  // "aten::relu", "aten::gelu", ...
// The unary op `op` ("aten::gelu") with its attributes read under `prefix` ("" or "post.");
// nullopt if `op` is no unary op of this plugin; Unsupported for a value it cannot do.
std::optional<UnaryOp> unary_op(const std::string& op, const sy::Attrs& attrs, const std::string& prefix);
// The attribute names of unary op `op` (without prefix).
std::vector<std::string> unary_attr_names(const std::string& op);
// Splits a fused op "A+B" into A and, if present, B's unary op (attributes "post.*").
std::string producer_of(const std::string& op);
std::optional<UnaryOp> fused_activation(const sy::Node& node);

}  // namespace sycuda
