// linalg plugin: GEMMs against a constant B packed once, float32 or bfloat16 products
// (see linalg.hpp, PackedB).
#include "linalg.hpp"

#include "common/bf16_convert.hpp"
#include "common/onednn_engine.hpp"
#include "common/openmp_threads.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace sy_linalg {

using dnnl::memory;

namespace {
struct Entry {
  dnnl::matmul prim;
  memory weights;  // B in the layout the primitive asked for
  memory::desc src, dst, scratch, bias;
};

dnnl::algorithm eltwise_of(Act act) {
  return act == Act::GeluTanh ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf;
}
}  // namespace

struct PackedB::State {
  std::mutex mutex;
  // per (m, lda, k, n, brs, bcs, bias or not, act, A in bf16, C in bf16)
  using Key = std::array<int64_t, 10>;
  std::map<Key, std::shared_ptr<const Entry>> cache;
  std::vector<sy_onednn::ConstantMemory> packed;  // B per layout asked for
  bool bf16 = false;
  std::shared_ptr<const Entry> entry(const float* b, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs,
                                     int64_t bcs, const Post& post, bool c_bf16);
};

PackedB::PackedB(const float* b, bool bf16) : source_(b), bf16_(bf16), state_(std::make_unique<State>()) {
  state_->bf16 = bf16;
}
PackedB::~PackedB() = default;

std::shared_ptr<const Entry> PackedB::State::entry(const float* b, int64_t m, int64_t lda, int64_t k, int64_t n,
                                                   int64_t brs, int64_t bcs, const Post& post, bool c_bf16) {
  const Key key{m,    lda,   k, n, brs, bcs, post.bias != nullptr, static_cast<int64_t>(post.act),
                bf16, c_bf16};  // no allocation per call
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 32) cache.clear();  // bounded: row counts may keep changing
  const auto f32 = memory::data_type::f32;
  dnnl::engine& eng = sy_onednn::cpu_engine();
  auto e = std::make_shared<Entry>();
  const auto in_type = bf16 ? memory::data_type::bf16 : f32;
  e->src = bf16 ? memory::desc({m, k}, in_type, {k, 1}) : memory::desc({m, k}, f32, {lda, 1});
  e->dst = memory::desc({m, n}, c_bf16 ? memory::data_type::bf16 : f32, {n, 1});
  const memory::desc user({k, n}, f32, {brs, bcs});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-run scratch: runs may overlap
  if (post.act != Act::None) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, eltwise_of(post.act), 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  const memory::desc weights_any({k, n}, in_type, memory::format_tag::any);
  if (post.bias != nullptr) e->bias = memory::desc({1, n}, f32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(post.bias != nullptr ? dnnl::matmul::desc(e->src, weights_any, e->bias, e->dst)
                                                       : dnnl::matmul::desc(e->src, weights_any, e->dst),
                                  attr, eng);
  e->prim = dnnl::matmul(pd);
  e->scratch = pd.scratchpad_desc();
  for (const sy_onednn::ConstantMemory& w : packed)
    if (w.md == pd.weights_desc()) e->weights = w.mem;
  if (!e->weights) {  // pack B once for this layout
    memory from(user, eng, const_cast<float*>(b));
    sy_onednn::ConstantMemory to = sy_onednn::constant_memory(pd.weights_desc());
    dnnl::stream s(eng);
    dnnl::reorder(from, to.mem).execute(s, from, to.mem);
    s.wait();
    e->weights = to.mem;
    packed.push_back(std::move(to));
  }
  cache.emplace(key, e);
  return e;
}

void PackedB::gemm(const float* a, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs, float* c,
                   const Post& post) {
  run(a, false, m, lda, k, n, brs, bcs, c, false, post);
}

void PackedB::gemm_to_bf16(const float* a, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs,
                           uint16_t* c, const Post& post) {
  run(a, false, m, lda, k, n, brs, bcs, c, true, post);
}

void PackedB::gemm_from_bf16(const uint16_t* a, int64_t m, int64_t k, int64_t n, int64_t brs, int64_t bcs, float* c,
                             const Post& post) {
  run(a, true, m, k, k, n, brs, bcs, c, false, post);
}

void PackedB::run(const void* a, bool a_bf16, int64_t m, int64_t lda, int64_t k, int64_t n, int64_t brs, int64_t bcs,
                  void* c, bool c_bf16, const Post& post) {
  if (!fusable(post.act))
    throw sy::Error("packed GEMM: activation " + std::to_string(static_cast<int>(post.act)) + " is not fusable",
                    SY_ERROR_INTERNAL);
  if ((a_bf16 || c_bf16) && !state_->bf16)
    throw sy::Error("packed GEMM: a bfloat16 A or C needs B packed in bfloat16", SY_ERROR_INTERNAL);
  sy_omp::Threads threads(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  try {
    std::shared_ptr<const Entry> e = state_->entry(source_, m, lda, k, n, brs, bcs, post, c_bf16);
    using sy_onednn::thread_memory;
    dnnl::stream& s = sy_onednn::thread_stream();
    const memory* src = nullptr;
    if (a_bf16) {
      src = &thread_memory(sy_onednn::kSrcSlot, e->src, const_cast<void*>(a));
    } else if (state_->bf16) {  // A into bfloat16 first
      src = &sy_onednn::thread_converted(e->src);
      sy_bf16::to_bf16(static_cast<const float*>(a), lda, static_cast<uint16_t*>(src->get_data_handle()), k, m, k);
    } else {
      src = &thread_memory(sy_onednn::kSrcSlot, e->src, const_cast<void*>(a));
    }
    const memory& dst = thread_memory(sy_onednn::kDstSlot, e->dst, c);
    const memory& scratch = sy_onednn::thread_scratch(e->scratch);
    const memory none;  // an absent argument
    const memory& bias =
        post.bias != nullptr ? thread_memory(sy_onednn::kBiasSlot, e->bias, const_cast<float*>(post.bias)) : none;
    sy_onednn::execute(e->prim, s,
                       {{DNNL_ARG_SRC, *src},
                        {DNNL_ARG_WEIGHTS, e->weights},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, scratch}});
    s.wait();
  } catch (const dnnl::error& err) {
    const bool oom = err.status == dnnl_out_of_memory;
    throw sy::Error("oneDNN matmul [" + std::to_string(m) + ", " + std::to_string(k) + "] x packed [" +
                        std::to_string(k) + ", " + std::to_string(n) + "] failed: " + err.what() +
                        (oom ? " (out of memory)" : ""),
                    oom ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL);
  }
}

}  // namespace sy_linalg
