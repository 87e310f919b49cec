// cuda plugin: cuBLASLt and cuDNN resolved with dlopen/dlsym on first use (dynload.hpp).
#include "dynload.hpp"

#include <switchyard/plugin.hpp>

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

namespace sycuda::lib {

namespace {

// Opens the first of `names` that loads: the soname (found through the plugin's RUNPATH,
// LD_LIBRARY_PATH and the system's cache), then the file CMake found at build time.
void* open_library(const std::vector<std::string>& names, const char* what) {
  std::string errors;
  for (const std::string& n : names) {
    if (n.empty()) continue;
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    errors += "\n  " + n + ": " + (e ? e : "unknown error");
  }
  throw sy::Error(std::string("cuda plugin: cannot load ") + what + ":" + errors, SY_ERROR_INTERNAL);
}

template <typename F>
void resolve(void* handle, const char* library, const char* name, F* out) {
  dlerror();
  void* p = dlsym(handle, name);
  if (p == nullptr) {
    const char* e = dlerror();
    throw sy::Error(std::string("cuda plugin: ") + library + " has no " + name + " (" + (e ? e : "not found") + ")",
                    SY_ERROR_INTERNAL);
  }
  *out = reinterpret_cast<F>(p);
}

#define SY_STR2(x) #x
#define SY_STR(x) SY_STR2(x)

}  // namespace

const CublasLt& lt() {
  static std::once_flag once;
  static CublasLt table;
  static std::string failure;
  std::call_once(once, [] {
    try {
      void* h = open_library({"libcublasLt.so." SY_STR(CUBLAS_VER_MAJOR),
#ifdef SY_CUBLASLT_PATH
                              SY_CUBLASLT_PATH,
#endif
                              "libcublasLt.so"},
                             "cuBLASLt");
#define SY_RESOLVE(name) resolve(h, "cuBLASLt", #name, &table.name);
      SY_CUBLASLT_FUNCTIONS(SY_RESOLVE)
#undef SY_RESOLVE
    } catch (const sy::Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw sy::Error(failure, SY_ERROR_INTERNAL);
  return table;
}

#ifdef SY_CUDA_WITH_CUDNN
const Cudnn& dnn() {
  static std::once_flag once;
  static Cudnn table;
  static std::string failure;
  std::call_once(once, [] {
    try {
      void* h = open_library({"libcudnn.so." SY_STR(CUDNN_MAJOR),
#ifdef SY_CUDNN_PATH
                              SY_CUDNN_PATH,
#endif
                              "libcudnn.so"},
                             "cuDNN");
#define SY_RESOLVE(name) resolve(h, "cuDNN", #name, &table.name);
      SY_CUDNN_FUNCTIONS(SY_RESOLVE)
#undef SY_RESOLVE
    } catch (const sy::Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw sy::Error(failure, SY_ERROR_INTERNAL);
  return table;
}
#endif

}  // namespace sycuda::lib
