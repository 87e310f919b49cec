// cuda plugin: fused scaled-dot-product attention (launch.hpp), flash-style: scores are
// never stored. A block takes 16 query rows of one (batch, head), four rows per warp, and
// walks the keys in tiles of 32 held in shared memory; each warp keeps its rows' running
// maximum and sum (the streaming softmax) and the output rows in registers, lane d owning
// columns d, d + 32, ... Float arithmetic throughout; head dims up to kMaxHeadDim.
#include "device_types.cuh"

namespace sycuda::launch {

namespace {

constexpr int kWarps = 4, kRowsPerWarp = 4, kRows = kWarps * kRowsPerWarp, kKeys = 32;
constexpr int kSlots = static_cast<int>(kMaxHeadDim) / 32;  // output columns per lane

__device__ __forceinline__ float load_mask(const Attention& p, int64_t offset) {
  const void* m = p.mask_data;
  switch (p.mask_dtype) {
    case DT::F32: return static_cast<const float*>(m)[offset];
    case DT::F16: return to_float(static_cast<const half*>(m)[offset]);
    case DT::BF16: return to_float(static_cast<const bf16*>(m)[offset]);
    case DT::F64: return static_cast<float>(static_cast<const double*>(m)[offset]);
    default: return static_cast<const uint8_t*>(m)[offset] != 0 ? 1.f : 0.f;
  }
}

template <typename T>
__global__ void __launch_bounds__(kWarps * 32) attention_kernel(Attention p, int64_t row_blocks) {
  __shared__ float q_s[kRows][kMaxHeadDim];
  __shared__ float k_s[kKeys][kMaxHeadDim + 1];  // +1: lanes read rows of k_s without bank conflicts
  __shared__ float v_s[kKeys][kMaxHeadDim];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t rb = blockIdx.x % row_blocks;
  int64_t lead = blockIdx.x / row_blocks;
  int64_t q_off = 0, k_off = 0, v_off = 0, o_off = 0, m_off = 0;
  for (int d = p.lead_ndim - 1; d >= 0; --d) {
    const int64_t idx = lead % p.lead[d];
    lead /= p.lead[d];
    q_off += idx * p.q_lead[d];
    k_off += idx * p.k_lead[d];
    v_off += idx * p.v_lead[d];
    o_off += idx * p.out_lead[d];
    m_off += idx * p.mask_lead[d];
  }
  const T* q = static_cast<const T*>(p.q) + q_off;
  const T* k = static_cast<const T*>(p.k) + k_off;
  const T* v = static_cast<const T*>(p.v) + v_off;
  T* out = static_cast<T*>(p.out) + o_off;
  const int64_t row0 = rb * kRows;

  for (int64_t idx = threadIdx.x; idx < kRows * p.e; idx += blockDim.x) {
    const int64_t r = idx / p.e, e = idx % p.e;
    q_s[r][e] = row0 + r < p.lq ? to_float(q[(row0 + r) * p.q_row + e]) : 0.f;
  }

  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kSlots];
  for (int r = 0; r < kRowsPerWarp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
    for (int t = 0; t < kSlots; ++t) acc[r][t] = 0.f;
  }
  const int64_t my_row0 = row0 + warp * kRowsPerWarp;
  // Causal: the block's last row sees keys up to its own index.
  const int64_t key_end = p.causal ? min(p.lk, row0 + kRows) : p.lk;

  for (int64_t kt = 0; kt < key_end; kt += kKeys) {
    __syncthreads();  // the previous tile is no longer read (and q_s is written, the first time)
    for (int64_t idx = threadIdx.x; idx < kKeys * p.e; idx += blockDim.x) {
      const int64_t j = idx / p.e, e = idx % p.e;
      k_s[j][e] = kt + j < p.lk ? to_float(k[(kt + j) * p.k_row + e]) : 0.f;
    }
    for (int64_t idx = threadIdx.x; idx < kKeys * p.ev; idx += blockDim.x) {
      const int64_t j = idx / p.ev, d = idx % p.ev;
      v_s[j][d] = kt + j < p.lk ? to_float(v[(kt + j) * p.v_row + d]) : 0.f;
    }
    __syncthreads();
    if (my_row0 >= p.lq) continue;  // this warp has no rows (uniform within the warp)

    float s[kRowsPerWarp];
    for (int r = 0; r < kRowsPerWarp; ++r) s[r] = 0.f;
    for (int64_t e = 0; e < p.e; ++e) {
      const float kv = k_s[lane][e];
      for (int r = 0; r < kRowsPerWarp; ++r) s[r] += q_s[warp * kRowsPerWarp + r][e] * kv;
    }
    const int64_t key = kt + lane;
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t qi = my_row0 + r;
      float score = s[r] * p.scale;
      bool valid = key < p.lk && qi < p.lq && (!p.causal || key <= qi);
      if (valid && p.mask != Attention::Mask::None) {
        const float mv = load_mask(p, m_off + qi * p.mask_row + key * p.mask_col);
        if (p.mask == Attention::Mask::KeepIfTrue) valid = mv != 0.f;
        else score += mv;
      }
      if (!valid) score = -INFINITY;
      float tile_max = score;
      for (int o = 16; o > 0; o >>= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
      const float m_new = fmaxf(m[r], tile_max);
      // Nothing seen yet but -inf: keep everything at zero (exp(-inf - -inf) would be NaN).
      const float shift = m_new == -INFINITY ? 0.f : m_new;
      const float pj = expf(score - shift);  // NaN scores stay NaN and spread to the row
      const float correction = expf(m[r] - shift);
      float sum = pj;
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      l[r] = l[r] * correction + sum;
      for (int t = 0; t < kSlots; ++t) {
        const int64_t d = lane + 32 * t;
        float a = acc[r][t] * correction;
        for (int j = 0; j < kKeys; ++j) {
          const float pk = __shfl_sync(0xffffffffu, pj, j);
          if (d < p.ev) a += pk * v_s[j][d];
        }
        acc[r][t] = a;
      }
      m[r] = m_new;
    }
  }

  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t qi = my_row0 + r;
    if (qi >= p.lq) continue;
    if (p.row_stats != nullptr && lane == 0) {
      float* stats = p.row_stats + ((blockIdx.x / row_blocks) * p.lq + qi) * 2;
      stats[0] = m[r];
      stats[1] = l[r];
    }
    // l == 0: every key masked; softmax of all -inf is NaN (as ATen's math path).
    const float inv = l[r] > 0.f ? 1.f / l[r] : NAN;
    for (int t = 0; t < kSlots; ++t) {
      const int64_t d = lane + 32 * t;
      if (d < p.ev) out[qi * p.out_row + d] = from_float<T>(acc[r][t] * inv);
    }
  }
}

