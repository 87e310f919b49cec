// attention plugin: the fused attention kernel (see flash_attention.hpp).
#include "flash_attention.hpp"
#include "common/vector_clones.hpp"

#include "common/openmp_threads.hpp"

#include <oneapi/dnnl/dnnl.h>
#include <switchyard/parallel.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>

#include <omp.h>

#if SY_ATTENTION_LIBMVEC
// glibc's libmvec holds vector versions of expf; declared simd, the loop in exp_shifted
// calls them 8 (AVX2) or 16 (AVX-512) at a time, in the clone for the CPU it runs on.
#pragma omp declare simd notinbranch
extern "C" float expf(float) noexcept;
#endif

namespace sy_attention {
namespace {

// Below this, expf underflows to 0 (or a subnormal). libmvec's vector expf leaves its fast
// path for a whole vector when one lane is that small, which masked (-inf) scores make
// common (6x slower on a causal mask). So arguments are clamped to it first, in a loop of
// their own (in one loop GCC may pass the unclamped value to lanes whose result it then
// replaces), and results at or below exp(kExpUnderflow) are flushed to 0 afterwards.
constexpr float kExpUnderflow = -87.0f;

// row[j] = exp(row[j] - m) for j < n; returns their sum.
SY_VECTOR_CLONES float exp_shifted(float* row, int64_t n, float m) {
  int clamped = 0;
#if SY_ATTENTION_LIBMVEC
#pragma omp simd reduction(| : clamped)
#endif
  for (int64_t j = 0; j < n; ++j) {
    const float x = row[j] - m;  // a NaN stays NaN: comparisons with it are false
    clamped |= x < kExpUnderflow;
    row[j] = x < kExpUnderflow ? kExpUnderflow : x;
  }
  float sum = 0.0f;
#if SY_ATTENTION_LIBMVEC
#pragma omp simd reduction(+ : sum)
#endif
  for (int64_t j = 0; j < n; ++j) {
    row[j] = expf(row[j]);
    sum += row[j];
  }
  if (clamped) {
    const float tiny = expf(kExpUnderflow);  // under 1e-37: what it adds to `sum` is lost in rounding
#if SY_ATTENTION_LIBMVEC
#pragma omp simd
#endif
    for (int64_t j = 0; j < n; ++j) row[j] = row[j] <= tiny ? 0.0f : row[j];
  }
  return sum;
}

// Row-major C = A * op(B) + beta * C for one tile, on the calling thread alone (the tiles
// already run in parallel): oneDNN's sgemm, whose kernels are picked for this CPU at run
// time, where Debian's OpenBLAS falls back to older ones on CPUs newer than it knows.
void tile_gemm(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
               float beta, float* c, int64_t ldc) {
  sy_omp::Threads one(0);
  const dnnl_status_t s = dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (s != dnnl_success)
    throw sy::Error("attention: oneDNN sgemm of a [" + std::to_string(m) + ", " + std::to_string(k) +
                        "] tile failed (status " + std::to_string(static_cast<int>(s)) + ")",
                    s == dnnl_out_of_memory ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL);
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A tile's product has at most this many multiply-adds: small enough for one thread and
// for the tiles of one block to stay in cache (tile_gemm runs each on its caller; 64 query
// rows by 256 keys of 64 dims is 200 KB), large enough that the per-call cost of the sgemm
// and the rescaling between key blocks stay small: ViT-B/16's 197 keys are one block.
// A quarter of this (64 keys a block) took vit_b_16 at batch 8 8.3 ms per layer against 5.3.
constexpr int64_t kSingleThreadGemm = 16 * 65536;

struct Tiling {
  int64_t bq = 1, bk = 1;    // query rows and keys per tile
  int64_t ldq = 1, ldv = 1;  // row pitch of the packed q tile and of the accumulator
  bool pack_k = false, pack_v = false;
  size_t floats = 0;  // scratch per thread
};

Tiling tiling(const Problem& p) {
  Tiling t;
  const int64_t width = std::max<int64_t>({p.e, p.ev, 1});
  t.bq = width <= 128 ? 64 : 32;
  t.bk = std::clamp<int64_t>(kSingleThreadGemm / (t.bq * width) / 8 * 8, 8, 256);
  t.bq = std::min(t.bq, std::max<int64_t>(p.lq, 1));
  t.bk = std::min(t.bk, std::max<int64_t>(p.lk, 1));
  t.ldq = std::max<int64_t>(p.e, 1);
  t.ldv = std::max<int64_t>(p.ev, 1);
  // BLAS reads a matrix with unit column stride and a row pitch of at least its width;
  // any other layout (transposed, broadcast rows, ...) is copied tile by tile.
  t.pack_k = !(p.k.col == 1 && p.k.row >= t.ldq);
  t.pack_v = !(p.v.col == 1 && p.v.row >= t.ldv);
  t.floats = static_cast<size_t>(t.bq * t.ldq + t.bq * t.bk + t.bq * t.ldv + 2 * t.bq + (t.pack_k ? t.bk * t.ldq : 0) +
                                 (t.pack_v ? t.bk * t.ldv : 0));
  return t;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

// sum_d index_d(n) * strides[d], n decomposed over `shape` (last dim fastest).
int64_t lead_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t n) {
  int64_t off = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    off += (n % shape[d]) * strides[d];
    n /= shape[d];
  }
  return off;
}

// Applies the mask to one row of rk scores; m points at the mask entry of its first key.
void mask_row(MaskKind kind, const void* m, int64_t col, int64_t rk, float* s) {
  const auto* b = static_cast<const uint8_t*>(m);
  const auto* f = static_cast<const float*>(m);
  switch (kind) {
    case MaskKind::None: return;
    case MaskKind::KeepIfTrue:
      for (int64_t j = 0; j < rk; ++j)
        if (!b[j * col]) s[j] = kNegInf;
      return;
    case MaskKind::DropIfTrue:
      for (int64_t j = 0; j < rk; ++j)
        if (b[j * col]) s[j] = kNegInf;
      return;
    case MaskKind::Additive:
      for (int64_t j = 0; j < rk; ++j) s[j] += f[j * col];
      return;
    case MaskKind::DropIfNonzero:
      for (int64_t j = 0; j < rk; ++j)
        if (f[j * col] != 0.0f) s[j] = kNegInf;
      return;
  }
}

// One query block's view of the problem, with the thread's scratch carved up.
struct Block {
  const Problem& p;
  const Tiling& t;
  int64_t i0 = 0, rq = 0;
  const float* k = nullptr;
  const float* v = nullptr;
  const char* mask = nullptr;  // the mask entry (n, i0, 0), as bytes
  size_t mask_elem = 1;
  float *qs, *s, *acc, *m, *l, *kp, *vp;

