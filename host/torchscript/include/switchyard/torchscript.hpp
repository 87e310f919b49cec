// switchyard's LibTorch bridge: the TorchScript importer and .pt tensor files. This is
// the only host code that links LibTorch; the core and its API never include torch.
#pragma once

#include <switchyard/runtime.hpp>

#include <string>
#include <vector>

namespace switchyard::torchscript {

// Makes Runtime::load accept ".pt" TorchScript files (idempotent).
void register_loader();

// torch::jit::load, freeze, inline, then lower every aten:: node into `out`. Weights are
// shared with the loaded module, not copied. Throws Error naming the construct (and its
// source range) for anything it cannot lower, e.g. prim::If or prim::Loop.
void import_model(const std::string& path, ir::Graph& out);

// Tensors saved by Python's torch.save: one tensor, or a tuple/list of tensors.
std::vector<Tensor> load_tensors(const std::string& path);
// Writes a tuple of tensors that Python's torch.load reads (one tensor alone if `single`).
void save_tensors(const std::string& path, const std::vector<Tensor>& tensors, bool single = false);
// Writes node_io as a dict keyed by node name, read by Python's torch.load:
// {node: {"op", "backend", "module_path", "input_sources", "inputs", "outputs"}}.
void save_node_io(const std::string& path, const std::vector<NodeIO>& records);

// LibTorch's own forward of a TorchScript file, for `switchyard verify`.
std::vector<Tensor> reference_forward(const std::string& path, const std::vector<Tensor>& inputs);

}  // namespace switchyard::torchscript
