// The `cuda` plugin: kernels on NVIDIA GPU 0 and the "cuda" storage they keep values in
// (docs/cuda.md). The GPU is probed when the plugin loads; without a usable one the plugin
// still loads, lists its kernels and storage, and every kernel declines with the probe's
// reason ("no CUDA device: ..."), so that selection falls through to the next backend.
//
//   GEMMs (cuBLASLt)              gemm_kernels.cpp      linalg
//   convolution, pooling (cuDNN)  conv_kernels.cpp      conv
//   adaptive average pooling      pool_kernels.cpp      conv
//   element-wise                  elementwise_kernels.cpp, select_kernels.cpp
//   softmax, layer norm           reduce_kernels.cpp    normalization
//   shape ops, gathers            shape_kernels.cpp     shape
//   attention (fused)             attention_kernels.cpp attention
#include "device.hpp"
#include "kernels.hpp"
#include "storage.hpp"

namespace {

sy::PluginDef& cuda_plugin() {
  static sy::PluginDef def = [] {
    sycuda::Device::get();  // the probe: at load, never later on a hot path
    sycuda::KernelList kernels;
    sycuda::add_gemm_kernels(kernels);
#ifdef SY_CUDA_WITH_CUDNN
    sycuda::add_conv_kernels(kernels);
#endif
    sycuda::add_pool_kernels(kernels);
    sycuda::add_elementwise_kernels(kernels);
    sycuda::add_select_kernels(kernels);
    sycuda::add_reduce_kernels(kernels);
    sycuda::add_shape_kernels(kernels);
    sycuda::add_attention_kernels(kernels);
    sy::PluginDef d("cuda", "0.1.0", "switchyard", std::move(kernels));
    d.add_storage(sy::storage<sycuda::CudaStorage>("cuda", sycuda::kCudaDevice));
    for (const auto& [name, value] : sycuda::library_attributes()) d.attribute(name, value);
    return d;
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(cuda_plugin)
