// Reading what Python's torch.save wrote: a zip with <dir>/data.pkl (a pickle) and one
// record per storage (<dir>/data/<key>). torch 2.6's .pt2 keeps its state dict and
// constants this way, and newer ones keep weights marked `use_pickle` this way.
//
// The pickle is read by a restricted machine that knows the opcodes torch.save emits and
// a fixed list of callables (tensor and parameter rebuilds, OrderedDict); it runs nothing
// else, so a hostile file can only fail to load. LibTorch 1.13's own unpickler cannot
// read torch 2's files (it lacks torch._utils._rebuild_parameter), and the host core
// links no LibTorch.
#pragma once

#include <switchyard/tensor.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::pt2 {

// A torch.save'd dict of tensors (a state dict), in its file order. `what` names the
// file in errors. Tensors share the records' memory. Throws Error (Io).
std::vector<std::pair<std::string, Tensor>> load_tensor_dict(std::shared_ptr<const std::string> bytes,
                                                             const std::string& what);
// A torch.save'd single tensor.
Tensor load_tensor(std::shared_ptr<const std::string> bytes, const std::string& what);

}  // namespace switchyard::pt2
