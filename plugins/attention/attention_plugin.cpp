// The attention plugin: scaled dot-product attention as one fused, tiled kernel with a
// streaming softmax (flash_attention.cpp), and the fused transformer fast-path ops built
// on it with oneDNN sgemm projections, and the softmax and layer norm of decomposed
// transformers, written over their inputs (ops_softmax.cpp, ops_layer_norm.cpp), and
// their bmm -> softmax -> bmm chain on the fused kernel when its scores would be large
// (ops_bmm_softmax_bmm.cpp). float32 on the CPU; SDK and oneDNN only. The tiles'
// products run on the calling thread (they already run on the host's pool); larger ones
// size oneDNN's team from the host's budget.
#include "ops.hpp"

#include "common/library_attributes.hpp"

namespace {

sy::PluginDef& attention_plugin() {
  using namespace sy_attention;
  static sy::PluginDef def = [] {
    sy::PluginDef d("attention", "0.1.0", "switchyard",
                    {
                        make_sdpa_kernel("aten::_scaled_dot_product_attention", /*torch2=*/false),
                        make_sdpa_kernel("aten::scaled_dot_product_attention", /*torch2=*/true),
                        make_mha_kernel("aten::_native_multi_head_attention"),
                        make_encoder_layer_kernel("aten::_transformer_encoder_layer_fwd"),
                        make_softmax_kernel("aten::softmax"),
                        make_softmax_kernel("aten::_softmax"),
                        make_layer_norm_kernel("aten::layer_norm"),
                        make_bmm_softmax_bmm_kernel("aten::bmm+aten::softmax+aten::bmm"),
                        make_baddbmm_softmax_bmm_kernel("aten::baddbmm+aten::softmax+aten::bmm"),
                    });
    d.attribute("onednn", sy_attributes::onednn());
    return d;
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(attention_plugin)
