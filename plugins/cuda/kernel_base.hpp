// cuda plugin, internal: what every kernel class shares.
//
// Storage (SDK 1.1): a kernel reads every tensor input and writes every output in the
// "cuda" storage (CudaKernel::storage), so values stay on the GPU from one cuda kernel to
// the next and the host converts where another backend, a graph output or node_io needs
// host memory. A few inputs are read on the host only (a 0-dim constant folded into a
// scalar, the shape of view_as's second argument): those accept any storage.
//
// A run may still see host tensors: from a host without storages, or from the host's own
// checks. DeviceRun stages such inputs to the device and such outputs back, so every kernel
// computes on device memory alone.
#pragma once

#include "allocator.hpp"
#include "broadcast.hpp"
#include "device.hpp"
#include "launch.hpp"
#include "storage.hpp"

#include <switchyard/plugin.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sycuda {

// ---- dtypes ----------------------------------------------------------------------------------

std::string dtype_name(DLDataType dt);                       // "float32", "bfloat16", "bool", ...
std::optional<launch::DT> dt_of(DLDataType dt);              // nullopt for a dtype no kernel knows
launch::DT need_dt(DLDataType dt, const std::string& what);  // Unsupported if unknown
bool is_float(DLDataType dt);                                // float32, float16, bfloat16
const std::vector<DLDataType>& float_dtypes();               // those three
const std::vector<DLDataType>& all_dtypes();                 // every dtype launch::DT names

// ---- the '@precision' option -----------------------------------------------------------------

// How float32 GEMMs and convolutions may compute. Kernels without tensor-core paths
// compute in float32 whatever the option says (docs/cuda.md lists which honour it).
enum class Precision { Float32, Tf32, Float16, Bfloat16 };
// Reads "@precision" (absent: Float32). Unsupported for an unknown value, naming the ones
// it knows: a typo must not silently run in full (or reduced) precision.
Precision precision_of(const sy::Attrs& attrs);
const char* precision_name(Precision p);

// ---- node checks -----------------------------------------------------------------------------

// Unsupported unless the GPU is usable (the reason says why not: "no CUDA device: ...").
inline void require_device() { Device::get().require(); }
// Unsupported for any attribute outside `known` whose value is not None; '@' options are
// skipped (sdk.h: a kernel never declines a node for an option it does not know).
void check_attributes(const sy::Node& node, const std::vector<std::string>& known);
// sy::declining and sy::failing (plugin.hpp): shape errors found while checking a node are
// reasons to decline it; an Unsupported found at run time is a plain error.
using sy::declining;
template <typename F>
auto at_run(F&& f) -> decltype(f()) {
  return sy::failing(std::forward<F>(f));
}

// ---- device view of one run --------------------------------------------------------------

struct DevTensor {
  void* data = nullptr;  // device memory, compact
  DLDataType dtype{};
  Shape shape;
  int64_t numel() const { return product(shape); }
  size_t bytes() const;
};

// One run's inputs and outputs as compact device tensors. Holds the device's queue lock
// from construction until finish() or destruction.
class DeviceRun {
 public:
  explicit DeviceRun(sy::Run& run);
  ~DeviceRun();
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  size_t num_inputs() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && run_.has_input(i); }
  // Input i on the device (a host input is staged on first use).
  const DevTensor& in(size_t i);
  // The input's host metadata, for shapes.
  const DLTensor& meta(size_t i) const { return run_.input(i); }
  DevTensor& out(size_t o) { return outputs_.at(o); }
  size_t num_outputs() const { return outputs_.size(); }
  cudaStream_t stream() const { return Device::get().stream(); }
  // Copies outputs the host keeps in host memory back (waiting for them); then unlocks.
  void finish();

 private:
  sy::Run& run_;
  std::unique_lock<std::recursive_mutex> lock_;
  std::vector<std::optional<DevTensor>> inputs_;
  std::vector<DevTensor> outputs_;
  std::vector<DeviceBuffer> staged_;  // temporaries for host inputs and outputs
  std::vector<size_t> host_outputs_;  // outputs computed in a temporary
};

// Checks a launcher's result, naming the kernel and node.
void launched(cudaError_t err, const std::string& kernel, const std::string& node);

// ---- arguments by schema name --------------------------------------------------------------

// Where each tensor argument of a node comes from (the aten plugin's convention): an input
// slot in schema order (an absent optional one is a NULL entry or left off the end), or a
// constant tensor attribute named like the argument, which takes no slot and is copied to
// the device once, on first use.
class TensorArgs {
 public:
  TensorArgs() = default;
  // `optional[i]`: argument i may be absent. Unsupported for surplus or missing inputs.
  TensorArgs(const sy::Node& node, const std::vector<std::string>& names, const std::vector<bool>& optional);
  size_t size() const { return slots_.size(); }
  const std::string& name(size_t i) const { return names_[i]; }
  // Argument i's metadata for a call with these inputs (NULL: absent).
  const DLTensor* meta(size_t i, const DLTensor* const* inputs, size_t num_inputs) const;
  // Argument i on the device during a run (NULL data: absent).
  DevTensor device(size_t i, DeviceRun& run);
  int slot(size_t i) const { return slots_[i]; }  // input slot, -1 for an attribute or absent

 private:
  std::vector<std::string> names_;
  std::vector<int> slots_;
  std::vector<const DLTensor*> attrs_;
  std::vector<std::shared_ptr<DeviceBuffer>> uploaded_;  // attribute tensors on the device
};

// ---- the base every kernel class derives from -------------------------------------------------

class CudaKernel {
 public:
  explicit CudaKernel(const sy::Node& node) : node_name_(node.name != nullptr ? node.name : "") {}
  // Every input in the cuda storage except those marked host_only(); outputs in cuda.
  void storage(sy::StorageQuery& q);

 protected:
  // Input i is read on the host only (never touched on the device): any storage will do.
  void host_only(size_t i);
  // Output 0 may take input i's buffer (element-wise ops) when their byte sizes match.
  void allow_in_place(size_t input) { in_place_input_ = static_cast<int32_t>(input); }
  const std::string& node_name() const { return node_name_; }
  void launched(cudaError_t err, const char* kernel) const { sycuda::launched(err, kernel, node_name_); }

 private:
  std::string node_name_;
  std::vector<bool> host_only_;
  int32_t in_place_input_ = -1;
};

}  // namespace sycuda
