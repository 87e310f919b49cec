// Recognising decomposed layers: a trace writes RMSNorm as six element-wise nodes, which
// chain fusion cannot join (the input is read twice). This pass finds such subgraphs and
// replaces each by one node of a switchyard op that a plugin offers:
//
//   switchyard::rms_norm(Tensor input, Tensor weight, float eps)
//       = weight * (input * rsqrt(mean(input ** 2, dim=-1, keepdim=True) + eps))
//   switchyard::swiglu(Tensor input, Tensor gate_weight, Tensor up_weight)
//       = silu(linear(input, gate_weight)) * linear(input, up_weight)     (a Llama MLP's first half)
//   switchyard::rotary(Tensor input, Tensor cos, Tensor sin, int dim, int cat_dim, int half)
//       = input * cos + cat([-input[half:], input[:half]], cat_dim) * sin  (slices along dim;
//         rotary position embeddings; `half` may be the model's shape arithmetic)
//   switchyard::channel_shuffle(Tensor[] inputs, int groups)
//       = view(transpose(view(cat(inputs, 1), [N, groups, C / groups, H, W]), 1, 2), [N, C, H, W])
//         (ShuffleNet's channel shuffle, with the concatenation before it when there is one)
//
// and a decomposed grouped-query attention, softmax(q k^T / c + mask) v with k and v
// repeated per group by expand and reshape (Llama's repeat_kv), becomes PyTorch 2's
// aten::scaled_dot_product_attention(q, k, v, mask, scale=1/c, enable_gqa=True): the
// attention plugin's fused kernel, with no key or value repeated in memory.
//
// The model applies it when it fuses (node_io "all" and "stream" see the graph as
// written), and only where the config's routing for the new node reaches a kernel.
#pragma once

#include "ir/graph.hpp"

#include <functional>
#include <string>

namespace switchyard::ir {

inline constexpr const char* kRmsNormOp = "switchyard::rms_norm";
inline constexpr const char* kSwigluOp = "switchyard::swiglu";
inline constexpr const char* kRotaryOp = "switchyard::rotary";
inline constexpr const char* kSdpaOp = "aten::scaled_dot_product_attention";
inline constexpr const char* kChannelShuffleOp = "switchyard::channel_shuffle";

// Replaces every such subgraph whose intermediate values nothing else reads, where
// `routed(new node)`. The new node takes the last node's name, module path and output
// value. Returns the number replaced.
size_t recognise_patterns(Graph& graph, const std::function<bool(const Node& replacement)>& routed);

}  // namespace switchyard::ir
