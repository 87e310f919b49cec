// Input specs: what shapes each graph input takes, read from the graph itself. A plain
// trace records no input shapes, and needs none (sizes are computed at run time), but its
// weights fix some dimensions: a convolution's input has the weight's rank and its
// channels, a linear layer's input ends in the weight's in_features, a layer norm fixes
// its normalized dims, an LSTM its rank and input_size. The executor checks a run's inputs
// against the spec before any kernel runs, so that a wrong shape is refused with a message
// naming the input, the expected shape with symbolic dims, and why:
//   input 'x' expects [B, 3, H, W] (dim 1 is fixed to 3 by conv1.weight), got [2, 4, 224, 224]
#pragma once

#include "ir/graph.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::ir {

struct InputSpec {
  int64_t rank = -1;    // -1: any rank
  std::string rank_by;  // what fixes the rank ("conv1.weight"); empty when declared
  struct Fixed {
    int64_t dim;  // >= 0 from the front; < 0 from the back (-1 = the last), where the rank is unknown
    int64_t size;
    std::string by;  // "conv1.weight", "encoder.norm", or empty when declared
  };
  std::vector<Fixed> fixed;
  std::vector<std::string> dim_names;  // one per dimension where the rank is known ("B", "S", "H")
  std::vector<DimRange> ranges;        // one per dimension, or empty: the sizes each may take
};

// The spec of graph input #input_index: what the graph's own use of it fixes, merged with
// what its Value declares (shape, rank_known, dim_names).
InputSpec input_spec(const Graph& graph, size_t input_index);

// Writes every input's spec into its Value: shape (-1 = free), rank_known and dim_names.
// What is already declared there is kept. Importers call it once the graph is built.
void derive_input_specs(Graph& graph);

// The expected shape of graph input #input_index for messages and `plan`:
// "[B, 3, H, W]", "[..., 768]" (rank free, last dim fixed) or "[...]" (anything); with
// declared ranges, "[s0, 3, 16, 16] with s0 in 1..64".
std::string expected_shape(const Graph& graph, size_t input_index);

// "" when `shape` fits graph input #input_index; otherwise the error text, e.g.
//   input 'x' expects [B, 3, H, W] (dim 1 is fixed to 3 by conv1.weight), got [2, 4, 224, 224]
//   input 'x' expects [B, 3, H, W] (4 dimensions, fixed by conv1.weight), got [3, 224, 224]
// Cheap enough for once per input-shape signature (it walks the input's first consumers).
std::string check_input_shape(const Graph& graph, size_t input_index, const std::vector<int64_t>& shape);

}  // namespace switchyard::ir
