// linalg plugin: the batched GEMM engine, float32 on oneDNN's sgemm and float64 on
// OpenBLAS's CBLAS (see linalg.hpp).
#include "linalg.hpp"

#include "common/gather.hpp"
#include "common/sgemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <type_traits>
#include <vector>

namespace sy_linalg {
namespace {

template <typename T>
struct Blas;
// float32: oneDNN's sgemm (common/sgemm.hpp), which has its own M = 1 and N = 1 paths.
template <>
struct Blas<float> {
  static constexpr bool kGemv = false;
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float* c, int ldc) {
    sy_gemm::sgemm(ta == CblasTrans, tb == CblasTrans, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE, int, int, float, const float*, int, const float*, int, float*) {}
};
// float64: OpenBLAS, on the calling thread (the plugin sets it to one thread).
template <>
struct Blas<double> {
  static constexpr bool kGemv = true;
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a, int lda,
                   const double* b, int ldb, double* c, int ldc) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, 0.0, c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE t, int rows, int cols, double alpha, const double* a, int lda, const double* x,
                   int incx, double* y) {
    cblas_dgemv(CblasRowMajor, t, rows, cols, alpha, a, lda, x, incx, 0.0, y, 1);
  }
};

// How BLAS reads a [rows, cols] matrix with element strides rs, cs without a copy:
// row-major with leading dimension rs, or the transpose of a row-major [cols, rows]
// matrix with leading dimension cs. Strides of size-1 dimensions do not matter.
struct Layout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;
};
Layout layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols)))
    return {true, CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows)))
    return {true, CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  return {};
}

template <typename T>
void copy_matrix(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = p[i * rs + j * cs];
}

int blas_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw sy::Error(std::string(what) + " " + std::to_string(v) + " does not fit OpenBLAS's 32-bit integers");
  return static_cast<int>(v);
}

// Rows per GEMM call when an epilogue follows: about an L2's worth of C, so the block is
// still in cache when bias and activation go over it; but at least kMinBlockRows, since
// each call packs B anew (with 48-row blocks a ViT MLP layer ran 30-50% slower).
constexpr int64_t kEpilogueBlockBytes = 2 * 1024 * 1024;
constexpr int64_t kMinBlockRows = 256;

// Drops size-1 batch dimensions, then merges trailing batch dimensions into m while B
// does not move along them and A's and bias's rows continue evenly across them (a
// [b, s, k] activation times a shared [k, n] weight is one [b*s, k] GEMM).
void fold_batch(Gemm& g) {
  size_t kept = 0;
  for (size_t d = 0; d < g.batch.size(); ++d) {
    if (g.batch[d] == 1) continue;
    for (Operand* o : {&g.a, &g.b, &g.bias}) o->bs[kept] = o->bs[d];
    g.batch[kept++] = g.batch[d];
  }
  for (Operand* o : {&g.a, &g.b, &g.bias}) o->bs.resize(kept);
  if (!g.c_bs.empty() && kept == 0) g.c_bs.clear();  // one product: its rows keep c_rs
  g.batch.resize(kept);
  while (!g.batch.empty() && g.c_bs.empty()) {  // C laid out otherwise: its batch stays
    size_t d = g.batch.size() - 1;
    auto continues = [&](const Operand& o) { return g.m == 1 || o.bs[d] == o.rs * g.m; };
    if (g.b.bs[d] != 0 || !continues(g.a) || (g.bias.data && !continues(g.bias))) break;
    if (g.m == 1) {
      g.a.rs = g.a.bs[d];
      g.bias.rs = g.bias.bs[d];
    }
    g.m *= g.batch[d];
    for (Operand* o : {&g.a, &g.b, &g.bias}) o->bs.resize(d);
    g.batch.resize(d);
  }
}

template <typename T>
class Runner {
 public:
  explicit Runner(const Gemm& g) : g_(g) {
    la_ = layout(g_.m, g_.k, g_.a.rs, g_.a.cs);
    lb_ = layout(g_.k, g_.n, g_.b.rs, g_.b.cs);
    epilogue_ = g_.bias.data != nullptr || g_.act != Act::None;
    ldc_ = g_.c_bs.empty() ? g_.n : g_.c_rs;
    block_ = g_.m;
    if (epilogue_) {
      int64_t rows = kEpilogueBlockBytes / std::max<int64_t>(1, g_.n * int64_t(sizeof(T)));
      block_ = std::max<int64_t>(kMinBlockRows, (rows + 15) / 16 * 16);
    }
    // Everything BLAS sees must fit its ints; check once, not per call.
    blas_int(g_.m, "m"), blas_int(g_.n, "n"), blas_int(g_.k, "k"), blas_int(ldc_, "ldc");
    if (la_.ok) blas_int(la_.ld, "lda");
    if (lb_.ok) blas_int(lb_.ld, "ldb");
  }

