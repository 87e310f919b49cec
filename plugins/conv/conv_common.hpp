// conv plugin, internal: what the convolution and pooling kernels share. oneDNN engine,
// memory descriptors built from DLPack tensors, attribute reading, the post-op table for
// fused `<conv>+<activation>` kernels, and a per-shape cache of prepared primitives.
//
// Layout policy: activations cross the plugin boundary as plain (possibly strided) NCHW
// host tensors. Inside, a primitive may prefer a blocked layout; then the plain tensor is
// reordered in and out per run. Constant weights are reordered into the primitive's
// preferred layout once and kept.
#pragma once

#include <switchyard/plugin.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include "common/onednn_engine.hpp"
#include "common/openmp_threads.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace syconv {

using Dims = std::vector<int64_t>;

// ---- oneDNN plumbing ----------------------------------------------------------------
dnnl::engine& engine();
// The calling thread's stream (streams are not meant to be shared between threads).
dnnl::stream& thread_stream();
// Scratchpad memory for one primitive run on the calling thread: one buffer per thread,
// grown as needed and kept, so runs allocate nothing (runs on other threads have their
// own). Valid until this thread's next call.
dnnl::memory thread_scratch(const dnnl::memory::desc& md);
// Executes `reorder` from `src` into `dst` on `stream`.
void reorder_into(dnnl::stream& stream, const dnnl::reorder& r, dnnl::memory& src, dnnl::memory& dst);

std::string to_string(const Dims& d);
using sy_onednn::error_message;  // dnnl::error -> "<what> (oneDNN status N)"
using sy_onednn::error_status;   // dnnl::error -> SY_ERROR_OUT_OF_MEMORY or SY_ERROR_INTERNAL

// Plain descriptor of an f32 tensor: its shape and element strides (NULL = compact).
dnnl::memory::desc plain_desc(const DLTensor& t);
// The same from explicit dims and element strides (to add a batch or group dimension).
dnnl::memory::desc strided_desc(const Dims& dims, const Dims& strides);
using sy::strides_of;  // element strides, filled in when compact
Dims compact_strides(const Dims& dims);
// Rejects (sy::Unsupported) dtypes other than float32, non-CPU tensors, and zero or
// negative strides on dimensions larger than 1 (oneDNN cannot describe them).
void check_tensor(const DLTensor& t, const char* what);
// Unsupported unless oneDNN accepts these strides (it refuses some overlapping layouts).
void describable(const Dims& dims, const Dims& strides, const char* what);
// The tensor's first element, for oneDNN memory handles (inputs are never written).
void* handle(const DLTensor& t);

// The largest exponent field (bits & kNonFinite) of the floats in `m`'s buffer: kNonFinite
// when one is NaN or infinite (a strided buffer's gaps are read too, so a stray NaN there
// only costs the careful path). The NaN guards need it below kNonFinite, Winograd's below
// kWinogradInputBelow (conv_kernel.cpp).
constexpr uint32_t kNonFinite = 0x7f800000u;
constexpr uint32_t kLargestFinite = 0x7f000000u;  // what "finite" alone says of a buffer
uint32_t max_exponent(const dnnl::memory& m);
uint32_t max_exponent(const float* p, size_t n);
inline bool all_finite(const dnnl::memory& m) { return max_exponent(m) < kNonFinite; }

// ---- attributes --------------------------------------------------------------------
// An int list attribute expanded to `n` values (one value is repeated, as ATen's int[2]);
// `fallback` when absent and `fallback` is non-empty, else Unsupported.
Dims int_list(const sy::Attrs& a, const char* name, size_t n, const Dims& fallback);
// Rejects attributes outside `known` (ignoring one could compute something else) and
// fused consumers' attributes ("post.alpha", "post2.approximate") outside `post_known`.
void check_attr_names(const sy::Node& node, const std::vector<std::string>& known,
                      const std::vector<std::string>& post_known);

// ---- fused activations (the consumer half of "<producer>+<consumer>") ----------------
struct Consumer {
  const char* op;                  // e.g. "aten::gelu"
  std::vector<std::string> attrs;  // its attribute names, without a "post." prefix
  // Appends the activation to `ops`, reading `<prefix><name>` attributes; Unsupported when
  // a value has no oneDNN equivalent.
  void (*append)(const sy::Attrs& attrs, const std::string& prefix, dnnl::post_ops& ops);
  // oneDNN's relu and clip turn NaN into a number where ATen keeps NaN: such kernels put
  // NaNs back when an input is not finite (see ConvKernel::run).
  bool keeps_nan = true;
};
const std::vector<Consumer>& consumers();

// What follows the producer in a fused op: "<producer>+<activation>",
// "<producer>+aten::add" (a residual added by oneDNN's sum post-op),
// "<producer>+aten::add+<activation>" or "<producer>+aten::relu+aten::max_pool2d".
struct Fusion {
  bool residual = false;  // "+aten::add": output = producer + alpha * residual
  const Consumer* activation = nullptr;
  std::string activation_prefix;   // "post." or "post2.": where its attributes are
  bool max_pool = false;           // "+aten::max_pool2d" after the activation ("post2.")
  std::vector<std::string> attrs;  // every fused attribute name, prefixed
};
// aten::max_pool2d's attribute names.
const std::vector<std::string>& max_pool_attr_names();
// Splits `op` into the producer and what is fused; throws sy::Error for an unknown part.
Fusion fusion_of(const std::string& op, std::string* producer);
// The post-ops of `f` for a node's attributes: sum (scale alpha), then the activation.
dnnl::post_ops post_ops_of(const Fusion& f, const sy::Attrs& attrs);

// ---- per-thread buffers ----------------------------------------------------------------
// A float buffer of at least `bytes` (64-byte aligned) kept per thread and use, grown as
// needed: the runs that follow allocate nothing. Valid until this thread's next call for
// the same use. Throws sy::Error when out of memory.
enum class ThreadBuffer { kChunk, kInput };
float* thread_buffer(ThreadBuffer use, size_t bytes);

// ---- per-shape cache -----------------------------------------------------------------
using sy_onednn::ShapeCache;  // prepared primitives per shape (common/onednn_engine.hpp)

// Appends dims and strides of `md` to a cache key.
void append_key(Dims& key, const dnnl::memory::desc& md);

}  // namespace syconv
