// The config's "@compute" option ([precision] compute = "bf16"): whether a kernel that has
// a bfloat16 path takes it here. It does only where oneDNN dispatches to bfloat16 dot
// products (AVX512-BF16 or AMX); emulated bfloat16 would be slower than float32.
#pragma once

#include <oneapi/dnnl/dnnl.h>
#include <switchyard/plugin.hpp>

namespace sy_compute {

struct Choice {
  bool asked = false;          // the config asked for bfloat16
  bool bf16 = false;           // take the bfloat16 path
  const char* note = nullptr;  // (static) why not, when bfloat16 was asked for
};

inline bool cpu_has_bf16_dot() {
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;  // AMX includes it
}

inline bool asks_bf16(const sy::Attrs& a) { return a.kind("@compute") == SY_ATTR_STRING && a.s("@compute") == "bf16"; }

inline Choice choose(const sy::Attrs& a) {
  if (!asks_bf16(a)) return {};
  if (!cpu_has_bf16_dot())
    return {true, false, "oneDNN finds no bfloat16 dot products on this CPU (AVX512-BF16 or AMX)"};
  return {true, true, nullptr};
}

// Answers the host's SY_ComputeReport for a kernel whose bfloat16 path is `c`:
// `converted` and `constant` are element counts (bfloat16 takes 2 bytes each).
inline void report(sy::StorageQuery& q, const Choice& c, uint64_t converted, uint64_t constant) {
  if (c.bf16)
    q.computes_in(sy::kBFloat16, converted * 2, constant * 2);
  else if (c.asked)
    q.computes_in(sy::kFloat32, 0, 0, c.note);
}

}  // namespace sy_compute
