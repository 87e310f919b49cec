// Tensors as JSON for the CLI: {"name": {"dtype": "float32", "shape": [2, 3], "data": [...]}}.
// Simple and readable from any language; meant for small inputs and outputs.
#pragma once

#include <switchyard/runtime.hpp>

#include <string>
#include <vector>

namespace switchyard::cli {

// Reads inputs in the model's input order; errors name the file and the input.
std::vector<Tensor> read_tensors_json(const std::string& path, const std::vector<std::string>& names);
void write_tensors_json(const std::string& path, const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors);
// Deterministic sample inputs from the declared shapes (free dimensions become 1).
std::vector<Tensor> sample_inputs(const Model& model);
// Element `i` (in memory order, so pass a contiguous tensor) as a double, for every
// dtype switchyard names (float16/bfloat16 converted, bool 0/1); NaN for others.
double element(const Tensor& t, int64_t i);
// "[0.1, 0.2, ...]" with at most `limit` values.
std::string preview(const Tensor& t, int limit);

}  // namespace switchyard::cli
