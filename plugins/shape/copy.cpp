// shape plugin: the copy engine behind contiguous, reshape-that-copies, cat and stack.
//
// A copy first drops size-1 dims and merges dims that are contiguous in both source and
// destination, so most copies become a few long runs. Then:
//   * runs contiguous on both sides of at least kMinRunBytes go by memcpy, walking the
//     source front to back, split over threads when large;
//   * shorter runs and transposing layouts (innermost source stride not 1) go to
//     oneDNN's reorder primitive, which tiles and vectorises them; elements move as
//     opaque integers of their size, so every dtype copies bit-exactly;
//   * what oneDNN can't express (broadcast stride-0 dims, rank > 11) walks elementwise.
// Thresholds were set with tools/bench/bench_shape on the zoo's shapes.
#include "shape_ops.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <switchyard/parallel.hpp>

#include "common/onednn_engine.hpp"
#include "common/openmp_threads.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace sy_shape {
namespace {

constexpr size_t kMinRunBytes = 1024;  // shorter runs: oneDNN's blocked reorder beats a memcpy per run
// Smaller copies run on the caller alone: a pool worker woken for them starts too late to
// help (bench_shape: [197,1,768] of [197,1,2304], 600 KB, ran 1.5x slower split in two).
constexpr size_t kParallelBytes = 1 << 20;

struct Dims {
  Shape size, src, dst;  // outermost first
};

// Size-1 dims dropped; neighbours that are contiguous on both sides merged.
Dims simplify(const Shape& shape, const Shape& src_strides, const Shape& dst_strides) {
  Dims d;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!d.size.empty() && d.src.back() == shape[i] * src_strides[i] && d.dst.back() == shape[i] * dst_strides[i]) {
      d.size.back() *= shape[i];
      d.src.back() = src_strides[i];
      d.dst.back() = dst_strides[i];
      continue;
    }
    d.size.push_back(shape[i]);
    d.src.push_back(src_strides[i]);
    d.dst.push_back(dst_strides[i]);
  }
  return d;
}

// Calls f(src_offset, dst_offset) (in elements) for the indices [begin, end) of the first
// `n` dims, in row-major order.
template <typename F>
void for_each_outer(const Dims& d, size_t n, int64_t begin, int64_t end, F&& f) {
  Shape index(n, 0);
  int64_t s = 0, t = 0;
  for (size_t k = n, rest = static_cast<size_t>(begin); k-- > 0;) {  // unravel `begin`
    index[k] = static_cast<int64_t>(rest % d.size[k]);
    rest /= d.size[k];
    s += index[k] * d.src[k], t += index[k] * d.dst[k];
  }
  for (int64_t i = begin; i < end; ++i) {
    f(s, t);
    for (size_t k = n; k-- > 0;) {  // step the innermost outer dim, carrying leftwards
      s += d.src[k], t += d.dst[k];
      if (++index[k] < d.size[k]) break;
      s -= d.src[k] * d.size[k], t -= d.dst[k] * d.size[k];
      index[k] = 0;
    }
  }
}

// Orders the outer dims (all but the innermost) by falling source stride: reading the
// source front to back lets the prefetcher help, and writes stay in run-sized pieces.
void walk_source_order(Dims& d) {
  const size_t n = d.size.size() - 1;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return d.src[a] > d.src[b]; });
  Dims sorted = d;
  for (size_t i = 0; i < n; ++i)
    sorted.size[i] = d.size[order[i]], sorted.src[i] = d.src[order[i]], sorted.dst[i] = d.dst[order[i]];
  d = std::move(sorted);
}

int64_t outer_count(const Dims& d, size_t n) { return product(Shape(d.size.begin(), d.size.begin() + n)); }

// Large copies are memory-bound: split the outer indices into one contiguous range per
// thread of the SDK's pool (sy::intra_op_threads(), the host's [runtime] intra_op_threads).
template <typename F>
void parallel_outer(const Dims& d, size_t n, size_t bytes, F&& f) {
  const int64_t count = outer_count(d, n);
  const int64_t threads = bytes >= kParallelBytes ? std::min<int64_t>(sy::intra_op_threads(), count) : 1;
  if (threads <= 1) return for_each_outer(d, n, 0, count, f);
  sy::parallel_for(threads, static_cast<int>(threads),
                   [&](int64_t k, int) { for_each_outer(d, n, count * k / threads, count * (k + 1) / threads, f); });
}

template <typename T>
void copy_elements(const Dims& d, const char* src, char* dst) {
  const size_t last = d.size.size() - 1;
  const int64_t n = d.size[last], ss = d.src[last], ds = d.dst[last];
  const size_t bytes = static_cast<size_t>(product(d.size)) * sizeof(T);
  parallel_outer(d, last, bytes, [&](int64_t s, int64_t t) {
    const T* from = reinterpret_cast<const T*>(src) + s;
    T* to = reinterpret_cast<T*>(dst) + t;
    for (int64_t i = 0; i < n; ++i) to[i * ds] = from[i * ss];
  });
}