  // One [m, n] product of the batch: A at pa, B at pb, bias at pbias, C at pc.
  void one(const T* pa, const T* pb, const T* pbias, T* pc) {
    const int64_t m = g_.m, n = g_.n, k = g_.k;
    const T alpha = static_cast<T>(g_.alpha);
    Layout la = la_, lb = lb_;
    if (!la.ok) {  // no leading dimension describes A: copy it
      scratch_a_.resize(static_cast<size_t>(m * k));
      copy_matrix(pa, m, k, g_.a.rs, g_.a.cs, scratch_a_.data());
      pa = scratch_a_.data();
      la = {true, CblasNoTrans, std::max<int64_t>(1, k)};
    }
    if (!lb.ok) {  // a B shared across the batch is copied once
      if (pb != copied_b_) {
        scratch_b_.resize(static_cast<size_t>(k * n));
        copy_matrix(pb, k, n, g_.b.rs, g_.b.cs, scratch_b_.data());
        copied_b_ = pb;
      }
      pb = scratch_b_.data();
      lb = {true, CblasNoTrans, std::max<int64_t>(1, n)};
    }
    const int lda = blas_int(la.ld, "lda"), ldb = blas_int(lb.ld, "ldb");

    if (k == 0) {
      for (int64_t i = 0; i < m; ++i) std::fill(pc + i * ldc_, pc + i * ldc_ + n, T(0));
    } else if (Blas<T>::kGemv && m == 1) {  // a row times B: one GEMV
      std::fill(pc, pc + n, T(0));
      int inca = la.trans == CblasNoTrans ? 1 : lda;
      if (lb.trans == CblasNoTrans)
        Blas<T>::gemv(CblasTrans, int(k), int(n), alpha, pb, ldb, pa, inca, pc);
      else
        Blas<T>::gemv(CblasNoTrans, int(n), int(k), alpha, pb, ldb, pa, inca, pc);
    } else if (Blas<T>::kGemv && n == 1 && ldc_ == n) {  // A times a column: one GEMV
      std::fill(pc, pc + m, T(0));
      int incb = lb.trans == CblasNoTrans ? ldb : 1;
      if (la.trans == CblasNoTrans)
        Blas<T>::gemv(CblasNoTrans, int(m), int(k), alpha, pa, lda, pb, incb, pc);
      else
        Blas<T>::gemv(CblasTrans, int(k), int(m), alpha, pa, lda, pb, incb, pc);
    } else {
      for (int64_t r0 = 0; r0 < m; r0 += block_) {
        int64_t rows = std::min(block_, m - r0);
        // Row r0 of A: r0 rows down (row-major) or r0 columns along (transposed storage).
        const T* a0 = pa + (la.trans == CblasNoTrans ? r0 * la.ld : r0);
        Blas<T>::gemm(la.trans, lb.trans, int(rows), int(n), int(k), alpha, a0, lda, pb, ldb, pc + r0 * ldc_,
                      int(ldc_));
        if (epilogue_)
          epilogue(pc + r0 * ldc_, rows, n, ldc_, pbias ? pbias + r0 * g_.bias.rs : nullptr, g_.bias.rs, g_.bias.cs,
                   static_cast<T>(g_.beta), g_.act);
      }
      return;
    }
    if (epilogue_) epilogue(pc, m, n, ldc_, pbias, g_.bias.rs, g_.bias.cs, static_cast<T>(g_.beta), g_.act);
  }

 private:
  const Gemm& g_;
  Layout la_, lb_;
  bool epilogue_ = false;
  int64_t ldc_ = 0;  // C's row stride
  int64_t block_ = 0;
  std::vector<T> scratch_a_, scratch_b_;  // per call: run() may be entered by many threads
  const T* copied_b_ = nullptr;
};

