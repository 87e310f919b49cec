// Fusion: a producer node and its one element-wise consumer, run as a single kernel
// "A+B" that a plugin offers (sdk.h, "Fused kernels"). The executor decides per plan,
// after selecting the producer, and only where that backend accepts the fused node.
#pragma once

#include "ir/graph.hpp"

#include <string>
#include <vector>

namespace switchyard::exec {

// Per node, the index of the node that could be fused into it, or -1. The pair must be a
// chain: the producer's only output has one consumer, which reads it as its first
// input; it is not a graph output; the consumer's other inputs are constants, absent, or
// tensors that exist before the producer runs (a residual); neither is a sym node.
std::vector<int32_t> fusable_consumers(const ir::Graph& graph);

// The op name of the fused pair, e.g. "aten::linear+aten::gelu".
std::string fused_op(const ir::Node& producer, const ir::Node& consumer);

// The node run in place of both: the producer's name, module path and attributes; the
// consumer's attributes prefixed "post."; the producer's inputs, then the consumer's
// after its first; the consumer's outputs.
ir::Node fused_node(const ir::Node& producer, const ir::Node& consumer);

}  // namespace switchyard::exec
