// The CPU engine a plugin's oneDNN primitives, memories and streams share: one per plugin
// library (an inline function's static is per shared object).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace sy_onednn {

inline dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace sy_onednn