// One float32 product against a packed constant B (PackedB), with bias and activation
// applied by the primitive where it can (a bias shared by every row, beta 1, an activation
// PackedB::fusable) and by epilogue() over the result otherwise; false where this path
// does not apply (the general one runs).
bool packed_applies(const Gemm& g) {
  if (g.packed == nullptr || !g.batch.empty() || !g.c_bs.empty() || g.alpha != 1.0 || g.k == 0 ||
      reinterpret_cast<const float*>(g.b.data) != g.packed->source())
    return false;
  const Layout la = layout(g.m, g.k, g.a.rs, g.a.cs), lb = layout(g.k, g.n, g.b.rs, g.b.cs);
  return la.ok && la.trans == CblasNoTrans && lb.ok && g.b.rs > 0 && g.b.cs > 0;
}

bool run_packed(const Gemm& g, float* out) {
  if (!packed_applies(g)) return false;
  const Layout la = layout(g.m, g.k, g.a.rs, g.a.cs);
  const float* bias = reinterpret_cast<const float*>(g.bias.data);
  // The activation follows the bias, so it goes into the primitive only with it.
  const bool in_primitive = bias == nullptr || (g.bias.rs == 0 && g.bias.cs == 1 && g.beta == 1.0);
  PackedB::Post post;
  if (in_primitive) post = {bias, PackedB::fusable(g.act) ? g.act : Act::None};
  g.packed->gemm(reinterpret_cast<const float*>(g.a.data), g.m, la.ld, g.k, g.n, g.b.rs, g.b.cs, out, post);
  const float* rest_bias = in_primitive ? nullptr : bias;
  const Act rest_act = post.act == g.act ? Act::None : g.act;
  if (rest_bias != nullptr || rest_act != Act::None)
    epilogue(out, g.m, g.n, g.n, rest_bias, g.bias.rs, g.bias.cs, static_cast<float>(g.beta), rest_act);
  return true;
}

// A [batch..., m, k] times a B (and bias row) shared by the whole batch, where the batch
// did not fold into rows (e.g. a linear over a transposed [T, B, E] input: T GEMMs of B
// rows): A's rows are gathered into one buffer, in the output's row order, for one GEMM
// over all of them (and B's packed form). `rows` owns the buffer.
bool gatherable(const Gemm& g) {
  if (g.batch.empty() || g.m == 0 || g.k == 0 || !g.c_bs.empty()) return false;
  if (g.bias.data != nullptr && g.bias.rs != 0) return false;  // a bias per row repeats per batch
  for (size_t d = 0; d < g.batch.size(); ++d)
    if (g.b.bs[d] != 0 || (g.bias.data != nullptr && g.bias.bs[d] != 0)) return false;
  return true;
}

// What gather_rows makes of g's shapes, without the rows.
void fold_gathered(Gemm& g) {
  int64_t total = 1;
  for (int64_t s : g.batch) total *= s;
  g.a.rs = g.k;
  g.a.cs = 1;
  g.m *= total;
  g.batch.clear();
  for (Operand* o : {&g.a, &g.b, &g.bias}) o->bs.clear();
}

template <typename T>
bool gather_rows(Gemm& g, std::vector<T>& rows) {
  if (!gatherable(g)) return false;
  View a;
  a.data = g.a.data;
  a.shape = g.batch;
  a.shape.insert(a.shape.end(), {g.m, g.k});
  a.strides = g.a.bs;
  a.strides.insert(a.strides.end(), {g.a.rs, g.a.cs});
  int64_t total = 1;
  for (int64_t s : g.batch) total *= s;
  rows.resize(static_cast<size_t>(total * g.m * g.k));
  copy_contiguous(a, sizeof(T), reinterpret_cast<char*>(rows.data()));
  g.a.data = reinterpret_cast<const char*>(rows.data());
  fold_gathered(g);
  return true;
}

