// switchyard `linalg` plugin: matrix products, float32 on oneDNN (run-time ISA dispatch:
// a matmul primitive against a constant weight packed once, packed.cpp; sgemm otherwise)
// and float64 on OpenBLAS's CBLAS, built against the SDK alone (no LibTorch).
// Ops, with ATen's argument names (see each ops_*.cpp):
//   aten::linear, aten::addmm, aten::mm, aten::bmm, aten::matmul, aten::baddbmm,
//   aten::einsum, the fused aten::linear+aten::{relu,gelu,silu,hardswish} and a
//   transformer MLP, aten::linear+aten::{gelu,relu}+aten::linear (ops_mlp.cpp, float32),
//   and around attention aten::linear+aten::chunk, aten::bmm+aten::transpose+aten::contiguous
//   (ops_heads.cpp)
// in float32 and float64; and the recurrent layers aten::lstm, aten::gru, aten::rnn_tanh,
// aten::rnn_relu, each one kernel on oneDNN's RNN primitives (ops_rnn.cpp, float32).
// Outputs are host-allocated (infer() gives their shapes), so the host plans their memory.
// Kernel instances keep only read-only state after create: concurrent runs of one
// instance are safe.
//
// Threads: oneDNN's OpenMP team follows the host's budget per call (SY_HostApi.num_threads);
// OpenBLAS is held to one thread, so its own pool never wakes (plugins start no threads).
#include "linalg.hpp"

#include "common/sgemm.hpp"

#include <cblas.h>

#include <string>

namespace {

sy::PluginDef& plugin() {
  static sy::PluginDef def = [] {
    openblas_set_num_threads(1);
    sy_linalg::KernelList kernels;
    sy_linalg::add_linear_kernels(kernels);
    sy_linalg::add_matmul_kernels(kernels);
    sy_linalg::add_einsum_kernels(kernels);
    sy_linalg::add_mlp_kernels(kernels);
    sy_linalg::add_swiglu_kernel(kernels);
    sy_linalg::add_head_kernels(kernels);
    sy_linalg::add_rnn_kernels(kernels);
    // `plugins` shows the GEMM that runs, e.g. "0.2.0 (oneDNN 3.0.0 sgemm, avx512_core)".
    sy::PluginDef d("linalg", "0.2.0 (" + sy_gemm::describe() + "; float64: OpenBLAS)", "switchyard",
                    std::move(kernels));
    d.attribute("onednn", sy_attributes::onednn());
    d.attribute("openblas", std::string(openblas_get_config()) + ", core " + openblas_get_corename());
    return d;
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(plugin)