  Block(const Problem& prob, const Tiling& tile, int64_t n, int64_t qb, float* scratch) : p(prob), t(tile) {
    i0 = qb * t.bq;
    rq = std::min(t.bq, p.lq - i0);
    qs = scratch;
    s = qs + t.bq * t.ldq;
    acc = s + t.bq * t.bk;
    m = acc + t.bq * t.ldv;
    l = m + t.bq;
    kp = l + t.bq;
    vp = kp + (t.pack_k ? t.bk * t.ldq : 0);
    const std::vector<int64_t>& shape = p.lead_shape;
    k = p.k.data + lead_offset(shape, p.k.lead, n);
    v = p.v.data + lead_offset(shape, p.v.lead, n);
    if (p.mask.kind != MaskKind::None) {
      bool is_bool = p.mask.kind == MaskKind::KeepIfTrue || p.mask.kind == MaskKind::DropIfTrue;
      mask_elem = is_bool ? 1 : sizeof(float);
      int64_t off = lead_offset(shape, p.mask.lead, n) + i0 * p.mask.row;
      mask = static_cast<const char*>(p.mask.data) + off * static_cast<int64_t>(mask_elem);
    }
    // The scaled query rows, packed: the left operand of every score tile.
    const float* q = p.q.data + lead_offset(shape, p.q.lead, n) + i0 * p.q.row;
    for (int64_t i = 0; i < rq; ++i)
      for (int64_t c = 0; c < p.e; ++c) qs[i * t.ldq + c] = q[i * p.q.row + c * p.q.col] * p.scale;
  }

  // s[i][j] = masked score of query i0+i and key j0+j, for j < rk.
  void scores(int64_t j0, int64_t rk) {
    const float* kt = k + j0 * p.k.row;
    int64_t ldk = p.k.row;
    if (t.pack_k) {
      for (int64_t r = 0; r < rk; ++r)
        for (int64_t c = 0; c < p.e; ++c) kp[r * t.ldq + c] = kt[r * p.k.row + c * p.k.col];
      kt = kp;
      ldk = t.ldq;
    }
    if (p.e > 0) {
      tile_gemm(true, rq, rk, p.e, qs, t.ldq, kt, ldk, 0.0f, s, t.bk);
    } else {
      for (int64_t i = 0; i < rq; ++i) std::fill(s + i * t.bk, s + i * t.bk + rk, 0.0f);
    }
    for (int64_t i = 0; i < rq; ++i) {
      float* row = s + i * t.bk;
      if (p.causal)
        for (int64_t j = std::max<int64_t>(0, i0 + i - j0 + 1); j < rk; ++j) row[j] = kNegInf;
      if (mask != nullptr)
        mask_row(p.mask.kind, mask + (i * p.mask.row + j0 * p.mask.col) * static_cast<int64_t>(mask_elem), p.mask.col,
                 rk, row);
    }
  }

