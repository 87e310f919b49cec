// The precision policy's graph rewrite (config [precision] compute = "fp32"): a model
// that holds float16 or bfloat16 computes in float32. Applied once when the model loads,
// so weights are converted once, never per run.
#pragma once

#include "ir/graph.hpp"

#include <string>
#include <vector>

namespace switchyard::ir {

bool is_half(DLDataType dtype);  // float16 or bfloat16

// A compact float32 copy of a float16 or bfloat16 tensor.
Tensor to_float32(const Tensor& t);

// The half-precision dtype a graph holds in its inputs or constants (float16 first), or
// none (lanes 0) for a model that holds neither.
DLDataType half_dtype_of(const Graph& graph);
// Whether any constant (a weight) is float16 or bfloat16: a half-precision model, as
// opposed to one that only takes half-precision inputs.
bool has_half_weights(const Graph& graph);

// What compute_in_float32 changed, for the log and `plan`.
struct Float32Upcast {
  size_t constants = 0;             // half-precision constants now float32
  size_t constant_bytes = 0;        // their float32 bytes
  std::vector<std::string> inputs;  // half-precision inputs, each converted as it enters
  size_t dtype_arguments = 0;       // dtype arguments that named a half dtype
};

// Converts the half-precision constants (and tensor attributes) to float32, converts each
// half-precision graph input as it enters (an aten::to node named "<input>.to_float32"
// that every reader then reads), and makes every dtype argument that names float16 or
// bfloat16 name float32. Graph outputs come out float32.
Float32Upcast compute_in_float32(Graph& graph);

}  // namespace switchyard::ir
