// Float32 islands ([precision] compute = "as-is"): a node of a float16 or bfloat16 model
// that no backend takes in its dtype runs on a kernel chosen for its float32 twin, the
// node with those inputs described as float32. The island is itself a kernel (an
// SY_KernelDef of the host's, wrapping the chosen one), so planning, storages and steps
// treat it as any other: its half-precision constants are converted once, when it is made;
// per run, its half-precision inputs are converted to float32 as they enter and its
// float32 outputs back to the model's dtype, so its readers see the dtype the model has.
// `plan` lists each island with the bytes it converts; the log names them once.
#pragma once

#include "exec/plan.hpp"
#include "ir/graph.hpp"
#include "select/selector.hpp"

#include <switchyard/sdk.h>
#include <switchyard/tensor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchyard::exec {

// The float16 or bfloat16 dtype of the first half-precision input, or lanes 0 if none is.
DLDataType island_dtype(const std::vector<const DLTensor*>& inputs);

// A node's inputs as a float32 kernel sees them: half-precision inputs described as
// float32, constants among them converted (once, held here); the rest as they are.
class Float32Twin {
 public:
  explicit Float32Twin(const std::vector<const DLTensor*>& inputs);
  Float32Twin(const Float32Twin&) = delete;
  Float32Twin& operator=(const Float32Twin&) = delete;

  const std::vector<const DLTensor*>& inputs() const { return pointers_; }
  // The converted copy of a constant whose data starts at `data`, or null.
  const Tensor* converted(const void* data) const;
  uint64_t constant_bytes() const;  // float32 bytes of the converted constants

 private:
  std::vector<DLTensor> described_;
  std::vector<const DLTensor*> pointers_;
  std::vector<std::pair<const void*, Tensor>> constants_;  // half data -> float32 copy
};

// The kernel an island runs: `inner` (chosen for the twin) behind an SY_KernelDef whose
// calls take and give the model's half-precision tensors. Owned by the bound kernel, and
// outlives its instance.
class Island {
 public:
  Island(const select::Candidate& inner, DLDataType half, std::unique_ptr<Float32Twin> twin);
  const SY_KernelDef* def() const { return &def_; }
  DLDataType half() const { return half_; }
  const Float32Twin& twin() const { return *twin_; }
  const SY_KernelDef& inner() const { return *inner_; }

 private:
  const SY_KernelDef* inner_;
  DLDataType half_;
  std::unique_ptr<Float32Twin> twin_;
  std::vector<DLDataType> dtypes_;
  SY_KernelDef def_{};
};

// What an island converts per run, in float32 bytes: its half-precision run-time inputs
// and its floating outputs at the shapes planned.
uint64_t island_bytes_per_run(const std::vector<const DLTensor*>& inputs, const std::vector<SY_TensorDesc>& outputs);

// Warns once, for a plan with islands, how many nodes of which ops run as islands and what
// they convert.
void log_islands(const Plan& plan, const ir::Graph& graph);

}  // namespace switchyard::exec