void copy_elementwise(const Dims& d, const char* src, char* dst, size_t elem_size) {
  switch (elem_size) {
    case 1: return copy_elements<uint8_t>(d, src, dst);
    case 2: return copy_elements<uint16_t>(d, src, dst);
    case 4: return copy_elements<uint32_t>(d, src, dst);
    case 8: return copy_elements<uint64_t>(d, src, dst);
    default: throw sy::Error("copy: unsupported element size " + std::to_string(elem_size), SY_ERROR_INTERNAL);
  }
}

// A model copies the same few geometries on every run: keep their primitives (oneDNN's
// own cache still costs a descriptor build per call). Primitives run concurrently fine.
std::shared_ptr<const dnnl::reorder> cached_reorder(const std::vector<int64_t>& key, const dnnl::memory::desc& src_md,
                                                    const dnnl::memory::desc& dst_md) {
  static sy_onednn::ShapeCache<dnnl::reorder, 256> cache;
  return cache.get(key, [&] {
    dnnl::engine& engine = sy_onednn::cpu_engine();
    return std::make_shared<const dnnl::reorder>(dnnl::reorder::primitive_desc(engine, src_md, engine, dst_md));
  });
}

// oneDNN has no 16- or 64-bit integer type: such elements move as 2 x u8 or 2 x s32
// (one more innermost dim of 2).
bool reorder(const Dims& d, const char* src, char* dst, size_t elem_size) {
  dnnl::memory::data_type type = dnnl::memory::data_type::u8;
  int64_t split = 1;
  switch (elem_size) {
    case 1: break;
    case 2: split = 2; break;
    case 4: type = dnnl::memory::data_type::s32; break;
    case 8: type = dnnl::memory::data_type::s32, split = 2; break;
    default: return false;
  }
  if (d.size.size() + (split > 1) > DNNL_MAX_NDIMS) return false;
  for (size_t i = 0; i < d.size.size(); ++i)
    if (d.src[i] == 0 || d.dst[i] == 0) return false;  // broadcast: no oneDNN layout
  dnnl::memory::dims dims(d.size.begin(), d.size.end()), src_strides, dst_strides;
  for (size_t i = 0; i < d.size.size(); ++i)
    src_strides.push_back(d.src[i] * split), dst_strides.push_back(d.dst[i] * split);
  if (split > 1) dims.push_back(split), src_strides.push_back(1), dst_strides.push_back(1);
  try {
    const dnnl::engine& engine = sy_onednn::cpu_engine();
    dnnl::memory::desc src_md(dims, type, src_strides), dst_md(dims, type, dst_strides);
    std::vector<int64_t> key = dims;
    key.push_back(static_cast<int64_t>(type));
    key.insert(key.end(), src_strides.begin(), src_strides.end());
    key.insert(key.end(), dst_strides.begin(), dst_strides.end());
    // Small copies on the caller alone, as for memcpy runs; larger on the host's budget.
    sy_omp::Threads threads(
        product(d.size) * static_cast<int64_t>(elem_size) < static_cast<int64_t>(kParallelBytes) ? 0 : -1);
    std::shared_ptr<const dnnl::reorder> prim = cached_reorder(key, src_md, dst_md);
    dnnl::memory from(src_md, engine, const_cast<char*>(src)), to(dst_md, engine, dst);
    dnnl::stream& stream = sy_onednn::thread_stream();
    sy_onednn::execute(*prim, stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    stream.wait();
    return true;
  } catch (const dnnl::error& e) {
    static std::once_flag logged;
    std::call_once(logged,
                   [&] { sy::log(SY_LOG_DEBUG, std::string("shape: oneDNN reorder declined a copy: ") + e.what()); });
    return false;
  }
}

}  // namespace

void copy_strided(const void* src_ptr, const Shape& src_strides, void* dst_ptr, const Shape& dst_strides,
                  const Shape& shape, size_t elem_size) {
  if (product(shape) == 0) return;
  const char* src = static_cast<const char*>(src_ptr);
  char* dst = static_cast<char*>(dst_ptr);
  Dims d = simplify(shape, src_strides, dst_strides);
  if (d.size.empty()) {  // one element
    std::memcpy(dst, src, elem_size);
    return;
  }
  const size_t last = d.size.size() - 1;
  walk_source_order(d);
  const size_t run = static_cast<size_t>(d.size[last]) * elem_size;
  const bool runs = d.src[last] == 1 && d.dst[last] == 1;
  if (runs && (run >= kMinRunBytes || last == 0)) {
    parallel_outer(d, last, run * static_cast<size_t>(outer_count(d, last)), [&](int64_t s, int64_t t) {
      std::memcpy(dst + t * static_cast<int64_t>(elem_size), src + s * static_cast<int64_t>(elem_size), run);
    });
    return;
  }
  if (reorder(d, src, dst, elem_size)) return;
  copy_elementwise(d, src, dst, elem_size);
}

}  // namespace sy_shape
