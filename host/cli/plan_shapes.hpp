// `plan` without --inputs: the plan at sample shapes, with each output dimension that
// follows a named input dimension printed by that name ([B, 197, 768]).
#pragma once

#include <switchyard/runtime.hpp>

#include <string>
#include <vector>

namespace switchyard::cli {

struct SymbolicPlan {
  std::vector<std::string> specs;                               // per input, e.g. "[B, 3, H, W]"
  std::vector<std::vector<int64_t>> sample_shapes;              // the shapes planned at
  int64_t size = 0;                                             // the sample size of unnamed-by-batch dims
  std::vector<PlanEntry> plan;                                  // the plan at sample_shapes
  std::vector<std::vector<std::vector<std::string>>> symbolic;  // per node, per output, per dim
  std::vector<std::string> fixed_names;                         // named dims the model took only as sampled
};

// Plans `model` at sample shapes (an input's example shape where given, else batch 2 and
// other dims 64, then 224) and once more per named dimension. Throws Error (Input) when an
// input has no rank to sample, or no sample plans.
SymbolicPlan plan_symbolically(const Model& model);

std::string joined_dims(const std::vector<std::string>& dims);  // "[B, 197, 768]"

}  // namespace switchyard::cli
