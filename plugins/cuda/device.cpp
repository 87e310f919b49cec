// cuda plugin: the device probe, the stream, library handles and the device error word.
#include "device.hpp"

#include "allocator.hpp"
#include "dynload.hpp"
#include "launch.hpp"

#include <cstdlib>
#include <cstring>

namespace sycuda {

namespace {

std::string cuda_text(cudaError_t err) {
  return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
}

std::string where(const char* file, int line) {
  const char* slash = std::strrchr(file, '/');
  return std::string(slash != nullptr ? slash + 1 : file) + ":" + std::to_string(line);
}

const char* cublas_name(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

}  // namespace

void fail_cuda(cudaError_t err, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // a sticky launch error would otherwise fail the next call too
  const SY_Status status = err == cudaErrorMemoryAllocation ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL;
  throw sy::Error(std::string(call) + " failed: " + cuda_text(err) + " at " + where(file, line), status);
}

void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) fail_cuda(err, call, file, line);
}

void fail_cublas(cublasStatus_t st, const char* call, const char* file, int line) {
  const SY_Status status = st == CUBLAS_STATUS_ALLOC_FAILED ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL;
  throw sy::Error(std::string(call) + " failed: " + cublas_name(st) + " at " + where(file, line), status);
}

void check_cublas(cublasStatus_t st, const char* call, const char* file, int line) {
  if (st != CUBLAS_STATUS_SUCCESS) fail_cublas(st, call, file, line);
}

std::vector<std::pair<std::string, std::string>> library_attributes() {
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  int runtime = 0, driver = 0;
  std::string cuda = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? "runtime " + version(runtime) : "runtime unknown";
  cuda += cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0 ? ", driver " + version(driver) : ", no driver";
  (void)cudaGetLastError();
  const Device& d = Device::get();
  std::vector<std::pair<std::string, std::string>> out{
      {"cuda", cuda},
      {"device", d.usable() && !d.plan_only()
                     ? d.name() + " (sm_" + std::to_string(d.major()) + std::to_string(d.minor()) + ")"
                 : d.reason().empty() ? d.name()
                                      : d.reason()}};
#ifdef SY_CUDA_WITH_CUDNN
  out.emplace_back("cudnn", "headers " + std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                                std::to_string(CUDNN_PATCHLEVEL) + ", opened on first use");
#else
  out.emplace_back("cudnn", "not built in");
#endif
  return out;
}

Device& Device::get() {
  // Never destroyed: CUDA calls from static destructors at exit race the driver's teardown.
  static Device* device = new Device();
  return *device;
}

namespace {
bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
}  // namespace

Device::Device() {
  sync_each_kernel_ = env_flag("SWITCHYARD_CUDA_SYNC");
  probe();
  if (!usable_ && env_flag("SWITCHYARD_CUDA_PLAN_ONLY")) {
    plan_only_ = true;
    usable_ = true;
    name_ = "plan only";
  }
}

void Device::probe() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    reason_ = "no CUDA device: " + cuda_text(err);
    return;
  }
  if (count < 1) {
    reason_ = "no CUDA device: cudaGetDeviceCount found none";
    return;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, 0);
  if (err == cudaSuccess) err = cudaSetDevice(0);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    reason_ = "no CUDA device: device 0 cannot be used: " + cuda_text(err);
    return;
  }
  name_ = prop.name;
  major_ = prop.major;
  minor_ = prop.minor;
  const std::string sm = std::to_string(major_) + std::to_string(minor_);
  if (major_ * 10 + minor_ < 75) {
    reason_ = "no usable CUDA device: " + name_ + " has compute capability " + std::to_string(major_) + "." +
              std::to_string(minor_) + "; the cuda plugin needs 7.5 or newer";
    return;
  }
  err = launch::probe_kernel_image();
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    reason_ = "no usable CUDA device: the cuda plugin has no kernel image for " + name_ + " (sm_" + sm +
              "): rebuild with SWITCHYARD_CUDA_ARCHITECTURES including " + sm + "-real (" + cuda_text(err) + ")";
    return;
  }
  err = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  int* host_word = nullptr;
  if (err == cudaSuccess) err = cudaHostAlloc(reinterpret_cast<void**>(&host_word), sizeof(int), cudaHostAllocMapped);
  if (err == cudaSuccess) err = cudaHostGetDevicePointer(reinterpret_cast<void**>(&error_word_device_), host_word, 0);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    reason_ = "no usable CUDA device: setting up " + name_ + " failed: " + cuda_text(err);
    return;
  }
  *host_word = 0;
  error_word_host_ = host_word;
  usable_ = true;
}

void Device::require() const {
  if (!usable_) throw sy::Unsupported(reason_);
}

void Device::require_real() const {
  if (!usable_) throw sy::Error(reason_, SY_ERROR_INTERNAL);
  if (plan_only_)
    throw sy::Error("SWITCHYARD_CUDA_PLAN_ONLY is set: the cuda plugin plans but cannot run here (" + reason_ + ")",
                    SY_ERROR_INTERNAL);
}

void Device::use_on_this_thread() {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != 0) SY_CUDA_CHECK(cudaSetDevice(0));
}

cublasLtHandle_t Device::cublaslt() {
  std::lock_guard<std::recursive_mutex> guard(lock_);
  if (cublaslt_ == nullptr) SY_CUBLAS_CHECK(lib::lt().cublasLtCreate(&cublaslt_));
  return cublaslt_;
}

void* Device::gemm_workspace(size_t* bytes) {
  std::lock_guard<std::recursive_mutex> guard(lock_);
  // 32 MiB: what cuBLASLt's documentation asks for on Hopper; smaller GPUs use less of it.
  constexpr size_t kWorkspace = size_t{32} << 20;
  if (workspace_ == nullptr) {
    workspace_ = DeviceAllocator::get().allocate(kWorkspace);
    workspace_bytes_ = kWorkspace;
  }
  *bytes = workspace_bytes_;
  return workspace_;
}

void Device::synchronize() {
  SY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  check_errors();
}

int Device::register_error(const std::string& message) {
  std::lock_guard<std::mutex> guard(errors_mutex_);
  error_messages_.push_back(message);
  return static_cast<int>(error_messages_.size());  // 0 means "no error"
}

void Device::check_errors() {
  if (error_word_host_ == nullptr) return;
  const int code = *error_word_host_;
  if (code == 0) return;
  *error_word_host_ = 0;  // reported once
  std::string message;
  {
    std::lock_guard<std::mutex> guard(errors_mutex_);
    message = code > 0 && static_cast<size_t>(code) <= error_messages_.size()
                  ? error_messages_[static_cast<size_t>(code) - 1]
                  : "unknown device error code " + std::to_string(code);
  }
  throw sy::Error("a cuda kernel found invalid input: " + message, SY_ERROR_INVALID_ARGUMENT);
}

void after_launch(cudaError_t launch_error, const std::string& what) {
  if (launch_error != cudaSuccess) {
    (void)cudaGetLastError();
    throw sy::Error("launching " + what + " failed: " + cuda_text(launch_error), SY_ERROR_INTERNAL);
  }
  Device& d = Device::get();
  if (!d.sync_each_kernel()) return;
  const cudaError_t err = cudaStreamSynchronize(d.stream());
  if (err != cudaSuccess) throw sy::Error(what + " failed on the device: " + cuda_text(err), SY_ERROR_INTERNAL);
  d.check_errors();
}

}  // namespace sycuda