// Offsets of lead index `lead` in q, k and the mask.
__device__ __forceinline__ void lead_offsets(const Attention& p, int64_t lead, int64_t* q_off, int64_t* k_off,
                                             int64_t* m_off) {
  *q_off = *k_off = *m_off = 0;
  for (int d = p.lead_ndim - 1; d >= 0; --d) {
    const int64_t idx = lead % p.lead[d];
    lead /= p.lead[d];
    *q_off += idx * p.q_lead[d];
    *k_off += idx * p.k_lead[d];
    *m_off += idx * p.mask_lead[d];
  }
}

// weights[lead, i, j] = exp(score - m_i) / l_i, the same masked score the fused kernel saw.
template <typename T>
__global__ void attention_weights_kernel(Attention p, T* weights, int64_t n) {
  SY_GRID_STRIDE(idx, n) {
    const int64_t j = idx % p.lk, i = (idx / p.lk) % p.lq, lead = idx / (p.lk * p.lq);
    int64_t q_off, k_off, m_off;
    lead_offsets(p, lead, &q_off, &k_off, &m_off);
    const T* q = static_cast<const T*>(p.q) + q_off + i * p.q_row;
    const T* k = static_cast<const T*>(p.k) + k_off + j * p.k_row;
    float s = 0.f;
    for (int64_t e = 0; e < p.e; ++e) s += to_float(q[e]) * to_float(k[e]);
    float score = s * p.scale;
    bool valid = !p.causal || j <= i;
    if (valid && p.mask != Attention::Mask::None) {
      const float mv = load_mask(p, m_off + i * p.mask_row + j * p.mask_col);
      if (p.mask == Attention::Mask::KeepIfTrue) valid = mv != 0.f;
      else score += mv;
    }
    const float* stats = p.row_stats + (lead * p.lq + i) * 2;
    const float shift = stats[0] == -INFINITY ? 0.f : stats[0];
    const float w = valid ? expf(score - shift) : 0.f;
    weights[idx] = from_float<T>(stats[1] > 0.f ? w / stats[1] : NAN);
  }
}

}  // namespace

cudaError_t attention_weights(const Attention& p, void* weights, cudaStream_t stream) {
  if (p.row_stats == nullptr || p.lead_ndim > kMaxDims) return cudaErrorInvalidValue;
  int64_t leads = 1;
  for (int d = 0; d < p.lead_ndim; ++d) leads *= p.lead[d];
  const int64_t n = leads * p.lq * p.lk;
  if (n <= 0) return cudaSuccess;
  const cudaError_t e = dispatch_float(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    attention_weights_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(p, static_cast<T*>(weights), n);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

cudaError_t attention(const Attention& p, cudaStream_t stream) {
  if (p.e > kMaxHeadDim || p.ev > kMaxHeadDim || p.e < 1 || p.ev < 1 || p.lead_ndim > kMaxDims)
    return cudaErrorInvalidValue;
  int64_t leads = 1;
  for (int d = 0; d < p.lead_ndim; ++d) leads *= p.lead[d];
  if (leads == 0 || p.lq == 0) return cudaSuccess;
  const int64_t row_blocks = (p.lq + kRows - 1) / kRows;
  const int64_t blocks = leads * row_blocks;
  if (blocks > 2147483647) return cudaErrorInvalidValue;
  const cudaError_t e = dispatch_float(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    attention_kernel<T><<<static_cast<unsigned int>(blocks), kWarps * 32, 0, stream>>>(p, row_blocks);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace sycuda::launch
