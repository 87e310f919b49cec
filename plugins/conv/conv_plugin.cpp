// The conv plugin: float32 convolution and 2-D pooling on oneDNN (no LibTorch), plus
// convolutions fused with the activation that follows them ("<conv op>+<activation op>",
// the host's fusion convention; the activation runs as a oneDNN post-op).
//
//   aten::conv1d, aten::conv2d, aten::convolution, aten::_convolution     conv_kernel.hpp
//   each of those + every activation in post_ops.cpp
//   aten::max_pool2d, aten::avg_pool2d, aten::adaptive_avg_pool2d         pool_kernel.hpp
//
// Threads: oneDNN runs on OpenMP (libgomp, as LibTorch does), so OMP_NUM_THREADS sets both.
#include "conv_kernel.hpp"
#include "pool_kernel.hpp"

namespace syconv {
namespace {

constexpr const char* kFamily = "conv";
const char* const kConvOps[] = {"aten::conv1d", "aten::conv2d", "aten::convolution", "aten::_convolution"};
const char* const kPoolOps[] = {"aten::max_pool2d", "aten::avg_pool2d", "aten::adaptive_avg_pool2d"};

sy::PluginDef& conv_plugin() {
  static sy::PluginDef def = [] {
    sy::PluginDef d("conv", "1.0.0", "switchyard");
    for (const char* op : kConvOps) {
      d.add(sy::kernel<ConvKernel>(op, kFamily, {sy::kFloat32}));
      for (const Consumer& c : consumers())
        d.add(sy::kernel<ConvKernel>(std::string(op) + "+" + c.op, kFamily, {sy::kFloat32}));
    }
    for (const char* op : kPoolOps) d.add(sy::kernel<PoolKernel>(op, kFamily, {sy::kFloat32}));
    return d;
  }();
  return def;
}

}  // namespace
}  // namespace syconv

SY_PLUGIN_FROM(syconv::conv_plugin)
