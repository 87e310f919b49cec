// Folding an inference batch norm into the convolution before it: conv(x, W, b) followed by
// batch_norm(training=False) with constant statistics becomes conv(x, W', b'), with
//   W'[c] = W[c] * s[c],  b'[c] = (b[c] - mean[c]) * s[c] + beta[c],  s = gamma / sqrt(var + eps).
// TorchScript's freeze does this at import; a torch.export program keeps the batch norm, and
// without the fold it runs as a pass of its own and keeps the convolution from fusing with
// the activation after it. The model applies it when it fuses (node_io "all" and "stream"
// see the graph as written, one record per node).
#pragma once

#include "ir/graph.hpp"

namespace switchyard::ir {

// Folds every such pair whose convolution output feeds the batch norm alone; the folded
// convolution takes the batch norm's output value (and so its consumers). float32 only.
// Returns the number folded.
size_t fold_batch_norm(Graph& graph);

}  // namespace switchyard::ir
