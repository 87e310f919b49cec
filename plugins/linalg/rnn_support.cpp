// linalg plugin: the recurrent kernels' support (rnn_support.hpp).
#include "rnn_support.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

namespace sy_linalg::rnn {

std::atomic<uint64_t> next_step_id{1};

Weight weight_of(const DLTensor& t) {
  Weight w;
  w.data = sy::data<const float>(t);
  const Shape s = sy::strides_of(t);
  w.rs = s[0];
  if (t.ndim == 2) w.cs = s[1];
  return w;
}

bool wait_for(const std::atomic<int64_t>& done, int64_t want, const std::atomic<bool>& failed) {
  for (int64_t spins = 0; done.load(std::memory_order_acquire) < want; ++spins) {
    if (failed.load(std::memory_order_relaxed)) return false;
    if (spins < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
  return true;
}

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Handles& thread_handles(const Step& s, bool lstm) {
  thread_local std::vector<Handles> kept;
  for (Handles& h : kept)
    if (h.id == s.id) return h;
  if (kept.size() >= 64) kept.clear();  // bounded: plans come and go with shapes
  dnnl::engine& eng = sy_onednn::cpu_engine();
  Handles h;
  h.id = s.id;
  auto make = [&](const memory::desc& md) { return md.is_zero() ? memory() : memory(md, eng, DNNL_MEMORY_NONE); };
  h.src_layer = make(s.src_layer);
  h.src_iter = make(s.src_iter);
  h.dst_layer = make(s.dst_layer);
  h.dst_iter = make(s.dst_iter);
  if (lstm) {
    h.src_iter_c = make(s.src_iter);
    h.dst_iter_c = make(s.dst_iter_c);
  }
  kept.push_back(std::move(h));
  return kept.back();
}

void execute(const dnnl::primitive& prim, std::initializer_list<std::pair<int, const memory*>> args) {
  dnnl_exec_arg_t c_args[10];
  int n = 0;
  for (const auto& [slot, mem] : args) {
    if (mem == nullptr || mem->get(true) == nullptr) continue;
    c_args[n++] = {slot, mem->get(true)};
  }
  dnnl::stream& s = sy_onednn::thread_stream();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), s.get(), n, c_args), "could not execute an RNN primitive");
  s.wait();
}

}  // namespace sy_linalg::rnn
