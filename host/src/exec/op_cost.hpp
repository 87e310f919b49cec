// The host's estimate of one node's cost, for kernels that report none (SDK 1.1 `cost` is
// optional): FLOPs and bytes from the op and the shapes it ran at. The roofline, `plan`
// and Python's plan all read it from PlanEntry, so embedders get what the CLI shows.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::exec {

// A tensor as the estimate sees it; `defined` is false for an absent optional input.
struct TensorShape {
  bool defined = false;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
};

struct OpCost {
  double flops = 0, bytes = 0;
};

// linear/matmul/conv/attention count 2 FLOPs per multiply-add, other ops one per output
// element, and each op a fused "A+B" adds after its first one more per output element.
// Bytes: every input and output read or written once.
OpCost estimate_op_cost(const std::string& op, const std::vector<TensorShape>& inputs,
                        const std::vector<TensorShape>& outputs);

}  // namespace switchyard::exec
