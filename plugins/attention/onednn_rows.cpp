// attention plugin: softmax and layer norm over compact float32 rows, in place, on
// oneDNN's primitives (JIT kernels for the CPU at hand), run on the OpenMP team the GEMMs
// use. On a ViT/BERT layer these ran 2-3.5x faster than the plugin's own loops, whose
// per-row horizontal reductions dominate rows of 48-200 floats.
#include "onednn_rows.hpp"

#include "common/onednn_engine.hpp"
#include "common/openmp_threads.hpp"
#include "common/vector_clones.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <switchyard/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace sy_attention {
namespace {

using dnnl::memory;

template <typename F>
void guarded(const char* what, int64_t rows, int64_t cols, F f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    throw sy::Error(std::string("oneDNN ") + what + " over [" + std::to_string(rows) + ", " + std::to_string(cols) +
                        "] failed: " + sy_onednn::error_message(e),
                    sy_onednn::error_status(e));
  }
}

// Whether any of x[0..n) is NaN or +inf: one pass with no per-row reduction, so it costs
// a few microseconds on an attention layer's scores.
SY_VECTOR_CLONES bool any_nan_or_inf(const float* x, int64_t n) {
  constexpr float kMax = std::numeric_limits<float>::max();
  int found = 0;
#pragma omp simd reduction(| : found)
  for (int64_t i = 0; i < n; ++i) found |= !(x[i] <= kMax);  // false for NaN and +inf only
  return found != 0;
}

// The same over the calling thread's OpenMP team, each thread a contiguous share: the
// share it wrote in the batched GEMM before (linalg splits products the same way) and
// softmaxes after, so no thread reads rows from the other core's cache. When the two
// cores sit on different dies, a serial scan of gpt b8's 2 MiB of scores took the
// softmax from 0.034 to 0.093 ms (docs/benchmarks-history.md, the host's two modes).
bool any_nan_or_inf_team(const float* x, int64_t n) {
  if (n < static_cast<int64_t>(sy_omp::kSerialWork) * 2 || omp_get_max_threads() < 2) return any_nan_or_inf(x, n);
  int found = 0;
#pragma omp parallel reduction(| : found)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    found |= any_nan_or_inf(x + n * t / team, n * (t + 1) / team - n * t / team) ? 1 : 0;
  }
  return found != 0;
}

memory::desc rows_desc(int64_t rows, int64_t cols) {
  return memory::desc({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
}

}  // namespace

void softmax_rows(float* y, int64_t rows, int64_t cols) {
  if (rows * cols == 0) return;
  static sy_onednn::ShapeCache<dnnl::softmax_forward, 64> cache;  // shared by every node
  // oneDNN's kernel gives a row with a NaN or +inf score numbers (its exp takes NaN to 0),
  // where ATen's softmax makes it NaN: such rows are found first and set to NaN after.
  // (A row of -inf comes out NaN, 0 / 0, as in ATen; the conformance kit checks both.)
  sy_omp::Threads threads(static_cast<double>(rows) * static_cast<double>(cols));
  std::vector<int64_t> nan_rows;
  if (any_nan_or_inf_team(y, rows * cols))
    for (int64_t r = 0; r < rows; ++r)
      if (any_nan_or_inf(y + r * cols, cols)) nan_rows.push_back(r);
  guarded("softmax", rows, cols, [&] {
    const memory::desc md = rows_desc(rows, cols);
    dnnl::engine& eng = sy_onednn::cpu_engine();
    auto prim = cache.get({rows, cols}, [&] {
      return std::make_shared<const dnnl::softmax_forward>(dnnl::softmax_forward::primitive_desc(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng));
    });
    const memory& data = sy_onednn::thread_memory(sy_onednn::kSrcSlot, md, y);
    dnnl::stream& s = sy_onednn::thread_stream();
    sy_onednn::execute(*prim, s, {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
    s.wait();
  });
  for (int64_t r : nan_rows) std::fill(y + r * cols, y + (r + 1) * cols, std::numeric_limits<float>::quiet_NaN());
}

void layer_norm(float* x, int64_t rows, int64_t d, const float* gamma, const float* beta, double eps) {
  if (rows * d == 0) return;
  static sy_onednn::ShapeCache<dnnl::layer_normalization_forward, 64> cache;
  sy_omp::Threads threads(static_cast<double>(rows) * static_cast<double>(d));
  guarded("layer norm", rows, d, [&] {
    using flags = dnnl::normalization_flags;
    flags f = flags::none;
    if (gamma != nullptr) f = f | flags::use_scale;
    if (beta != nullptr) f = f | flags::use_shift;
    const float feps = static_cast<float>(eps);
    int64_t eps_bits = 0;
    std::memcpy(&eps_bits, &feps, sizeof feps);
    const memory::desc md = rows_desc(rows, d);
    const memory::desc wd({d}, memory::data_type::f32, memory::format_tag::a);
    dnnl::engine& eng = sy_onednn::cpu_engine();
    auto prim = cache.get({rows, d, static_cast<int64_t>(f), eps_bits}, [&] {
      return std::make_shared<const dnnl::layer_normalization_forward>(
          dnnl::layer_normalization_forward::primitive_desc(
              dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, feps, f), eng));
    });
    using sy_onednn::thread_memory;
    const memory none;  // an absent argument (no gamma or beta)
    const memory& data = thread_memory(sy_onednn::kSrcSlot, md, x);
    const memory& scale = gamma != nullptr ? thread_memory(sy_onednn::kScaleSlot, wd, const_cast<float*>(gamma)) : none;
    const memory& shift = beta != nullptr ? thread_memory(sy_onednn::kShiftSlot, wd, const_cast<float*>(beta)) : none;
    dnnl::stream& s = sy_onednn::thread_stream();
    sy_onednn::execute(*prim, s,
                       {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}});
    s.wait();
  });
}

}  // namespace sy_attention
