// switchyard `elementwise` plugin: float32 element-wise arithmetic with broadcasting
// (ops_binary.cpp), unary math (ops_unary.cpp) and the mean (ops_mean.cpp), written for the glue of traced transformers (residual adds, score
// scaling): outputs are host-allocated, so the host plans their memory and may let them
// take a dying input's buffer. Built against the SDK alone; threads: sy::parallel_for.
#include "ops.hpp"

namespace {

sy::PluginDef& elementwise_plugin() {
  static sy::PluginDef def = [] {
    std::vector<std::shared_ptr<sy::KernelEntry>> kernels;
    sy_elementwise::add_binary_kernels(kernels);
    sy_elementwise::add_unary_kernels(kernels);
    sy_elementwise::add_mean_kernel(kernels);
    sy_elementwise::add_rms_norm_kernel(kernels);
    sy_elementwise::add_rotary_kernel(kernels);
    return sy::PluginDef("elementwise", "0.1.0", "switchyard", std::move(kernels));
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(elementwise_plugin)
