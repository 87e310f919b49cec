// switchyard `linalg` plugin: matrix products on OpenBLAS's CBLAS, built against the SDK
// alone (no LibTorch). Ops, with ATen's argument names (see each ops_*.cpp):
//   aten::linear, aten::addmm, aten::mm, aten::bmm, aten::matmul, aten::baddbmm,
//   aten::einsum, and the fused aten::linear+aten::{relu,gelu,silu,hardswish}
// in float32 and float64. Outputs are host-allocated (infer() gives their shapes), so the
// host plans their memory. Kernel instances keep only read-only state after create:
// concurrent runs of one instance are safe.
//
// Threads: at init, SWITCHYARD_INTRA_OP_THREADS (which the host sets from
// [runtime] intra_op_threads) goes to openblas_set_num_threads, as the aten plugin
// gives it to ATen.
#include "linalg.hpp"

#include <cblas.h>

#include <cstdlib>

namespace {

sy::PluginDef& plugin() {
  static sy::PluginDef def = [] {
    if (const char* env = std::getenv("SWITCHYARD_INTRA_OP_THREADS")) {
      int n = std::atoi(env);
      if (n > 0) openblas_set_num_threads(n);
    }
    sy_linalg::KernelList kernels;
    sy_linalg::add_linear_kernels(kernels);
    sy_linalg::add_matmul_kernels(kernels);
    sy_linalg::add_einsum_kernels(kernels);
    return sy::PluginDef("linalg", "0.1.0", "switchyard", std::move(kernels));
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(plugin)
