// attention plugin: the kernel classes' factories; attention_plugin.cpp's table names the ops.
#pragma once

#include <switchyard/plugin.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sy_attention {

// float32 tensors and bool masks.
inline const std::vector<DLDataType>& kernel_dtypes() {
  static const std::vector<DLDataType> d{sy::kFloat32, sy::kBool};
  return d;
}

// aten::_scaled_dot_product_attention (LibTorch 1.13's schema) or, with torch2,
// aten::scaled_dot_product_attention (PyTorch 2.x's).
std::shared_ptr<sy::KernelEntry> make_sdpa_kernel(const std::string& op, bool torch2);
// aten::_native_multi_head_attention
std::shared_ptr<sy::KernelEntry> make_mha_kernel(const std::string& op);
// aten::_transformer_encoder_layer_fwd
std::shared_ptr<sy::KernelEntry> make_encoder_layer_kernel(const std::string& op);
// aten::softmax, aten::_softmax (float32, any dim; may write over its input)
std::shared_ptr<sy::KernelEntry> make_softmax_kernel(const std::string& op);
// aten::bmm+aten::softmax+aten::bmm: decomposed attention on the fused kernel
std::shared_ptr<sy::KernelEntry> make_bmm_softmax_bmm_kernel(const std::string& op);
// aten::baddbmm+aten::softmax+aten::bmm: the same with an additive mask (beta 1) and scale alpha
std::shared_ptr<sy::KernelEntry> make_baddbmm_softmax_bmm_kernel(const std::string& op);
// aten::layer_norm (float32; may write over its input)
std::shared_ptr<sy::KernelEntry> make_layer_norm_kernel(const std::string& op);

}  // namespace sy_attention
