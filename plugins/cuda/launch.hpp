// cuda plugin, internal: the device kernels' launchers, implemented in the .cu files.
// Plain types only, so that host files need no CUDA device code and the .cu files no SDK
// C++ helpers. Every launcher queues work on `stream` and returns the launch's error
// (cudaGetLastError); none of them synchronizes.
//
// Tensors are contiguous unless a launcher takes strides: the "cuda" storage keeps every
// value compact (sdk.h), and host inputs are staged compact. Strides and offsets are in
// elements. Half and bfloat16 values are computed in float and rounded once at the end.
#pragma once

#include "elementwise_math.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sycuda::launch {

enum class DT : int32_t { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

constexpr int kMaxDims = 8;

// A strided walk over `ndim` dims (outermost first); stride 0 repeats (broadcast).
struct Walk {
  int32_t ndim = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

// An operand of an element-wise kernel: a tensor walked with `walk` strides over the
// output's shape, or (data == nullptr) the constant `scalar`.
struct Operand {
  const void* data = nullptr;
  DT dtype = DT::F32;
  int64_t stride[kMaxDims] = {};
  bool contiguous = false;  // strides are the output's compact ones: index i is element i
  double scalar = 0;
};

// cudaSuccess when this binary holds code the current GPU can run (device.cpp's probe).
cudaError_t probe_kernel_image();

// ---- elementwise.cu --------------------------------------------------------------------------

// y[i] = op(x[i]) for n contiguous elements; x and y may be the same buffer. dt: F32/F16/BF16.
cudaError_t unary(DT dt, UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t stream);
// y[i] = !x[i] for bool (one byte) elements.
cudaError_t logical_not(const void* x, void* y, int64_t n, cudaStream_t stream);
// y = act(y + bias[channel]) in place, channel = (i / inner) % channels; bias may be NULL.
cudaError_t bias_activation(DT dt, UnaryOp act, void* y, const void* bias, int64_t n, int64_t channels, int64_t inner,
                            cudaStream_t stream);
// out = op(a, b) over `shape` (out compact). Arithmetic: out has a's dtype (F32/F16/BF16/
// I64/I32, both tensor operands of it; a scalar operand is converted). Comparisons: out is
// Bool. BinaryOp::alpha scales b for add/sub.
cudaError_t binary(BinaryOp op, const Operand& a, const Operand& b, DT out_dtype, void* out, const Walk& shape,
                   int64_t n, cudaStream_t stream);
// out = cond ? x : y over `shape`; cond is Bool, x/y/out of dtype `dt` (any, by size).
cudaError_t where(const Operand& cond, const Operand& x, const Operand& y, DT dt, void* out, const Walk& shape,
                  int64_t n, cudaStream_t stream);
// y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c] (inference batch_norm); the
// parameters have x's dtype, weight/bias may be NULL; c = (i / inner) % channels.
cudaError_t batch_norm(DT dt, const void* x, void* y, const void* mean, const void* var, const void* weight,
                       const void* bias, double eps, int64_t n, int64_t channels, int64_t inner, cudaStream_t stream);
// y[i] = value for n elements of dtype dt (any).
cudaError_t fill(DT dt, void* y, int64_t n, double value, cudaStream_t stream);

// ---- copy.cu ---------------------------------------------------------------------------------

// dst[dst_walk] = src[src_walk] element by element (elements of `elem_size` bytes: 1, 2, 4
// or 8); both walks have the same sizes. Copies of one contiguous run go by cudaMemcpyAsync.
cudaError_t strided_copy(int elem_size, const void* src, const Walk& src_walk, void* dst, const Walk& dst_walk,
                         cudaStream_t stream);
// out[o, i, r] = table[o, index[i], r] for o < outer, i < count, r < inner (elements of
// elem_size bytes); index is I64 or I32, entries in [-rows, rows) (negative counts from
// the end). An entry out of range writes zeros and stores `error_code` in *error_word.
cudaError_t gather(int elem_size, const void* table, int64_t outer, int64_t rows, int64_t inner, const void* index,
                   DT index_dtype, int64_t count, void* out, int* error_word, int error_code, cudaStream_t stream);

// ---- reduce.cu -------------------------------------------------------------------------------

// Softmax (or log-softmax) over the middle dim of [outer, dim, inner]; dt: F32/F16/BF16.
cudaError_t softmax(DT dt, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool log,
                    cudaStream_t stream);
// Layer norm of `rows` rows of `cols` elements; weight and bias ([cols], x's dtype) may be NULL.
cudaError_t layer_norm(DT dt, const void* x, void* y, const void* weight, const void* bias, int64_t rows, int64_t cols,
                       double eps, cudaStream_t stream);

// ---- pool.cu ---------------------------------------------------------------------------------

// ATen's adaptive average pooling of [planes, h, w] into [planes, oh, ow].
cudaError_t adaptive_avg_pool2d(DT dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                                int64_t ow, cudaStream_t stream);

// ---- attention.cu ----------------------------------------------------------------------------

// One attention problem: for each index of the `lead` dims (batch, heads, ...), out[L, Ev] =
// softmax(q[L, E] k[S, E]^T * scale + mask) v[S, Ev]. Strides in elements; the lead strides
// may be 0 (broadcast). Rows of q/k/v/out are compact (last-dim stride 1).
struct Attention {
  DT dtype = DT::F32;  // of q, k, v and out
  int32_t lead_ndim = 0;
  int64_t lead[kMaxDims] = {};
  int64_t q_lead[kMaxDims] = {}, k_lead[kMaxDims] = {}, v_lead[kMaxDims] = {}, out_lead[kMaxDims] = {};
  int64_t q_row = 0, k_row = 0, v_row = 0, out_row = 0;  // stride between rows
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  int64_t lq = 0, lk = 0, e = 0, ev = 0;
  float scale = 1.f;
  bool causal = false;  // key j is seen by query i iff j <= i
  // Mask: none, bool (true = take part) or additive (of `mask_dtype`), broadcast by strides.
  enum class Mask : int32_t { None, KeepIfTrue, Additive } mask = Mask::None;
  const void* mask_data = nullptr;
  DT mask_dtype = DT::F32;
  int64_t mask_lead[kMaxDims] = {};
  int64_t mask_row = 0, mask_col = 0;
  // Optional: each row's final maximum and sum of exp (float pairs, [leads..., lq, 2] compact),
  // for attention_weights().
  float* row_stats = nullptr;
};
// The largest head dims (E and Ev) the kernel handles.
constexpr int64_t kMaxHeadDim = 128;
cudaError_t attention(const Attention& problem, cudaStream_t stream);
// The softmax weights [leads..., lq, lk] (compact, q's dtype) of a problem attention() ran
// with row_stats: a second pass over the scores, so that no [lq, lk] scratch is needed.
cudaError_t attention_weights(const Attention& problem, void* weights, cudaStream_t stream);

}  // namespace sycuda::launch
