// cuda plugin, internal: the one GPU this plugin drives (device 0), probed once when the
// plugin loads. Everything the plugin queues on it goes to one in-order stream (the SDK's
// queue model: kernels, conversions and frees of one device in call order), under one
// lock, so that cuBLAS, cuBLASLt and cuDNN handles are never used by two threads at once.
//
// Errors: every CUDA, cuBLAS and cuDNN call goes through check(), which turns a failure
// into a sy::Error naming the call, the library's message and the source line; running out
// of device memory becomes SY_ERROR_OUT_OF_MEMORY with the bytes asked (allocator.cpp).
#pragma once

#include <switchyard/plugin.hpp>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sycuda {

// "cudaMemcpyAsync(...) failed: out of memory (cudaErrorMemoryAllocation) at storage.cpp:42"
[[noreturn]] void fail_cuda(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t st, const char* call, const char* file, int line);
void check_cuda(cudaError_t err, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t st, const char* call, const char* file, int line);

#define SY_CUDA_CHECK(call) ::sycuda::check_cuda((call), #call, __FILE__, __LINE__)
#define SY_CUBLAS_CHECK(call) ::sycuda::check_cublas((call), #call, __FILE__, __LINE__)

// SY_Plugin.attributes (SDK 1.3): the CUDA runtime and driver versions, the device (or
// why there is none) and the cuDNN headers the plugin was built with. Probes the device.
std::vector<std::pair<std::string, std::string>> library_attributes();

class Device {
 public:
  // The probe's verdict: usable() or, if not, why (e.g. "no CUDA device: no CUDA-capable
  // device is detected (cudaErrorNoDevice)"). Never throws, never aborts.
  static Device& get();
  bool usable() const { return usable_; }
  // SWITCHYARD_CUDA_PLAN_ONLY=1 on a machine without a usable GPU: kernels accept nodes as
  // if GPU 0 were there, so that `switchyard plan` shows what a GPU machine would run;
  // anything that needs the device (a run, a conversion, memory) fails, naming the reason.
  bool plan_only() const { return plan_only_; }
  // Throws sy::Error unless work can really be queued (usable and not plan-only).
  void require_real() const;
  const std::string& reason() const { return reason_; }
  const std::string& name() const { return name_; }  // "NVIDIA H100 80GB HBM3"
  int major() const { return major_; }
  int minor() const { return minor_; }
  // Throws sy::Unsupported with reason() unless usable(): what every kernel's supports()
  // calls first, so that selection falls through to the next backend.
  void require() const;

  // The stream every kernel, conversion and free of this plugin goes to.
  cudaStream_t stream() const { return stream_; }
  // Held while queuing work or using a library handle (recursive: kernels call helpers).
  std::recursive_mutex& lock() { return lock_; }
  // Makes device 0 the calling thread's current device (the embedding program may use
  // another one on its own threads).
  static void use_on_this_thread();
  // The cuBLASLt handle, made on first use (under lock()); the library is opened then.
  cublasLtHandle_t cublaslt();
  // GEMM scratch for cuBLASLt, allocated once (under lock()).
  void* gemm_workspace(size_t* bytes);

  // With SWITCHYARD_CUDA_SYNC=1 every kernel waits for its work, so that an error is
  // reported by the node that caused it (slow; for debugging).
  bool sync_each_kernel() const { return sync_each_kernel_; }
  // Waits for the stream, then reports a failure a kernel flagged on the device (an index
  // out of range) as a sy::Error naming the node.
  void synchronize();

  // The device error word (pinned, mapped host memory the kernels write to): kernels
  // that can find bad input (an embedding index out of range) store their code here.
  // register_error() gives a code for a node and message; check_errors() reads the word.
  int* error_word_device() const { return error_word_device_; }
  int register_error(const std::string& message);
  void check_errors();

 private:
  Device();
  void probe();  // sets usable_ or reason_
  bool usable_ = false;
  bool plan_only_ = false;
  bool sync_each_kernel_ = false;
  std::string reason_, name_;
  int major_ = 0, minor_ = 0;
  cudaStream_t stream_ = nullptr;
  std::recursive_mutex lock_;
  cublasLtHandle_t cublaslt_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  volatile int* error_word_host_ = nullptr;
  int* error_word_device_ = nullptr;
  std::mutex errors_mutex_;
  std::vector<std::string> error_messages_;
};

// After a launch: the launch's error (bad configuration, no image for this GPU) or, with
// sync_each_kernel(), the kernel's own; `what` names the kernel and node.
void after_launch(cudaError_t launch_error, const std::string& what);

}  // namespace sycuda
