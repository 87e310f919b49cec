// Fusion: a producer node and its element-wise consumers (one, or a chain of two), run as
// a single kernel "A+B" or "A+B+C" that a plugin offers (sdk.h, "Fused kernels"). The executor decides per plan,
// after selecting the producer, and only where that backend accepts the fused node.
#pragma once

#include "ir/graph.hpp"

#include <string>
#include <vector>

namespace switchyard::exec {

// The consumer's inputs with `fed` first, as a fused kernel takes them: as they are when
// it reads `fed` first; with the first two swapped when it reads `fed` second and is
// commutative (aten::add with alpha 1, aten::mul); else empty.
std::vector<ir::ValueId> inputs_fed_by(const ir::Node& consumer, ir::ValueId fed);

// Per node, the index of the node that could be fused into it, or -1. The pair must be a
// chain: the producer's only output has one consumer, which reads it as its first input
// (or its second, where inputs_fed_by swaps them); it is not a graph output; the consumer's other inputs are constants, absent, or
// tensors that exist before the producer runs (a residual); neither is a sym node.
std::vector<int32_t> fusable_consumers(const ir::Graph& graph);

// The longest chain that `head` may run as one kernel, head first: each next node is the
// fusable consumer of the one before (above), and reads besides it only values that exist
// before `head` runs, since the fused kernel runs in head's place. At most `max_len`
// nodes; {head} alone when nothing can be fused into it.
std::vector<int32_t> fusion_chain(const ir::Graph& graph, const std::vector<int32_t>& consumers, size_t head,
                                  size_t max_len = 3);

// The op name of a fused chain, e.g. "aten::linear+aten::gelu" or
// "aten::conv2d+aten::add+aten::relu".
std::string fused_op(const ir::Graph& graph, const std::vector<int32_t>& chain);

// The node run in place of a chain (sdk.h, "Fused kernels"): the head's name, module
// path and attributes; the second node's attributes prefixed "post.", the third's
// "post2."; the head's inputs, then each later node's after its first; the last node's
// outputs. `head` (optional) is the head as run (bound attributes resolved), when not the
// graph's node.
ir::Node fused_node(const ir::Graph& graph, const std::vector<int32_t>& chain, const ir::Node* head = nullptr);

}  // namespace switchyard::exec