// A batch of at least as many products as threads (attention's per-head products): the
// batch is split over the OpenMP team, each thread running whole products on one thread
// (oneDNN's sgemm does inside a parallel region), instead of every small product waking
// the team for a few microseconds of work.
template <typename T>
void run_batch_split(const Gemm& g, const Runner<T>& prototype, T* out, int64_t total) {
  const T* a = reinterpret_cast<const T*>(g.a.data);
  const T* b = reinterpret_cast<const T*>(g.b.data);
  const T* bias = reinterpret_cast<const T*>(g.bias.data);
  const size_t nb = g.batch.size();
  const int64_t out_stride = g.c_bs.empty() ? g.m * g.n : g.c_bs[0];
  sy_omp::Threads team;  // the host's budget: the split itself is the parallel work
  std::exception_ptr failure;
#pragma omp parallel
  {
    Runner<T> runner(prototype);  // its scratch is per thread
#pragma omp for schedule(static)
    for (int64_t i = 0; i < total; ++i) {
      int64_t oa = 0, ob = 0, obias = 0, rest = i;
      for (size_t d = nb; d-- > 0;) {  // batch index of product i, last dimension fastest
        const int64_t at = rest % g.batch[d];
        rest /= g.batch[d];
        oa += at * g.a.bs[d], ob += at * g.b.bs[d], obias += at * g.bias.bs[d];
      }
      try {
        runner.one(a + oa, b + ob, bias ? bias + obias : nullptr, out + i * out_stride);
      } catch (...) {  // exceptions must not leave the parallel region
#pragma omp critical(sy_linalg_batch_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// What run_typed does to g before it picks a path.
void normalize(Gemm& g) {
  if (g.beta == 0) g.bias.data = nullptr;  // torch ignores `self` (even NaN) when beta is 0
  if (g.bias.data == nullptr) {
    g.bias.bs.assign(g.batch.size(), 0);
    g.bias.rs = g.bias.cs = 0;
  }
  fold_batch(g);
}

template <typename T>
void run_typed(Gemm g, T* out) {
  if (g.m == 0 || g.n == 0) return;
  for (int64_t s : g.batch)
    if (s == 0) return;
  normalize(g);
  std::vector<T> gathered;
  gather_rows(g, gathered);
  if constexpr (std::is_same_v<T, float>) {
    if (run_packed(g, out)) return;
  }
  Runner<T> runner(g);

  const T* a = reinterpret_cast<const T*>(g.a.data);
  const T* b = reinterpret_cast<const T*>(g.b.data);
  const T* bias = reinterpret_cast<const T*>(g.bias.data);
  const size_t nb = g.batch.size();
  if (nb == 0) {  // one product (also what folding makes of most linear layers)
    runner.one(a, b, bias, out);
    return;
  }
  int64_t total = 1;
  for (int64_t s : g.batch) total *= s;
  if (!g.c_bs.empty() && nb != 1) throw sy::Error("a laid-out C takes one batch dimension", SY_ERROR_INTERNAL);
  const int64_t out_stride = g.c_bs.empty() ? g.m * g.n : g.c_bs[0];
  if constexpr (std::is_same_v<T, float>) {
    if (total >= sy::intra_op_threads() && sy::intra_op_threads() > 1) return run_batch_split(g, runner, out, total);
  }
  Shape index(nb, 0);
  int64_t oa = 0, ob = 0, obias = 0;
  for (int64_t i = 0; i < total; ++i) {
    runner.one(a + oa, b + ob, bias ? bias + obias : nullptr, out + i * out_stride);
    for (size_t d = nb; d-- > 0;) {  // step the last batch dimension, carry leftwards
      oa += g.a.bs[d], ob += g.b.bs[d], obias += g.bias.bs[d];
      if (++index[d] < g.batch[d]) break;
      oa -= g.a.bs[d] * g.batch[d], ob -= g.b.bs[d] * g.batch[d];
      obias -= g.bias.bs[d] * g.batch[d];
      index[d] = 0;
    }
  }
}

}  // namespace

bool blas_fits(int64_t rows, int64_t cols, int64_t rs, int64_t cs) { return layout(rows, cols, rs, cs).ok; }

bool takes_packed_path(Gemm g) {
  if (g.m == 0 || g.n == 0) return false;
  normalize(g);
  if (gatherable(g)) fold_gathered(g);
  return packed_applies(g);
}

void run_gemm(Dtype d, const Gemm& g, void* out) {
  if (d == Dtype::F32)
    run_typed<float>(g, static_cast<float*>(out));
  else
    run_typed<double>(g, static_cast<double*>(out));
}

void copy_contiguous(const View& v, size_t es, char* dst) {
  if (es == 4)
    sy_common::gather_compact(reinterpret_cast<const float*>(v.data), v.shape, v.strides,
                              reinterpret_cast<float*>(dst));
  else
    sy_common::gather_compact(reinterpret_cast<const double*>(v.data), v.shape, v.strides,
                              reinterpret_cast<double*>(dst));
}

}  // namespace sy_linalg