  void run() {
    std::fill(m, m + rq, kNegInf);
    std::fill(l, l + rq, 0.0f);
    std::fill(acc, acc + rq * t.ldv, 0.0f);
    // Under a causal mask no row of this block sees a key past its last row.
    const int64_t j_end = p.causal ? std::min(p.lk, i0 + rq) : p.lk;
    for (int64_t j0 = 0; j0 < j_end; j0 += t.bk) {
      const int64_t rk = std::min(t.bk, j_end - j0);
      scores(j0, rk);
      for (int64_t i = 0; i < rq; ++i) {
        float* row = s + i * t.bk;
        float mx = kNegInf;
        for (int64_t j = 0; j < rk; ++j) mx = row[j] > mx ? row[j] : mx;
        const float m_new = std::max(m[i], mx);
        if (m_new == kNegInf) {  // no key of this row takes part yet
          std::fill(row, row + rk, 0.0f);
          continue;
        }
        const float sum = exp_shifted(row, rk, m_new);
        const float alpha = std::exp(m[i] - m_new);  // rescales what earlier keys gave
        l[i] = l[i] * alpha + sum;
        if (alpha != 1.0f)
          for (int64_t c = 0; c < p.ev; ++c) acc[i * t.ldv + c] *= alpha;
        m[i] = m_new;
      }
      if (p.ev == 0) continue;
      const float* vt = v + j0 * p.v.row;
      int64_t ldv = p.v.row;
      if (t.pack_v) {
        for (int64_t r = 0; r < rk; ++r)
          for (int64_t c = 0; c < p.ev; ++c) vp[r * t.ldv + c] = vt[r * p.v.row + c * p.v.col];
        vt = vp;
        ldv = t.ldv;
      }
      tile_gemm(false, rq, p.ev, rk, s, t.bk, vt, ldv, 1.0f, acc, t.ldv);
    }
  }

  void write(int64_t n) {
    const Output& o = p.out;
    float* out = o.data + lead_offset(p.lead_shape, o.lead, n) + i0 * o.row;
    for (int64_t i = 0; i < rq; ++i) {
      // l == 0: every key masked, softmax of all -inf is NaN; l NaN stays NaN.
      const float inv = p.lk == 0 ? 0.0f : (l[i] > 0.0f ? 1.0f / l[i] : kNaN);
      for (int64_t c = 0; c < p.ev; ++c) out[i * o.row + c * o.col] = p.lk == 0 ? 0.0f : acc[i * t.ldv + c] * inv;
    }
  }

  // The softmax itself, when asked for: the scores once more, now that every row's
  // max and sum are final.
  void write_weights(int64_t n) {
    const Output& w = p.weights;
    float* out = w.data + lead_offset(p.lead_shape, w.lead, n) + i0 * w.row;
    for (int64_t j0 = 0; j0 < p.lk; j0 += t.bk) {
      const int64_t rk = std::min(t.bk, p.lk - j0);
      if (p.causal && j0 >= i0 + rq) {
        for (int64_t i = 0; i < rq; ++i) std::fill(s + i * t.bk, s + i * t.bk + rk, kNegInf);
      } else {
        scores(j0, rk);
      }
      for (int64_t i = 0; i < rq; ++i) {
        float* row = s + i * t.bk;
        exp_shifted(row, rk, m[i]);
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : kNaN;
        for (int64_t j = 0; j < rk; ++j) out[i * w.row + (j0 + j) * w.col] = row[j] * inv;
      }
    }
  }
};

}  // namespace

size_t scratch_bytes_per_thread(const Problem& p) { return tiling(p).floats * sizeof(float); }

int threads_for(const Problem& p) {
  const Tiling t = tiling(p);
  const int64_t tasks = product(p.lead_shape) * ((p.lq + t.bq - 1) / t.bq);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(sy::intra_op_threads(), tasks)));
}

void attention(const Problem& p) {
  const int64_t batch = product(p.lead_shape);
  if (batch == 0 || p.lq == 0) return;
  const Tiling t = tiling(p);
  const int64_t q_blocks = (p.lq + t.bq - 1) / t.bq;
  const int threads = threads_for(p);
  std::unique_ptr<float[]> scratch(new float[t.floats * static_cast<size_t>(threads)]);
  // On the OpenMP team that oneDNN's sgemm and the layer's other primitives run on, not
  // the host's oneTBB pool: right after those primitives the team's threads still spin on
  // both cores, and a oneTBB worker then waited for one (vit_b_16_fast at batch 1:
  // 102-114 -> 94-103 ms).
  std::exception_ptr failure;
  sy_omp::Threads team;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t task = 0; task < batch * q_blocks; ++task) {
    try {  // exceptions must not leave the parallel region
      const int64_t n = task / q_blocks;
      Block b(p, t, n, task % q_blocks, scratch.get() + t.floats * static_cast<size_t>(omp_get_thread_num()));
      b.run();
      b.write(n);
      if (p.weights.data != nullptr) b.write_weights(n);
    } catch (...) {
#pragma omp critical(sy_attention_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sy_attention
