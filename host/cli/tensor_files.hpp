// Tensor files for the CLI, chosen by extension: ".pt"/".pth" are LibTorch pickles that
// Python's torch.save writes and torch.load reads (builds with LibTorch only); anything
// else is the JSON format of tensor_json.hpp.
#pragma once

#include <switchyard/runtime.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchyard::cli {

bool is_pt_file(const std::string& path);  // ends in .pt or .pth
bool have_torchscript();                   // built with the LibTorch bridge

// The model's inputs, in order. A .pt file holds one tensor or a tuple of them.
std::vector<Tensor> read_inputs(const std::string& path, const Model& model);
// Outputs: a tuple of tensors (.pt), or {name: tensor} (.json).
void write_outputs(const std::string& path, const std::vector<std::string>& names, const std::vector<Tensor>& tensors);
// node_io: {node: {op, backend, module_path, input_sources, inputs, outputs}}; a .pt file
// holds the tensors themselves, a .json file their dtypes and shapes only.
void write_node_io(const std::string& path, const std::vector<NodeIO>& records);

// node_io capture "stream": a sink that writes each node's record to `path` (.pt only,
// in write_node_io's format) as the node runs. finish() completes the file and returns
// the number of records; a stream not finished is finished when destroyed.
class NodeIoStream {
 public:
  virtual ~NodeIoStream() = default;
  virtual void write(const NodeEvent& event) = 0;
  virtual size_t finish() = 0;
};
std::unique_ptr<NodeIoStream> open_node_io_stream(const std::string& path);

}  // namespace switchyard::cli
