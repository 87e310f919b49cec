// [runtime] intra_op_threads reaches the libraries kernels run on through the SDK alone
// (SY_HostApi.num_threads): the aten plugin sizes ATen's OpenMP team from it, the linalg
// plugin holds OpenBLAS to one thread, and the host sets no environment variables.
#include "exec_test_util.hpp"

#include "util/intra_op_pool.hpp"

#include <switchyard/runtime.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace switchyard;
using namespace sytest;

namespace {

// A loaded library's int() function, called; -1 if the library is not in the process.
int call_loaded(const char* soname, const char* symbol) {
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  auto* get = reinterpret_cast<int (*)()>(dlsym(handle, symbol));
  int n = get != nullptr ? get() : -1;
  dlclose(handle);
  return n;
}

std::string config_with(const std::string& plugins, int threads) {
  return write_config(
      "threads_" + std::to_string(threads),
      "[plugins]\nload = [" + plugins + "]\n[runtime]\nintra_op_threads = " + std::to_string(threads) + "\n");
}

}  // namespace

TEST(Threads, AtenTakesTheHostsThreadCount) {
  for (int n : {1, 2, 1}) {
    Runtime rt(Options{config_with("\"aten\"", n)});
    const int omp = call_loaded("libgomp.so.1", "omp_get_max_threads");
    if (omp == -1)
      GTEST_SKIP() << "missing resource: libgomp.so.1 in this process (this LibTorch was built without OpenMP)";
    EXPECT_EQ(omp, n) << "ATen's OpenMP team on the thread that loaded the plugin";
    EXPECT_EQ(std::getenv("SWITCHYARD_INTRA_OP_THREADS"), nullptr) << "no environment side channel";
  }
}

TEST(Threads, OpenBlasStartsNoThreadsOfItsOwn) {
  Runtime rt(Options{config_with("\"linalg\", \"attention\"", 2)});
  const int blas = call_loaded("libopenblas.so.0", "openblas_get_num_threads");
  if (blas == -1) GTEST_SKIP() << "missing resource: libopenblas.so.0 in this process (the linalg plugin is not built)";
  EXPECT_EQ(blas, 1);
}

TEST(Threads, KernelShareIsPerThreadAndNested) {
  const int pool = threads::intra_op_threads();
  EXPECT_EQ(threads::kernel_threads(), pool);
  {
    threads::KernelThreads outer(3);
    EXPECT_EQ(threads::kernel_threads(), 3);
    {
      threads::KernelThreads inner(1);
      EXPECT_EQ(threads::kernel_threads(), 1);
    }
    EXPECT_EQ(threads::kernel_threads(), 3);
  }
  EXPECT_EQ(threads::kernel_threads(), pool);
}
