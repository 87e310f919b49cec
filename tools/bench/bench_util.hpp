// Helpers shared by the benchmarks: timing and medians, OpenBLAS's thread count (set the
// same way for every contender), tensors between switchyard and LibTorch, markdown cells.
#pragma once

#include <switchyard/sdk.h>
#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <ATen/Parallel.h>
#include <torch/script.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sybench {

using Clock = std::chrono::steady_clock;

template <typename F>
double time_ms(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string fmt(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Runs `body` on a thread with a `stack_bytes` stack and returns its result: TorchScript's
// passes recurse once per op of a long chain, past the default 8 MiB.
inline int run_with_stack(size_t stack_bytes, std::function<int()> body) {
  struct Job {
    std::function<int()> body;
    int rc = 1;
  } job{std::move(body)};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  auto entry = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      j->rc = j->body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      j->rc = 1;
    }
    return nullptr;
  };
  if (pthread_create(&thread, &attr, entry, &job) != 0) throw std::runtime_error("bench: pthread_create failed");
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  return job.rc;
}

inline switchyard::Options with_config(const std::string& path) {
  switchyard::Options o;
  o.config_path = path;
  return o;
}

// OpenBLAS as LibTorch loaded it (Debian: libblas.so.3 -> libopenblas.so.0). Looked up
// at run time so that a LibTorch on another BLAS still builds; then these do nothing.
inline void* openblas_symbol(const char* name) {
  for (const char* so : {"libopenblas.so.0", "libblas.so.3"}) {
    if (void* h = dlopen(so, RTLD_LAZY | RTLD_NOLOAD)) {
      void* sym = dlsym(h, name);
      dlclose(h);
      if (sym != nullptr) return sym;
    }
  }
  return nullptr;
}
inline void set_openblas_threads(int n) {
  static auto* set = reinterpret_cast<void (*)(int)>(openblas_symbol("openblas_set_num_threads"));
  if (set != nullptr) set(n);
}
inline int openblas_threads() {
  static auto* get = reinterpret_cast<int (*)()>(openblas_symbol("openblas_get_num_threads"));
  return get != nullptr ? get() : -1;
}
inline std::string openblas_config() {
  static auto* get = reinterpret_cast<const char* (*)()>(openblas_symbol("openblas_get_config"));
  return get != nullptr ? get() : "OpenBLAS not loaded";
}

// A LibTorch view of a switchyard tensor's memory (no copy; `t` must outlive it).
inline at::Tensor to_torch(const switchyard::Tensor& t) {
  const DLDataType d = t.dtype();
  at::ScalarType type;
  if (d.code == kDLFloat && d.bits == 32)
    type = at::kFloat;
  else if (d.code == kDLFloat && d.bits == 64)
    type = at::kDouble;
  else if (d.code == kDLInt && d.bits == 64)
    type = at::kLong;
  else if (d.code == kDLInt && d.bits == 32)
    type = at::kInt;
  else if (d.code == SY_DL_BOOL && d.bits == 8)
    type = at::kBool;
  else
    throw std::runtime_error("bench: no LibTorch dtype for " + switchyard::dtype_name(d));
  return at::from_blob(t.raw_data(), t.shape(), t.strides(), at::TensorOptions().dtype(type));
}

// The first tensor of a TorchScript forward's result (a tensor, or a tuple/list of them).
inline at::Tensor first_tensor(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor();
  if (v.isTuple() && !v.toTupleRef().elements().empty()) return first_tensor(v.toTupleRef().elements()[0]);
  if (v.isList() && v.toListRef().size() > 0) return first_tensor(v.toListRef()[0]);
  throw std::runtime_error("bench: the model's forward returned no tensor");
}

// A zoo model's inputs at `batch` (zoo.json's entry for it): the exported file if the zoo
// has that batch, else the largest exported batch that divides it, repeated along dim 0.
inline std::vector<switchyard::Tensor> zoo_inputs(const std::string& zoo, const nlohmann::json& entry, int batch) {
  int from = 0;
  std::string file;
  for (const auto& b : entry["batches"]) {
    const int have = b["batch"];
    if (batch % have == 0 && have > from) from = have, file = b["inputs"].get<std::string>();
  }
  if (from == 0) throw std::runtime_error("no exported batch divides " + std::to_string(batch));
  std::vector<switchyard::Tensor> inputs = switchyard::torchscript::load_tensors(zoo + "/" + file);
  if (from == batch) return inputs;
  for (auto& t : inputs) {
    const switchyard::Tensor c = t.contiguous();
    std::vector<int64_t> shape = c.shape();
    shape.at(0) *= batch / from;
    switchyard::Tensor big = switchyard::Tensor::uninitialized(c.dtype(), shape);
    for (int k = 0; k < batch / from; ++k)
      std::memcpy(static_cast<char*>(big.raw_data()) + k * c.nbytes(), c.raw_data(), c.nbytes());
    t = big;
  }
  return inputs;
}

}  // namespace sybench
