// [runtime] intra_op_threads reaches the libraries kernels run on: OpenBLAS (brought into
// the process by the aten plugin's LibTorch) and the plugins' environment variable.
#include "exec_test_util.hpp"

#include <switchyard/runtime.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace switchyard;
using namespace sytest;

namespace {

// OpenBLAS's thread count read straight from the library; -1 if it is not loaded.
int openblas_threads_now() {
  void* handle = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  auto* get = reinterpret_cast<int (*)()>(dlsym(handle, "openblas_get_num_threads"));
  int n = get != nullptr ? get() : -1;
  dlclose(handle);
  return n;
}

std::string aten_config(int threads) {
  return write_config("threads_" + std::to_string(threads),
                      "[plugins]\nload = [\"aten\"]\n[runtime]\nintra_op_threads = " + std::to_string(threads) + "\n");
}

}  // namespace

TEST(Threads, IntraOpThreadsSetOpenBlasAndThePluginVariable) {
  for (int n : {1, 2, 1}) {
    Runtime rt(Options{aten_config(n)});
    if (openblas_threads_now() == -1) GTEST_SKIP() << "no libopenblas.so.0 in this process (LibTorch built on another BLAS)";
    EXPECT_EQ(openblas_threads_now(), n);
    const char* env = std::getenv("SWITCHYARD_INTRA_OP_THREADS");
    ASSERT_NE(env, nullptr);
    EXPECT_EQ(std::string(env), std::to_string(n));
  }
}

TEST(Threads, ZeroLeavesTheLibrariesAlone) {
  { Runtime rt(Options{aten_config(1)}); }
  if (openblas_threads_now() == -1) GTEST_SKIP() << "no libopenblas.so.0 in this process";
  Runtime rt(Options{aten_config(0)});
  EXPECT_EQ(openblas_threads_now(), 1);
}
