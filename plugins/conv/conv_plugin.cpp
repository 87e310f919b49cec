// The conv plugin: float32 convolution and 2-D pooling on oneDNN (no LibTorch), plus
// convolutions fused with the activation that follows them ("<conv op>+<activation op>",
// the host's fusion convention; the activation runs as a oneDNN post-op).
//
//   aten::conv1d, aten::conv2d, aten::convolution, aten::_convolution     conv_kernel.hpp
//   each of those + every activation in post_ops.cpp
//   each + aten::add (+ aten::relu): a residual tail; some epilogues by loop: split_epilogue.cpp
//   the 2-D ones + aten::relu + aten::max_pool2d (ResNet's stem)              conv_pool.hpp
//   aten::max_pool2d, aten::avg_pool2d, aten::adaptive_avg_pool2d         pool_kernel.hpp
//   aten::mul of an activation by a per-channel scale (squeeze-excitation) scale_kernel.hpp
//   aten::batch_norm (inference), alone and + aten::relu               batch_norm_kernel.hpp
//   aten::cat + aten::batch_norm (+ aten::relu): DenseNet's concat + norm   cat_norm_kernel.hpp
//   switchyard::channel_shuffle (the host's pattern for cat + shuffle),
//   aten::channel_shuffle, aten::native_channel_shuffle, and aten::cat
//   along channels (a shuffle of one group)                                shuffle_kernel.hpp
//
//   storages "nChw16c" and "nhwc": activations in oneDNN's own layouts   formats.hpp
//   (and their ".bf16" twins between convolutions computing in bfloat16)
//   every kernel is Tracked<>: what was found finite in them              finite_memo.hpp
//
// Threads: oneDNN runs on OpenMP (libgomp, as LibTorch does); each call sizes its team
// from the host's budget (common/openmp_threads.hpp).
#include "batch_norm_kernel.hpp"
#include "cat_norm_kernel.hpp"
#include "common/library_attributes.hpp"
#include "conv_kernel.hpp"
#include "conv_pool.hpp"
#include "finite_memo.hpp"
#include "formats.hpp"
#include "pool_kernel.hpp"
#include "scale_kernel.hpp"
#include "shuffle_kernel.hpp"

namespace syconv {
namespace {

constexpr const char* kFamily = "conv";
const char* const kConvOps[] = {"aten::conv1d", "aten::conv2d", "aten::convolution", "aten::_convolution"};
const char* const kPoolOps[] = {"aten::max_pool2d", "aten::avg_pool2d", "aten::adaptive_avg_pool2d"};

sy::PluginDef& conv_plugin() {
  static sy::PluginDef def = [] {
    sy::PluginDef d("conv", "1.1.0", "switchyard");
    d.attribute("onednn", sy_attributes::onednn());
    // In kIndex order (formats.hpp): the bfloat16 ones first, taken where every reader reads them.
    d.add_storage(sy::storage<Blocked16Bf16>("nChw16c.bf16", DLDevice{kDLCPU, 0}));
    d.add_storage(sy::storage<ChannelsLastBf16>("nhwc.bf16", DLDevice{kDLCPU, 0}));
    d.add_storage(sy::storage<Blocked16>("nChw16c", DLDevice{kDLCPU, 0}));
    d.add_storage(sy::storage<ChannelsLast>("nhwc", DLDevice{kDLCPU, 0}));
    for (const char* op : kConvOps) {
      d.add(sy::kernel<Tracked<ConvKernel>>(op, kFamily, {sy::kFloat32}));
      for (const Consumer& c : consumers())
        d.add(sy::kernel<Tracked<ConvKernel>>(std::string(op) + "+" + c.op, kFamily, {sy::kFloat32}));
      // A ResNet block's tail: conv, residual add (oneDNN's sum post-op), relu.
      d.add(sy::kernel<Tracked<ConvKernel>>(std::string(op) + "+aten::add", kFamily, {sy::kFloat32}));
      d.add(sy::kernel<Tracked<ConvKernel>>(std::string(op) + "+aten::add+aten::relu", kFamily, {sy::kFloat32}));
      if (std::string(op) != "aten::conv1d")
        d.add(sy::kernel<Tracked<ConvPoolKernel>>(std::string(op) + "+aten::relu+aten::max_pool2d", kFamily,
                                                  {sy::kFloat32}));
    }
    for (const char* op : kPoolOps) d.add(sy::kernel<Tracked<PoolKernel>>(op, kFamily, {sy::kFloat32}));
    d.add(sy::kernel<Tracked<ScaleKernel>>("aten::mul", kFamily, {sy::kFloat32}));
    for (const char* op : {"aten::batch_norm", "aten::batch_norm+aten::relu"})
      d.add(sy::kernel<Tracked<BatchNormKernel>>(op, kFamily, {sy::kFloat32}));
    for (const char* op : {"aten::cat+aten::batch_norm", "aten::cat+aten::batch_norm+aten::relu"})
      d.add(sy::kernel<Tracked<CatNormKernel>>(op, kFamily, {sy::kFloat32}));
    for (const char* op :
         {"switchyard::channel_shuffle", "aten::channel_shuffle", "aten::native_channel_shuffle", "aten::cat"})
      d.add(sy::kernel<Tracked<ShuffleKernel>>(op, "join", {sy::kFloat32}));
    return d;
  }();
  return def;
}

}  // namespace
}  // namespace syconv

SY_PLUGIN_FROM(syconv::conv_plugin)
