#include "exec/threads.hpp"

#include "util/log.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace switchyard::exec {
namespace {

// A symbol of an already loaded library (or one of its dependencies); nullptr if the
// library is not in the process. Never loads anything.
void* loaded_symbol(const char* const* sonames, const char* symbol) {
  for (const char* const* name = sonames; *name != nullptr; ++name) {
    void* handle = dlopen(*name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* sym = dlsym(handle, symbol);
    dlclose(handle);  // drops the reference NOLOAD took; the library stays loaded
    if (sym != nullptr) return sym;
  }
  return nullptr;
}

// Debian's libblas.so.3 (the OpenBLAS alternative) forwards to libopenblas.so.0.
const char* const kOpenBlas[] = {"libopenblas.so.0", "libopenblas.so", "libblas.so.3", nullptr};
const char* const kOpenMp[] = {"libgomp.so.1", "libomp.so.5", "libomp.so", nullptr};

}  // namespace

void prepare_thread_environment(int threads) {
  if (threads <= 0) return;
  const std::string n = std::to_string(threads);
  setenv("SWITCHYARD_INTRA_OP_THREADS", n.c_str(), 1);
  // Read once when the library initialises: useful only if it is not loaded yet.
  if (loaded_symbol(kOpenMp, "omp_set_num_threads") == nullptr) setenv("OMP_NUM_THREADS", n.c_str(), 1);
  if (loaded_symbol(kOpenBlas, "openblas_set_num_threads") == nullptr)
    setenv("OPENBLAS_NUM_THREADS", n.c_str(), 1);
}

void apply_library_threads(int threads) {
  if (threads <= 0) return;
  if (auto* set = reinterpret_cast<void (*)(int)>(loaded_symbol(kOpenBlas, "openblas_set_num_threads"))) {
    set(threads);
    log::get().debug("OpenBLAS threads set to {} (now {})", threads, openblas_threads());
  }
  // OpenMP's count is per thread: this sets the caller's (oneDNN and ATen read it there).
  if (auto* set = reinterpret_cast<void (*)(int)>(loaded_symbol(kOpenMp, "omp_set_num_threads"))) {
    set(threads);
    log::get().debug("OpenMP threads of this thread set to {}", threads);
  }
}

namespace {
using SetThreads = void (*)(int);
using GetThreads = int (*)();
// Looked up on first use, which comes after the plugins (and their OpenMP) have loaded.
SetThreads omp_set() {
  static auto* const fn = reinterpret_cast<SetThreads>(loaded_symbol(kOpenMp, "omp_set_num_threads"));
  return fn;
}
GetThreads omp_get() {
  static auto* const fn = reinterpret_cast<GetThreads>(loaded_symbol(kOpenMp, "omp_get_max_threads"));
  return fn;
}
}  // namespace

void set_this_thread_openmp(int threads) {
  if (omp_set() != nullptr && threads > 0 && (omp_get() == nullptr || omp_get()() != threads)) omp_set()(threads);
}

int this_thread_openmp() { return omp_get() != nullptr ? omp_get()() : 0; }

int openblas_threads() {
  auto* get = reinterpret_cast<int (*)()>(loaded_symbol(kOpenBlas, "openblas_get_num_threads"));
  return get != nullptr ? get() : -1;
}

}  // namespace switchyard::exec
