// attention plugin: the fused scaled-dot-product attention kernel (float32).
//
//   out[n, i, :] = sum_j softmax_j(scale * q[n, i, :] . k[n, j, :] + mask[n, i, j]) v[n, j, :]
//
// One pass, flash-attention style: for a block of query rows, loop over blocks of keys,
// compute the score tile with oneDNN's sgemm, keep a running max and sum per query row and
// rescale the output accumulator as the max grows. Scratch is a few tiles per thread,
// independent of the sequence lengths; the [Lq, Lk] score matrix never exists (unless
// the caller asks for the weights as an output). Work is split over (n, query block).
//
// No SDK types here: callers validate shapes and build a Problem from their tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sy_attention {

// Element (n, r, c) of an operand is data[offset(n) + r * row + c * col], where n runs over
// the problem's flattened leading dims and offset(n) = sum_d index_d(n) * lead[d] (lead[d]
// is 0 along a broadcast dim). Strides are in elements and may be anything, 0 included.
struct Operand {
  const float* data = nullptr;
  std::vector<int64_t> lead;
  int64_t row = 0, col = 1;
};

struct Output {
  float* data = nullptr;
  std::vector<int64_t> lead;
  int64_t row = 0, col = 1;
};

enum class MaskKind : uint8_t {
  None,
  KeepIfTrue,     // bool: true takes part (SDPA's boolean attn_mask)
  DropIfTrue,     // bool: true is left out (ATen's masked softmax, key-padding masks)
  Additive,       // float: added to the scaled score (-inf leaves the key out)
  DropIfNonzero,  // float: a non-zero entry is left out (ATen's MHA converts float masks so)
};

struct Mask {
  MaskKind kind = MaskKind::None;
  const void* data = nullptr;  // uint8_t (0/1) for the bool kinds, float otherwise
  std::vector<int64_t> lead;
  int64_t row = 0, col = 0;
};

struct Problem {
  std::vector<int64_t> lead_shape;  // leading (batch, head, ...) dims; n runs over their product
  int64_t lq = 0, lk = 0, e = 0, ev = 0;
  float scale = 1.0f;
  bool causal = false;  // key j takes part in query i only if j <= i (top-left aligned)
  Operand q, k, v;      // [.., lq, e], [.., lk, e], [.., lk, ev]
  Mask mask;            // [.., lq, lk]
  Output out;           // [.., lq, ev]
  Output weights;       // (optional, data may be NULL) the softmax, [.., lq, lk]
};

// Rows that take part in no key (all masked) give NaN, as ATen's softmax does; lk == 0
// gives zeros (an empty weighted sum), as ATen's matmul does.
void attention(const Problem& p);

// The kernel's own memory for one call: bytes of scratch per thread, and threads used.
size_t scratch_bytes_per_thread(const Problem& p);
int threads_for(const Problem& p);

}  // namespace sy_attention
