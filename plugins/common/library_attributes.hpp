// What the family plugins report as SY_Plugin.attributes (SDK 1.3) for the libraries they
// wrap: the version, and what the library chose at run time on this CPU.
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <string>

namespace sy_attributes {

// The instruction set oneDNN's JIT dispatches to here, e.g. "avx512_core_bf16".
inline std::string onednn_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse4.1";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(static_cast<int>(dnnl_get_effective_cpu_isa()));
  }
}

// "2.6.3 (commit 52b5f10), isa avx512_core_bf16"
inline std::string onednn() {
  const dnnl_version_t* v = dnnl_version();
  std::string s = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  if (v->hash != nullptr && *v->hash != '\0' && std::string(v->hash) != "N/A")
    s += " (commit " + std::string(v->hash).substr(0, 7) + ")";
  return s + ", isa " + onednn_isa();
}

}  // namespace sy_attributes
